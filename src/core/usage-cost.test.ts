// The agent's own reported cost was dropped when the price table lacked the model (Runs showed "—",
// Usage "$0.00"): the agent's figure stands in, marked, and one "unknown" marker otherwise.
import { describe, expect, it } from 'vitest'
import { describeCostSummary, describeRunCost, runUsage } from './usage-cost.js'

const tokens = { inputTokens: 100, outputTokens: 10, cacheReadTokens: 5, cacheWriteTokens: 1 }
const dollars = (usd: number) => `$${usd.toFixed(2)}`

describe('runUsage', () => {
  it("takes the proxy's cost when it priced every request", () => {
    expect(runUsage({ ...tokens, costUsd: 0.5 }, { ...tokens, inputTokens: 1, costUsd: 0.7 })).toEqual({
      ...tokens,
      costUsd: 0.5,
      costSource: 'proxy',
    })
  })

  it("uses the agent's own cost, with the proxy's tokens, when the proxy could not price the model", () => {
    expect(runUsage(tokens, { ...tokens, inputTokens: 1, costUsd: 0.7 })).toEqual({
      ...tokens,
      costUsd: 0.7,
      costSource: 'agent',
    })
    expect(runUsage(undefined, { ...tokens, costUsd: 0.3 })).toEqual({
      ...tokens,
      costUsd: 0.3,
      costSource: 'agent',
    })
  })

  it('says unknown when neither priced it, and nothing without usage', () => {
    expect(runUsage(tokens, { ...tokens })).toEqual({ ...tokens, costSource: 'unknown' })
    expect(runUsage(undefined, tokens)).toEqual({ ...tokens, costSource: 'unknown' })
    expect(runUsage(undefined, undefined)).toBeUndefined()
  })
})

describe('describeRunCost', () => {
  it('marks an agent-reported cost and says unknown with one marker', () => {
    expect(describeRunCost(0.12, 'proxy', dollars)).toBe('$0.12')
    expect(describeRunCost(0.12, undefined, dollars)).toBe('$0.12')
    expect(describeRunCost(0.12, 'agent', dollars)).toBe('$0.12 (agent)')
    expect(describeRunCost(null, undefined, dollars)).toBe('unknown')
    expect(describeRunCost(undefined, 'unknown', dollars)).toBe('unknown')
  })
})

describe('describeCostSummary', () => {
  it('never shows a group nobody priced as $0', () => {
    expect(describeCostSummary({ costUsd: 0, agentCostUsd: 0, unpriced: 3 }, dollars)).toBe('unknown')
    expect(describeCostSummary({ costUsd: 0, agentCostUsd: 0, unpriced: 0 }, dollars)).toBe('$0.00')
    expect(describeCostSummary({ costUsd: 1.2, agentCostUsd: 0, unpriced: 2 }, dollars)).toBe(
      '$1.20 + unknown',
    )
    expect(describeCostSummary({ costUsd: 1.2, agentCostUsd: 1.2, unpriced: 0 }, dollars)).toBe(
      '$1.20 (agent)',
    )
    expect(describeCostSummary({ costUsd: 1.2, agentCostUsd: 0.2, unpriced: 0 }, dollars)).toBe(
      '$1.20 (part agent)',
    )
  })
})
