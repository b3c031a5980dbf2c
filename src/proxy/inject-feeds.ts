// Puts the feed block into a model request late, next to the final user turn, by splicing one new element
// into the raw body text. Every byte the client sent stays as it was (system, tools, cache_control,
// thinking signatures, unknown fields, big integers, formatting), so the prompt prefix up to the previous
// exchange stays cacheable even when the feed content changes between turns. Only the new element is
// serialized; `parsed` (the same body, already parsed) says where the turns are, json-spans says where
// their bytes are.
import type { ProxyFamily } from './families.js'
import { elementSpan, type JsonEdit, type JsonSpan, memberSpan, valueSpan } from './json-spans.js'

export interface InjectFeedsOptions {
  /** Chat Completions: a system message before the last user turn, or merged into that turn. */
  openaiPlacement: 'system' | 'user'
}

type JsonObject = Record<string, unknown>

function asObject(value: unknown): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as JsonObject)
    : undefined
}

function lastIndexWhere(items: unknown, test: (item: JsonObject) => boolean): number {
  if (!Array.isArray(items)) return -1
  for (let index = items.length - 1; index >= 0; index--) {
    const item = asObject(items[index])
    if (item && test(item)) return index
  }
  return -1
}

const isUserTurn = (item: JsonObject) => item.role === 'user'

// While a profile's feed values are cached every request injects the very same block: each family's
// element for it is serialized once (per shape and block), not per request.
const serialized = new Map<string, Map<string, string>>()
const MAX_SERIALIZED_BLOCKS = 16

function serializedOnce(shape: string, block: string, build: () => unknown): string {
  let byBlock = serialized.get(shape)
  if (!byBlock) serialized.set(shape, (byBlock = new Map()))
  let json = byBlock.get(block)
  if (json === undefined) {
    json = JSON.stringify(build())
    if (byBlock.size >= MAX_SERIALIZED_BLOCKS) byBlock.clear()
    byBlock.set(block, json)
  }
  return json
}

function insertAt(position: number, text: string): JsonEdit {
  return { start: position, end: position, text }
}

/** The raw span of element `index` of the array held by top-level member `key`. */
function topLevelElement(raw: string, key: string, index: number): JsonSpan | undefined {
  const array = valueSpan(raw, key)
  return array && elementSpan(raw, array, index)
}

function injectAnthropic(raw: string, body: JsonObject, block: string): JsonEdit | undefined {
  const index = lastIndexWhere(body.messages, isUserTurn)
  const turn = index === -1 ? undefined : topLevelElement(raw, 'messages', index)
  if (!turn) return undefined
  const message = serializedOnce('anthropic', block, () => ({
    role: 'user',
    content: [{ type: 'text', text: block }],
  }))
  return insertAt(turn.end, `,${message}`)
}

function injectOpenAiChat(
  raw: string,
  body: JsonObject,
  block: string,
  options: InjectFeedsOptions,
): JsonEdit | undefined {
  const index = lastIndexWhere(body.messages, isUserTurn)
  const turn = index === -1 ? undefined : topLevelElement(raw, 'messages', index)
  if (!turn) return undefined
  if (options.openaiPlacement === 'system')
    return insertAt(
      turn.start,
      `${serializedOnce('openai-system', block, () => ({ role: 'system', content: block }))},`,
    )

  const content = asObject((body.messages as unknown[])[index])?.content
  const contentSpan = memberSpan(raw, turn, 'content')
  if (!contentSpan) return undefined
  if (typeof content === 'string') {
    // Keep the client's own escaping of the old text: add the escaped block right after the opening quote.
    const escaped = serializedOnce('openai-text', block, () => `${block}\n\n`).slice(1, -1)
    return insertAt(contentSpan.start + 1, escaped)
  }
  if (Array.isArray(content)) {
    const part = serializedOnce('openai-part', block, () => ({ type: 'text', text: block }))
    return insertAt(contentSpan.start + 1, content.length > 0 ? `${part},` : part)
  }
  return undefined
}

function injectOpenAiResponses(
  raw: string,
  body: JsonObject,
  block: string,
  options: InjectFeedsOptions,
): JsonEdit | undefined {
  const message = serializedOnce(`responses-${options.openaiPlacement}`, block, () => ({
    type: 'message',
    role: options.openaiPlacement,
    content: [{ type: 'input_text', text: block }],
  }))
  const inputSpan = valueSpan(raw, 'input')
  if (!inputSpan) return undefined
  if (typeof body.input === 'string') {
    const original = raw.slice(inputSpan.start, inputSpan.end)
    return { ...inputSpan, text: `[${message},{"role":"user","content":${original}}]` }
  }
  const index = lastIndexWhere(body.input, isUserTurn)
  const item = index === -1 ? undefined : elementSpan(raw, inputSpan, index)
  if (!item) return undefined
  return insertAt(item.start, `${message},`)
}

function injectGemini(raw: string, body: JsonObject, block: string): JsonEdit | undefined {
  // Gemini treats a content without a role as the user's (single-turn requests often omit it).
  const index = lastIndexWhere(body.contents, (item) => item.role === 'user' || item.role === undefined)
  const turn = index === -1 ? undefined : topLevelElement(raw, 'contents', index)
  const partsSpan = turn && memberSpan(raw, turn, 'parts')
  if (!partsSpan || raw.charCodeAt(partsSpan.start) !== 0x5b) return undefined
  const part = serializedOnce('gemini', block, () => ({ text: block }))
  const parts = asObject((body.contents as unknown[])[index])?.parts
  const last =
    Array.isArray(parts) && parts.length > 0 ? elementSpan(raw, partsSpan, parts.length - 1) : undefined
  return last ? insertAt(last.end, `,${part}`) : insertAt(partsSpan.start + 1, part)
}

/**
 * Where the feed block goes into the request body: the edit that puts it at the family's place, or
 * undefined when the block is empty or the request has no place for it (no messages/contents/input, no
 * user turn).
 */
export function feedsEdit(
  family: ProxyFamily,
  raw: string,
  parsed: unknown,
  block: string,
  options: InjectFeedsOptions,
): JsonEdit | undefined {
  const body = asObject(parsed)
  if (block === '' || !body) return undefined
  switch (family) {
    case 'anthropic':
      return injectAnthropic(raw, body, block)
    case 'openai-chat':
      return injectOpenAiChat(raw, body, block, options)
    case 'openai-responses':
      return injectOpenAiResponses(raw, body, block, options)
    case 'gemini':
      return injectGemini(raw, body, block)
  }
}
