// Token counts as the CLIs report them, brought to our four disjoint buckets (input without cache,
// output, cache reads, cache writes) so that totals add up without counting a token twice.
import type { UsageEvent, UsageTotals } from '../../core/events.js'

/** A token count the CLI reported, or 0 when it is missing, negative or not a number. */
export function tokenCount(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0
}

/** A cost in USD, or undefined when the CLI gave none we can use. */
export function costUsd(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined
}

export function usageTotals(
  inputTokens: number,
  outputTokens: number,
  cacheReadTokens: number,
  cacheWriteTokens: number,
  cost?: number,
): UsageTotals {
  const totals: UsageTotals = {
    inputTokens: Math.max(0, inputTokens),
    outputTokens: Math.max(0, outputTokens),
    cacheReadTokens: Math.max(0, cacheReadTokens),
    cacheWriteTokens: Math.max(0, cacheWriteTokens),
  }
  if (cost !== undefined) totals.costUsd = cost
  return totals
}

export function addUsage(total: UsageTotals | undefined, usage: UsageTotals): UsageTotals {
  if (!total) return { ...usage }
  const cost =
    total.costUsd === undefined && usage.costUsd === undefined
      ? undefined
      : (total.costUsd ?? 0) + (usage.costUsd ?? 0)
  return usageTotals(
    total.inputTokens + usage.inputTokens,
    total.outputTokens + usage.outputTokens,
    total.cacheReadTokens + usage.cacheReadTokens,
    total.cacheWriteTokens + usage.cacheWriteTokens,
    cost,
  )
}

export function agentUsageEvent(usage: UsageTotals, model?: string): UsageEvent {
  return { type: 'usage', source: 'agent', ...(model ? { model } : {}), ...usage }
}

/** The one key of a per-model breakdown (`modelUsage`, `stats.models`), when there is exactly one. */
export function singleKey(object: Record<string, unknown> | undefined): string | undefined {
  const keys = object ? Object.keys(object) : []
  return keys.length === 1 ? keys[0] : undefined
}
