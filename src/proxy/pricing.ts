// What a proxied request cost, from list prices per model (USD per 1M tokens). Each usage bucket has its
// own rate: cache reads are cheap, Anthropic cache writes cost more than input, and OpenAI and Gemini do
// not bill cache writes separately (their rate is the input rate). A cost the provider reports itself
// (OpenRouter's `usage.cost`) wins. An unknown model is unpriced (undefined), never $0, so spend is not
// silently under-counted. The test mock's model names are not real models and are deliberately absent.
import type { MeteredUsage } from './usage-meter.js'

export interface ModelPrice {
  input: number
  output: number
  cacheRead: number
  cacheWrite: number
}

function price(input: number, output: number, cacheRead: number, cacheWrite = input): ModelPrice {
  return { input, output, cacheRead, cacheWrite }
}

// Keys are model-id prefixes; the longest matching prefix wins (`claude-sonnet-4` covers 4-5 and dated ids).
const PRICES: Record<string, ModelPrice> = {
  'claude-opus-4-5': price(5, 25, 0.5, 6.25),
  'claude-opus-4-1': price(15, 75, 1.5, 18.75),
  'claude-opus-4': price(15, 75, 1.5, 18.75),
  'claude-sonnet-4': price(3, 15, 0.3, 3.75),
  'claude-haiku-4-5': price(1, 5, 0.1, 1.25),
  'claude-3-5-haiku': price(0.8, 4, 0.08, 1),
  'claude-3-7-sonnet': price(3, 15, 0.3, 3.75),
  'gpt-5': price(1.25, 10, 0.125),
  'gpt-5-mini': price(0.25, 2, 0.025),
  'gpt-5-nano': price(0.05, 0.4, 0.005),
  'gpt-5-codex': price(1.25, 10, 0.125),
  'gpt-4.1': price(2, 8, 0.5),
  'gpt-4.1-mini': price(0.4, 1.6, 0.1),
  'gpt-4.1-nano': price(0.1, 0.4, 0.025),
  'gpt-4o': price(2.5, 10, 1.25),
  'gpt-4o-mini': price(0.15, 0.6, 0.075),
  o3: price(2, 8, 0.5),
  'o4-mini': price(1.1, 4.4, 0.275),
  'gemini-2.5-pro': price(1.25, 10, 0.31),
  'gemini-2.5-flash': price(0.3, 2.5, 0.075),
  'gemini-2.5-flash-lite': price(0.1, 0.4, 0.025),
  'gemini-2.0-flash': price(0.1, 0.4, 0.025),
}

const PREFIXES = Object.keys(PRICES).sort((a, b) => b.length - a.length)

/** True when `model` continues past `prefix` at a word boundary (so `o3` does not price `o30`). */
function startsAtBoundary(model: string, prefix: string): boolean {
  if (!model.startsWith(prefix)) return false
  const next = model[prefix.length]
  return next === undefined || !/[a-z0-9]/.test(next)
}

function normalizeModel(model: string): string {
  // Routers name models `vendor/model` (OpenRouter: `anthropic/claude-sonnet-4.5`, Gemini: `models/…`).
  let name = model.trim().toLowerCase()
  name = name.slice(name.lastIndexOf('/') + 1)
  // OpenRouter writes Claude versions with dots (`claude-opus-4.5`); Anthropic's ids use dashes.
  if (name.startsWith('claude-')) name = name.replace(/(\d)\.(\d)/g, '$1-$2')
  return name
}

/** Model names are few and every proxied request is priced: each name is looked up once. */
const pricesByModel = new Map<string, ModelPrice | undefined>()
const MAX_PRICED_MODELS = 1000

/** The list price of `model` by longest prefix, or undefined for a model we have no price for. */
export function priceFor(model: string): ModelPrice | undefined {
  if (pricesByModel.has(model)) return pricesByModel.get(model)
  const name = normalizeModel(model)
  const prefix = PREFIXES.find((candidate) => startsAtBoundary(name, candidate))
  const found = prefix === undefined ? undefined : PRICES[prefix]
  if (pricesByModel.size >= MAX_PRICED_MODELS) pricesByModel.clear()
  pricesByModel.set(model, found)
  return found
}

/** The cost in USD of one request, or undefined when it cannot be priced. */
export function costOf(usage: MeteredUsage): number | undefined {
  if (usage.providerCostUsd !== undefined) return usage.providerCostUsd
  const modelPrice = usage.model === undefined ? undefined : priceFor(usage.model)
  if (!modelPrice) return undefined
  const tokenDollarsPerMillion =
    usage.inputTokens * modelPrice.input +
    usage.outputTokens * modelPrice.output +
    usage.cacheReadTokens * modelPrice.cacheRead +
    usage.cacheWriteTokens * modelPrice.cacheWrite
  return tokenDollarsPerMillion / 1_000_000
}
