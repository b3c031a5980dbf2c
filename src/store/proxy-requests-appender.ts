// The proxy's request log, written behind in batches (runs/request-log-writer), on the engine's own driver
// rather than a Kysely multi-row INSERT built and compiled anew for every batch. On SQLite prepared INSERTs
// of 32 rows (and one for the rest) inside one transaction, taken through Kysely's one connection so it
// never lands inside a transaction in progress; on PostgreSQL one COPY, with the statements that complete
// it, in one message.
// Either way a batch lands whole or not at all, with what it adds to proxy_spend.
// The SQLite batch runs on the daemon's thread on purpose. Handing it to a worker thread with a connection
// of its own (measured in issue 19 with scripts/bench-proxy-ab.mjs, against the build before) cost 4-7 %
// of the proxy's throughput and 5-10 % more CPU per request on two cores: with no idle core, the inserts
// cost the same there, plus the hand-over (a copy of the rows, two thread wake-ups and their system calls).
import type SqliteDatabase from 'better-sqlite3'
import type { Kysely } from 'kysely'
import pg from 'pg'
import { copyField, copyFromMemory, CopyRows } from './postgres-copy.js'
import { createChunkedInsert } from './sqlite-chunked-insert.js'
import type { Database, ProxyRequestsTable, ProxySpendTable, ProxyUsageTable } from './schema.js'

const { escapeLiteral } = pg

export type ProxyRequestsAppender = (rows: readonly ProxyRequestsTable[]) => Promise<void>

export const COLUMNS = [
  'id',
  'user_id',
  'run_id',
  'token_id',
  'profile',
  'family',
  'method',
  'path',
  'model',
  'stream',
  'status',
  'feeds',
  'input_tokens',
  'output_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'cost_usd',
  'error',
  'started_at',
  'duration_ms',
] as const satisfies readonly (keyof ProxyRequestsTable)[]

const INTO = `INSERT INTO proxy_requests (${COLUMNS.join(', ')})`

type RunSpend = ProxySpendTable & { run_id: string | null }

/**
 * What a batch adds to the per-minute sums, in one pass over its rows, so it makes one upsert per minute it
 * spans, not one per request:
 * - `spend`, to proxy_spend, which budgets read (migration 0018): every priced request, per user, profile and
 *   minute. `spendByRun` keeps each run's sum apart too (with its run_id), for a writer that counts a run's
 *   spend only while the run is there.
 * - `usage`, to proxy_usage, which the usage report reads (migration 0022): the answered requests (status <
 *   400), per user, minute, profile and run (run_id '' for none).
 */
export function sumsOf(rows: readonly ProxyRequestsTable[]): {
  spend: ProxySpendTable[]
  usage: ProxyUsageTable[]
}
export function sumsOf(
  rows: readonly ProxyRequestsTable[],
  options: { spendByRun: true },
): { spend: RunSpend[]; usage: ProxyUsageTable[] }
export function sumsOf(
  rows: readonly ProxyRequestsTable[],
  options: { spendByRun?: boolean } = {},
): { spend: (ProxySpendTable & { run_id?: string | null })[]; usage: ProxyUsageTable[] } {
  const spends = new Map<string, ProxySpendTable & { run_id?: string | null }>()
  const usages = new Map<string, ProxyUsageTable>()
  for (const row of rows) {
    const minute = row.started_at.slice(0, 16)
    const runId = row.run_id ?? ''
    const priced = row.cost_usd !== null && row.cost_usd !== undefined
    if (priced) {
      const key = `${row.user_id}\0${row.profile}\0${minute}${options.spendByRun ? `\0${runId}` : ''}`
      const spend = spends.get(key)
      if (spend) spend.cost_usd += row.cost_usd!
      else
        spends.set(key, {
          user_id: row.user_id,
          profile: row.profile,
          minute,
          cost_usd: row.cost_usd!,
          ...(options.spendByRun && { run_id: row.run_id }),
        })
    }
    if (row.status >= 400) continue
    const key = `${row.user_id}\0${minute}\0${row.profile}\0${runId}`
    let usage = usages.get(key)
    if (!usage) {
      usage = {
        user_id: row.user_id,
        minute,
        profile: row.profile,
        run_id: runId,
        input_tokens: 0,
        output_tokens: 0,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        cost_usd: 0,
        priced: 0,
        requests: 0,
      }
      usages.set(key, usage)
    }
    usage.input_tokens += row.input_tokens ?? 0
    usage.output_tokens += row.output_tokens ?? 0
    usage.cache_read_tokens += row.cache_read_tokens ?? 0
    usage.cache_write_tokens += row.cache_write_tokens ?? 0
    if (priced) {
      usage.cost_usd += row.cost_usd!
      usage.priced++
    }
    usage.requests++
  }
  return { spend: [...spends.values()], usage: [...usages.values()] }
}

