// The proxy's request log: what each model request of a run (or of a `hangar env` token) carried and
// cost. Budgets add up `cost_usd` per profile over a window; run totals add up a run's rows.
import type { UsageTotals } from '../../core/events.js'
import type { ProxyRequestsTable } from '../schema.js'
import { fromJson, type RepositoryContext, toCount } from './context.js'
import { sumsOf, USAGE_SUMS } from '../proxy-requests-appender.js'

export interface ProxyRequestFeed {
  name: string
  source: string
  status: string
  bytes: number
  truncated: boolean
  refreshedAt?: string
  reason?: string
}

export interface ProxyRequestRecord {
  id: string
  runId: string | null
  tokenId: string
  profile: string
  family: string
  method: string
  path: string
  model: string | null
  stream: boolean
  status: number
  feeds: ProxyRequestFeed[]
  usage: UsageTotals
  costUsd: number | null
  error: string | null
  startedAt: string
  durationMs: number
}

export type NewProxyRequest = Omit<ProxyRequestRecord, 'usage'> & { usage: UsageTotals }

function toRecord(row: ProxyRequestsTable): ProxyRequestRecord {
  return {
    id: row.id,
    runId: row.run_id,
    tokenId: row.token_id,
    profile: row.profile,
    family: row.family,
    method: row.method,
    path: row.path,
    model: row.model,
    stream: row.stream === 1,
    status: row.status,
    feeds: fromJson<ProxyRequestFeed[]>(row.feeds) ?? [],
    usage: {
      inputTokens: row.input_tokens,
      outputTokens: row.output_tokens,
      cacheReadTokens: row.cache_read_tokens,
      cacheWriteTokens: row.cache_write_tokens,
      ...(row.cost_usd !== null && { costUsd: row.cost_usd }),
    },
    costUsd: row.cost_usd,
    error: row.error,
    startedAt: row.started_at,
    durationMs: row.duration_ms,
  }
}

// Requests while a profile's feed values are cached share one summary list (feeds/feed-blocks): it is
// serialized once.
const feedsJson = new WeakMap<readonly unknown[], string>()

function feedsColumn(feeds: readonly unknown[]): string | null {
  if (feeds.length === 0) return null
  let json = feedsJson.get(feeds)
  if (json === undefined) feedsJson.set(feeds, (json = JSON.stringify(feeds)))
  return json
}

function toRow(userId: string, input: NewProxyRequest) {
  return {
    id: input.id,
    user_id: userId,
    run_id: input.runId,
    token_id: input.tokenId,
    profile: input.profile,
    family: input.family,
    method: input.method,
    path: input.path,
    model: input.model,
    stream: input.stream ? 1 : 0,
    status: input.status,
    feeds: feedsColumn(input.feeds),
    input_tokens: input.usage.inputTokens,
    output_tokens: input.usage.outputTokens,
    cache_read_tokens: input.usage.cacheReadTokens,
    cache_write_tokens: input.usage.cacheWriteTokens,
    cost_usd: input.costUsd,
    error: input.error,
    started_at: input.startedAt,
    duration_ms: input.durationMs,
  }
}

/**
 * What rows inserted through Kysely add to the per-minute sums, the spend budgets read and the usage the
 * report reads (the appenders do it themselves).
 */
async function addSums(context: RepositoryContext, rows: readonly ProxyRequestsTable[]): Promise<void> {
  const { spend, usage } = sumsOf(rows)
  if (usage.length > 0)
    await context.db
      .insertInto('proxy_usage')
      .values(usage)
      .onConflict((conflict) =>
        conflict
          .columns(['user_id', 'minute', 'profile', 'run_id'])
          .doUpdateSet((eb) =>
            Object.fromEntries(
              USAGE_SUMS.map((column) => [
                column,
                eb(`proxy_usage.${column}`, '+', eb.ref(`excluded.${column}`)),
              ]),
            ),
          ),
      )
      .execute()
  if (spend.length === 0) return
  await context.db
    .insertInto('proxy_spend')
    .values(spend)
    .onConflict((conflict) =>
      conflict
        .columns(['user_id', 'profile', 'minute'])
        .doUpdateSet((eb) => ({ cost_usd: eb('proxy_spend.cost_usd', '+', eb.ref('excluded.cost_usd')) })),
    )
    .execute()
}

