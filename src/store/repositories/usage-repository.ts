// Usage over time, per agent and UTC day, for GET /api/usage. Two sources, never counted twice: every
// request the proxy metered (runs and `hangar env` tokens alike), and the runs that were not proxied but
// reported their own usage. `substr(…, 1, 10)` of an ISO-8601 UTC timestamp is its day on both engines.
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
  requests: 0,
})

/** Adds `source` into `target`, field by field. */
export function addUsage(target: UsageSums, source: UsageSums): void {
  target.inputTokens += source.inputTokens
  target.outputTokens += source.outputTokens
  target.cacheReadTokens += source.cacheReadTokens
  target.cacheWriteTokens += source.cacheWriteTokens
  target.costUsd += source.costUsd
  target.requests += source.requests
}

export function createUsageRepository(context: RepositoryContext, userId: string) {
  const { db } = context
  return {
    /** Cells of the usage between `from` and `to` (ISO-8601, both inclusive), in no particular order. */
    async cells(range: { from: string; to: string }): Promise<UsageCell[]> {
      const proxied = await db
        .selectFrom('proxy_requests')
        .select((eb) => [
          'profile',
          eb.fn<string>('substr', ['started_at', eb.val(1), eb.val(10)]).as('day'),
          eb.fn.sum<number>('input_tokens').as('input'),
          eb.fn.sum<number>('output_tokens').as('output'),
          eb.fn.sum<number>('cache_read_tokens').as('cacheRead'),
          eb.fn.sum<number>('cache_write_tokens').as('cacheWrite'),
          eb.fn.sum<number>('cost_usd').as('cost'),
          eb.fn.countAll<number>().as('requests'),
        ])
        .where('user_id', '=', userId)
        .where('status', '<', 400)
        .where('started_at', '>=', range.from)
        .where('started_at', '<=', range.to)
        .groupBy(['profile', 'day'])
        .execute()
      const proxiedRuns = await db
        .selectFrom('proxy_requests')
        .select((eb) => [
          'profile',
          'run_id',
          eb.fn<string>('substr', ['started_at', eb.val(1), eb.val(10)]).as('day'),
        ])
        .distinct()
        .where('user_id', '=', userId)
        .where('status', '<', 400)
        .where('run_id', 'is not', null)
        .where('started_at', '>=', range.from)
        .where('started_at', '<=', range.to)
        .execute()
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
      for (const row of proxied) {
        addUsage(cellOf(row.profile, row.day), {
          inputTokens: toCount(row.input),
          outputTokens: toCount(row.output),
          cacheReadTokens: toCount(row.cacheRead),
          cacheWriteTokens: toCount(row.cacheWrite),
          costUsd: Number(row.cost ?? 0),
          requests: toCount(row.requests),
        })
      }
      for (const row of proxiedRuns) cellOf(row.profile, row.day).runIds.push(row.run_id!)
      for (const row of unproxied) {
        const usage = fromJson<UsageTotals>(row.usage)
        if (!usage) continue
        const cell = cellOf(row.agent, row.created_at.slice(0, 10))
        addUsage(cell, { ...usage, costUsd: row.cost_usd ?? usage.costUsd ?? 0, requests: 0 })
        cell.runIds.push(row.id)
      }
      return [...cells.values()]
    },
  }
}

export type UsageRepository = ReturnType<typeof createUsageRepository>