/** proxy_usage's columns, in the order the appenders give their values. */
export const USAGE_COLUMNS = [
  'user_id',
  'minute',
  'profile',
  'run_id',
  'input_tokens',
  'output_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'cost_usd',
  'priced',
  'requests',
] as const satisfies readonly (keyof ProxyUsageTable)[]

/** The sums' columns: a row already there adds the new one's. */
export const USAGE_SUMS = USAGE_COLUMNS.slice(4)

const ADD_USAGE =
  'ON CONFLICT (user_id, minute, profile, run_id) DO UPDATE SET ' +
  USAGE_SUMS.map((column) => `${column} = proxy_usage.${column} + excluded.${column}`).join(', ')

const ADD_SPEND =
  'ON CONFLICT (user_id, profile, minute) DO UPDATE SET cost_usd = proxy_spend.cost_usd + excluded.cost_usd'

/** Rows per INSERT on SQLite: a batch of a few hundred takes a tenth less than with one statement per row. */
const SQLITE_ROWS_PER_INSERT = 32

/** A row's values in COLUMNS order, into `values` from `at` (named, not looked up by key: the hot loop). */
function putValues(row: ProxyRequestsTable, values: unknown[], at: number): void {
  values[at] = row.id
  values[at + 1] = row.user_id
  values[at + 2] = row.run_id
  values[at + 3] = row.token_id
  values[at + 4] = row.profile
  values[at + 5] = row.family
  values[at + 6] = row.method
  values[at + 7] = row.path
  values[at + 8] = row.model
  values[at + 9] = row.stream
  values[at + 10] = row.status
  values[at + 11] = row.feeds
  values[at + 12] = row.input_tokens
  values[at + 13] = row.output_tokens
  values[at + 14] = row.cache_read_tokens
  values[at + 15] = row.cache_write_tokens
  values[at + 16] = row.cost_usd
  values[at + 17] = row.error
  values[at + 18] = row.started_at
  values[at + 19] = row.duration_ms
}

export function createSqliteProxyRequestsAppender(
  db: Kysely<Database>,
  sqlite: SqliteDatabase.Database,
  options: { afterCommit?: () => void } = {},
): ProxyRequestsAppender {
  // Prepared on first use: the table exists only once the migrations have run.
  let insertAll: ((rows: readonly ProxyRequestsTable[]) => void) | undefined
  const prepare = () => {
    const inserts = createChunkedInsert(sqlite, INTO, COLUMNS.length, SQLITE_ROWS_PER_INSERT)
    const addSpend = sqlite.prepare(
      `INSERT INTO proxy_spend (user_id, profile, minute, cost_usd) VALUES (?, ?, ?, ?) ${ADD_SPEND}`,
    )
    const addUsage = sqlite.prepare(
      `INSERT INTO proxy_usage (${USAGE_COLUMNS.join(', ')}) VALUES (${USAGE_COLUMNS.map(() => '?').join(', ')}) ${ADD_USAGE}`,
    )
    return sqlite.transaction((rows: readonly ProxyRequestsTable[]) => {
      for (const row of rows) putValues(row, inserts.values, inserts.next())
      inserts.end()
      const sums = sumsOf(rows)
      for (const spend of sums.spend) addSpend.run(spend.user_id, spend.profile, spend.minute, spend.cost_usd)
      for (const usage of sums.usage) addUsage.run(USAGE_COLUMNS.map((column) => usage[column]))
    })
  }
  return async (rows) => {
    if (rows.length === 0) return
    // Synchronous between BEGIN and COMMIT: nothing else runs on the connection meanwhile.
    await db.connection().execute(async () => {
      insertAll ??= prepare()
      insertAll(rows)
    })
    options.afterCommit?.()
  }
}

// The rows go as COPY text (postgres-copy), in one message with the statements that complete them: the
// request log has no foreign keys here (migration 0019), so rows whose run was deleted while they waited are
// deleted again (they go with it, as the run's stored rows went), and what the others add to proxy_spend is
// summed here per minute and run, and counted only where the run is still there.
// A batch's commit does not wait for its WAL to reach the disk: it is written behind already (a daemon's
// crash loses up to an interval of rows), and this adds only a crash of PostgreSQL's machine, which loses
// what the WAL writer had not flushed (3 × wal_writer_delay at most, 600 ms by default) — as a commit on
// SQLite with synchronous = NORMAL may. The fdatasync per batch, on the server's CPU and in its kernel,
// cost the proxy about 7 % of its throughput on two cores (scripts/bench-proxy-ab.mjs, issue 19).
// Run events keep the default: a client may have been shown them.
const NO_WAIT_FOR_WAL_FLUSH = 'SET LOCAL synchronous_commit TO off'
const COPY_REQUESTS = `COPY proxy_requests (${COLUMNS.join(', ')}) FROM STDIN`