/** Rows per INSERT: 20 columns each stays far under SQLite's and PostgreSQL's bound-parameter limits. */
const ROWS_PER_INSERT = 200

/**
 * The request log's writer side, for the batches the proxy writes behind: every user's rows of a batch in
 * one statement, all or none — the engine's own reused statement outside a transaction, else (inside one)
 * multi-row INSERTs. Unscoped because each row names its owner.
 */
export function createProxyRequestLog(context: RepositoryContext) {
  return {
    async recordMany(rows: readonly { userId: string; row: NewProxyRequest }[]): Promise<void> {
      if (context.appendProxyRequests)
        return context.appendProxyRequests(rows.map(({ userId, row }) => toRow(userId, row)))
      for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
        const values = rows.slice(start, start + ROWS_PER_INSERT).map(({ userId, row }) => toRow(userId, row))
        await context.db.insertInto('proxy_requests').values(values).execute()
        await addSums(context, values)
      }
    },
  }
}

export function createProxyRequestsRepository(context: RepositoryContext, userId: string) {
  const { db } = context
  return {
    async record(input: NewProxyRequest): Promise<void> {
      const row = toRow(userId, input)
      await db.insertInto('proxy_requests').values(row).execute()
      await addSums(context, [row])
    },
    async listForRun(runId: string): Promise<ProxyRequestRecord[]> {
      const rows = await db
        .selectFrom('proxy_requests')
        .selectAll()
        .where('user_id', '=', userId)
        .where('run_id', '=', runId)
        .orderBy('started_at')
        .orderBy('id')
        .execute()
      return rows.map(toRecord)
    },
    /** A run's usage through the proxy; costUsd only when every priced request was priced. */
    async totalsForRun(runId: string): Promise<{ usage: UsageTotals; requests: number }> {
      const row = await db
        .selectFrom('proxy_requests')
        .select((eb) => [
          eb.fn.countAll<number>().as('requests'),
          eb.fn.sum<number>('input_tokens').as('input'),
          eb.fn.sum<number>('output_tokens').as('output'),
          eb.fn.sum<number>('cache_read_tokens').as('cacheRead'),
          eb.fn.sum<number>('cache_write_tokens').as('cacheWrite'),
          eb.fn.sum<number>('cost_usd').as('cost'),
          eb.fn.count<number>('cost_usd').as('priced'),
        ])
        .where('user_id', '=', userId)
        .where('run_id', '=', runId)
        .where('status', '<', 400)
        .executeTakeFirstOrThrow()
      const requests = toCount(row.requests)
      const usage: UsageTotals = {
        inputTokens: toCount(row.input),
        outputTokens: toCount(row.output),
        cacheReadTokens: toCount(row.cacheRead),
        cacheWriteTokens: toCount(row.cacheWrite),
      }
      if (requests > 0 && toCount(row.priced) === requests) usage.costUsd = Number(row.cost)
      return { usage, requests }
    },
    /** Dollars a profile spent through the proxy since `since` (ISO-8601), for its budget. */
    async spentSince(profile: string, since: string): Promise<number> {
      // Per minute (proxy_spend): the minute `since` falls in counts whole, so a budget errs on the safe side.
      const row = await db
        .selectFrom('proxy_spend')
        .select((eb) => eb.fn.sum<number>('cost_usd').as('spent'))
        .where('user_id', '=', userId)
        .where('profile', '=', profile)
        .where('minute', '>=', since.slice(0, 16))
        .executeTakeFirstOrThrow()
      return Number(row.spent ?? 0)
    },
  }
}

export type ProxyRequestsRepository = ReturnType<typeof createProxyRequestsRepository>
