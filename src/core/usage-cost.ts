// A run's cost, and how the CLI and the web UI say it: one place decides which figure a run's totals
// carry (the proxy's metering, else the agent's own report) and one marker says a cost is unknown.
import type { CostSource, UsageTotals } from './events.js'

/**
 * A run's totals: tokens from the proxy when it saw the run (they cover every request), else from the
 * agent. The cost is the proxy's when it priced every request; else the agent's own figure; else unknown.
 */
export function runUsage(
  metered: UsageTotals | undefined,
  reported: UsageTotals | undefined,
): UsageTotals | undefined {
  const tokens = metered ?? reported
  if (!tokens) return undefined
  const { costUsd: _cost, costSource: _source, ...counts } = tokens
  if (metered?.costUsd !== undefined) return { ...counts, costUsd: metered.costUsd, costSource: 'proxy' }
  if (reported?.costUsd !== undefined) return { ...counts, costUsd: reported.costUsd, costSource: 'agent' }
  return { ...counts, costSource: 'unknown' }
}

/** The marker for a cost nobody could price, the same everywhere (never "$0.00", never "—"). */
export const UNKNOWN_COST = 'unknown'

/**
 * A run's cost as people read it: `$0.1234`, `$0.1234 (agent)` when the agent reported it, or `unknown`.
 * `format` renders dollars (the CLI and the web UI round differently).
 */
export function describeRunCost(
  costUsd: number | null | undefined,
  source: CostSource | undefined,
  format: (usd: number) => string,
): string {
  if (costUsd === null || costUsd === undefined || source === 'unknown') return UNKNOWN_COST
  return source === 'agent' ? `${format(costUsd)} (agent)` : format(costUsd)
}

/** Cost of a group of usage (GET /api/usage): the priced part, and how much of it could not be priced. */
export interface CostSummary {
  costUsd: number
  /** The part of costUsd the agents reported themselves. */
  agentCostUsd: number
  /** Requests (and unproxied runs) with no cost at all: neither priced nor reported. */
  unpriced: number
}

/** `$1.20`, `$1.20 (agent)`, `$1.20 + unknown`, or `unknown` when nothing of it could be priced. */
export function describeCostSummary(summary: CostSummary, format: (usd: number) => string): string {
  const priced = summary.costUsd > 0 || summary.unpriced === 0
  if (!priced) return UNKNOWN_COST
  const agent =
    summary.agentCostUsd <= 0 ? '' : summary.agentCostUsd >= summary.costUsd ? ' (agent)' : ' (part agent)'
  return `${format(summary.costUsd)}${agent}${summary.unpriced > 0 ? ` + ${UNKNOWN_COST}` : ''}`
}