const f = copyField

/** A row as a COPY line, its fields in COLUMNS order (named, not looked up by key: the hot loop). */
export function copyRow(row: ProxyRequestsTable): string {
  return (
    `${f(row.id)}\t${f(row.user_id)}\t${f(row.run_id)}\t${f(row.token_id)}\t${f(row.profile)}\t` +
    `${f(row.family)}\t${f(row.method)}\t${f(row.path)}\t${f(row.model)}\t${f(row.stream)}\t${f(row.status)}\t` +
    `${f(row.feeds)}\t${f(row.input_tokens)}\t${f(row.output_tokens)}\t${f(row.cache_read_tokens)}\t` +
    `${f(row.cache_write_tokens)}\t${f(row.cost_usd)}\t${f(row.error)}\t${f(row.started_at)}\t${f(row.duration_ms)}\n`
  )
}

export function createPostgresProxyRequestsAppender(pool: pg.Pool): ProxyRequestsAppender {
  return async (rows) => {
    if (rows.length === 0) return
    // Some 300 bytes a row.
    const data = new CopyRows(rows.length * 384)
    const runIds = new Set<string>()
    for (const row of rows) {
      data.add(copyRow(row))
      if (row.run_id !== null) runIds.add(row.run_id)
    }
    // The spend per run too: a deleted run's rows add nothing.
    const { spend: spends, usage: usages } = sumsOf(rows, { spendByRun: true })
    const statements = [NO_WAIT_FOR_WAL_FLUSH, COPY_REQUESTS]
    if (runIds.size > 0) {
      const ids = [...runIds].map((id) => escapeLiteral(id)).join(', ')
      statements.push(
        `DELETE FROM proxy_requests WHERE run_id IN (${ids}) ` +
          `AND run_id NOT IN (SELECT id FROM runs WHERE id IN (${ids}))`,
      )
    }
    if (spends.length > 0) {
      const values = spends
        .map(
          (spend) =>
            `(${escapeLiteral(spend.user_id)}, ${escapeLiteral(spend.profile)}, ${escapeLiteral(spend.minute)}, ` +
            `${finite(spend.cost_usd)}::float8, ${spend.run_id === null ? 'NULL' : escapeLiteral(spend.run_id)})`,
        )
        .join(', ')
      statements.push(
        'INSERT INTO proxy_spend (user_id, profile, minute, cost_usd) ' +
          `SELECT user_id, profile, minute, sum(cost_usd) FROM (VALUES ${values}) ` +
          'AS spend(user_id, profile, minute, cost_usd, run_id) ' +
          'WHERE run_id IS NULL OR EXISTS (SELECT 1 FROM runs WHERE runs.id = spend.run_id) ' +
          `GROUP BY user_id, profile, minute ${ADD_SPEND}`,
      )
    }
    if (usages.length > 0) {
      const values = usages
        .map(
          (usage) =>
            `(${escapeLiteral(usage.user_id)}, ${escapeLiteral(usage.minute)}, ${escapeLiteral(usage.profile)}, ` +
            `${escapeLiteral(usage.run_id)}, ${usage.input_tokens}, ${usage.output_tokens}, ` +
            `${usage.cache_read_tokens}, ${usage.cache_write_tokens}, ${finite(usage.cost_usd)}::float8, ` +
            `${usage.priced}, ${usage.requests})`,
        )
        .join(', ')
      // Each key comes once in a batch (sumsOf): no row of it meets another of it in the upsert.
      statements.push(
        `INSERT INTO proxy_usage (${USAGE_COLUMNS.join(', ')}) SELECT * FROM (VALUES ${values}) ` +
          `AS batch(${USAGE_COLUMNS.join(', ')}) ` +
          "WHERE run_id = '' OR EXISTS (SELECT 1 FROM runs WHERE runs.id = batch.run_id) " +
          ADD_USAGE,
      )
    }
    await copyFromMemory(pool, statements.join('; '), data)
  }
}

/** A cost as SQL: a metered cost is always finite; anything else would fail the batch, so it counts 0. */
function finite(value: number): string {
  return Number.isFinite(value) ? String(value) : '0'
}
