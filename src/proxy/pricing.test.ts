import { describe, expect, it } from 'vitest'
import { costOf, priceFor } from './pricing.js'
import type { MeteredUsage } from './usage-meter.js'

const usage = (model: string | undefined, tokens: Partial<MeteredUsage> = {}): MeteredUsage => ({
  ...(model !== undefined && { model }),
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  ...tokens,
})

describe('pricing', () => {
  it('prices every bucket at its own rate', () => {
    const cost = costOf(
      usage('claude-opus-4-5-20251101', {
        inputTokens: 1_000_000,
        outputTokens: 100_000,
        cacheReadTokens: 2_000_000,
        cacheWriteTokens: 400_000,
      }),
    )
    // 5 + 0.1 × 25 + 2 × 0.5 + 0.4 × 6.25
    expect(cost).toBeCloseTo(5 + 2.5 + 1 + 2.5, 10)
  })

  it('bills OpenAI and Gemini cache writes at the input rate', () => {
    expect(priceFor('gpt-4.1')).toEqual({ input: 2, output: 8, cacheRead: 0.5, cacheWrite: 2 })
    expect(priceFor('gemini-2.5-pro')).toEqual({ input: 1.25, output: 10, cacheRead: 0.31, cacheWrite: 1.25 })
    const cost = costOf(usage('gpt-5', { inputTokens: 1000, cacheReadTokens: 8000, outputTokens: 500 }))
    expect(cost).toBeCloseTo((1000 * 1.25 + 8000 * 0.125 + 500 * 10) / 1_000_000, 12)
  })

  it('matches the longest prefix', () => {
    expect(priceFor('claude-sonnet-4-5-20250929')).toEqual(priceFor('claude-sonnet-4'))
    expect(priceFor('claude-sonnet-4-5-20250929')?.input).toBe(3)
    expect(priceFor('claude-opus-4-5-20251101')?.input).toBe(5)
    expect(priceFor('claude-opus-4-1-20250805')?.input).toBe(15)
    expect(priceFor('claude-opus-4-20250514')?.input).toBe(15)
    expect(priceFor('gpt-5-mini-2025-08-07')?.input).toBe(0.25)
    expect(priceFor('gpt-5-2025-08-07')?.input).toBe(1.25)
    expect(priceFor('gpt-4o-mini')?.input).toBe(0.15)
    expect(priceFor('gpt-4o-2024-08-06')?.input).toBe(2.5)
    expect(priceFor('gemini-2.5-flash-lite')?.input).toBe(0.1)
    expect(priceFor('gemini-2.5-flash-preview-09-2025')?.input).toBe(0.3)
  })

  it('strips a vendor prefix and reads dotted Claude versions', () => {
    expect(priceFor('openai/gpt-4.1-mini')?.input).toBe(0.4)
    expect(priceFor('models/gemini-2.0-flash')?.input).toBe(0.1)
    expect(priceFor('anthropic/claude-haiku-4.5')?.input).toBe(1)
    expect(priceFor('anthropic/claude-opus-4.5')?.input).toBe(5)
  })

  it('leaves unknown models unpriced, never $0', () => {
    for (const model of ['mock-model', 'claude-mock', 'gpt-mock', 'gemini-mock', 'llama-3.3-70b', 'o30'])
      expect(priceFor(model)).toBeUndefined()
    expect(costOf(usage('claude-mock', { inputTokens: 1000 }))).toBeUndefined()
    expect(costOf(usage(undefined, { inputTokens: 1000 }))).toBeUndefined()
  })

  it('uses the cost the provider reported over the table', () => {
    expect(
      costOf(usage('anthropic/claude-sonnet-4.5', { inputTokens: 1_000_000, providerCostUsd: 0.0123 })),
    ).toBe(0.0123)
    expect(costOf(usage(undefined, { providerCostUsd: 0.5 }))).toBe(0.5)
  })
})
