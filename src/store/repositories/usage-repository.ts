// Usage over time, per agent and UTC day, for GET /api/usage. Two sources, never counted twice: every
// request the proxy metered (runs and `hangar env` tokens alike, summed per minute in proxy_usage), and the
// runs that were not proxied but reported their own usage. A proxied run whose cost is the agent's own
// figure (the proxy could not price all of its requests) counts that figure once, not its requests' costs.
// A request or run nobody priced counts in `unpriced`, never as $0. `substr(…, 1, 10)` of an ISO-8601 UTC
// timestamp is its day on both engines.
import type { UsageNumbers } from '../../core/api-types.js'
import type { UsageTotals } from '../../core/events.js'
import { fromJson, type RepositoryContext, toCount } from './context.js'

/** Usage of one agent on one UTC day. */
export interface UsageCell extends Omit<UsageNumbers, 'runs'> {
  agent: string
  /** YYYY-MM-DD (UTC). */
  day: string
  /** Run ids that contributed (proxied runs through their requests, plus unproxied runs). */
  runIds: string[]
}

type UsageSums = Omit<UsageNumbers, 'runs'>

export const zeroUsage = (): UsageSums => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costUsd: 0,
  agentCostUsd: 0,
  unpriced: 0,
  requests: 0,
})

/** Adds `source` into `target`, field by field. */
export function addUsage(target: UsageSums, source: UsageSums): void {
  target.inputTokens += source.inputTokens
  target.outputTokens += source.outputTokens
  target.cacheReadTokens += source.cacheReadTokens
  target.cacheWriteTokens += source.cacheWriteTokens
  target.costUsd += source.costUsd
  target.agentCostUsd += source.agentCostUsd
  target.unpriced += source.unpriced
  target.requests += source.requests
}

export function createUsageRepository(context: RepositoryContext, userId: string) {
  const { db } = context
  return {
    /** Cells of the usage between `from` and `to` (ISO-8601, both inclusive), in no particular order. */
    async cells(range: { from: string; to: string }): Promise<UsageCell[]> {
      // Per run ('': a `hangar env` token's requests), so a run costed by its agent can be told apart. From
      // the per-minute sums (proxy_usage), so the minutes `from` and `to` fall in count whole.
      const proxied = (
        await db
          .selectFrom('proxy_usage')
          .select((eb) => [
            'profile',
            'run_id',
            eb.fn<string>('substr', ['minute', eb.val(1), eb.val(10)]).as('day'),
            eb.fn.sum<number>('input_tokens').as('input'),
            eb.fn.sum<number>('output_tokens').as('output'),
            eb.fn.sum<number>('cache_read_tokens').as('cacheRead'),
            eb.fn.sum<number>('cache_write_tokens').as('cacheWrite'),
            eb.fn.sum<number>('cost_usd').as('cost'),
            eb.fn.sum<number>('priced').as('priced'),
            eb.fn.sum<number>('requests').as('requests'),
          ])
          .where('user_id', '=', userId)
          .where('minute', '>=', range.from.slice(0, 16))
          .where('minute', '<=', range.to.slice(0, 16))
          .groupBy(['profile', 'run_id', 'day'])
          .execute()
      ).map((row) => ({ ...row, run_id: row.run_id === '' ? null : row.run_id }))
      const proxiedRunIds = [...new Set(proxied.flatMap((row) => (row.run_id ? [row.run_id] : [])))]
      const agentCosted = await agentCostedRuns(proxiedRunIds)
      // Runs the proxy never saw: their totals are what the agent itself reported.
      const unproxied = await db
        .selectFrom('runs')
        .select(['id', 'agent', 'created_at', 'usage', 'cost_usd'])
        .where('user_id', '=', userId)
        .where('usage', 'is not', null)
        .where('created_at', '>=', range.from)
        .where('created_at', '<=', range.to)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('proxy_requests').select('id').whereRef('proxy_requests.run_id', '=', 'runs.id'),
            ),
          ),
        )
        .execute()

      const cells = new Map<string, UsageCell>()
      const cellOf = (agent: string, day: string): UsageCell => {
        const key = `${agent}\u0000${day}`
        let cell = cells.get(key)
        if (!cell) {
          cell = { agent, day, ...zeroUsage(), runIds: [] }
          cells.set(key, cell)
        }
        return cell
      }
      const costedOnce = new Set<string>()
      for (const row of proxied) {
        const cell = cellOf(row.profile, row.day)
        const requests = toCount(row.requests)
        const agentCost = row.run_id ? agentCosted.get(row.run_id) : undefined
        // An agent-costed run's figure covers all of its requests: counted once, on its first day here.
        const cost =
          agentCost === undefined ? Number(row.cost ?? 0) : costedOnce.has(row.run_id!) ? 0 : agentCost
        if (agentCost !== undefined) costedOnce.add(row.run_id!)
        addUsage(cell, {
          inputTokens: toCount(row.input),
          outputTokens: toCount(row.output),
          cacheReadTokens: toCount(row.cacheRead),
          cacheWriteTokens: toCount(row.cacheWrite),
          costUsd: cost,
          agentCostUsd: agentCost === undefined ? 0 : cost,
          unpriced: agentCost === undefined ? requests - toCount(row.priced) : 0,
          requests,
        })
        if (row.run_id && !cell.runIds.includes(row.run_id)) cell.runIds.push(row.run_id)
      }
      for (const row of unproxied) {
        const usage = fromJson<UsageTotals>(row.usage)
        if (!usage) continue
        const cell = cellOf(row.agent, row.created_at.slice(0, 10))
        const cost = row.cost_usd ?? usage.costUsd
        addUsage(cell, {
          ...usage,
          costUsd: cost ?? 0,
          agentCostUsd: cost ?? 0,
          unpriced: cost === undefined ? 1 : 0,
          requests: 0,
        })
        cell.runIds.push(row.id)
      }
      return [...cells.values()]
    },
  }

  /** Proxied runs whose cost is their agent's own figure (costSource "agent"), by id. */
  async function agentCostedRuns(runIds: string[]): Promise<Map<string, number>> {
    const costed = new Map<string, number>()
    // In slices: an IN list stays well under both engines' limits on bound parameters.
    for (let index = 0; index < runIds.length; index += 500) {
      const rows = await db
        .selectFrom('runs')
        .select(['id', 'usage', 'cost_usd'])
        .where('user_id', '=', userId)
        .where('id', 'in', runIds.slice(index, index + 500))
        .where('cost_usd', 'is not', null)
        .execute()
      for (const row of rows)
        if (fromJson<UsageTotals>(row.usage)?.costSource === 'agent') costed.set(row.id, Number(row.cost_usd))
    }
    return costed
  }
}

export type UsageRepository = ReturnType<typeof createUsageRepository>
