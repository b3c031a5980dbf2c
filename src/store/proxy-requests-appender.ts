// The proxy's request log, written behind in batches (runs/request-log-writer), on the engine's own driver:
// one fixed statement prepared once and reused whatever the batch size, instead of a Kysely multi-row
// INSERT built and compiled anew for every batch. On SQLite one prepared INSERT run per row inside one
// transaction, taken through Kysely's one connection so it never lands inside a transaction in progress;
// on PostgreSQL one INSERT … SELECT FROM json_to_recordset as a named (server-side prepared) statement.
// Either way a batch lands whole or not at all, with what it adds to proxy_spend.
import type SqliteDatabase from 'better-sqlite3'
import type { Kysely } from 'kysely'
import type pg from 'pg'
import type { Database, ProxyRequestsTable, ProxySpendTable } from './schema.js'

export type ProxyRequestsAppender = (rows: readonly ProxyRequestsTable[]) => Promise<void>

const COLUMNS = [
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

const POSTGRES_TYPES: Record<(typeof COLUMNS)[number], string> = {
  id: 'text',
  user_id: 'text',
  run_id: 'text',
  token_id: 'text',
  profile: 'text',
  family: 'text',
  method: 'text',
  path: 'text',
  model: 'text',
  stream: 'integer',
  status: 'integer',
  feeds: 'text',
  input_tokens: 'integer',
  output_tokens: 'integer',
  cache_read_tokens: 'integer',
  cache_write_tokens: 'integer',
  cost_usd: 'double precision',
  error: 'text',
  started_at: 'text',
  duration_ms: 'integer',
}

const INTO = `INSERT INTO proxy_requests (${COLUMNS.join(', ')})`

/**
 * What a batch adds to proxy_spend, the per-minute sums budgets read (migration 0018): one row per user,
 * profile and minute, summed here so a batch makes one upsert per minute it spans, not one per request.
 */
export function spendOf(rows: readonly ProxyRequestsTable[]): ProxySpendTable[] {
  const byMinute = new Map<string, ProxySpendTable>()
  for (const row of rows) {
    if (row.cost_usd === null || row.cost_usd === undefined) continue
    const minute = row.started_at.slice(0, 16)
    const key = `${row.user_id}\0${row.profile}\0${minute}`
    const spend = byMinute.get(key)
    if (spend) spend.cost_usd += row.cost_usd
    else byMinute.set(key, { user_id: row.user_id, profile: row.profile, minute, cost_usd: row.cost_usd })
  }
  return [...byMinute.values()]
}

const ADD_SPEND =
  'ON CONFLICT (user_id, profile, minute) DO UPDATE SET cost_usd = proxy_spend.cost_usd + excluded.cost_usd'

export function createSqliteProxyRequestsAppender(
  db: Kysely<Database>,
  sqlite: SqliteDatabase.Database,
  options: { afterCommit?: () => void } = {},
): ProxyRequestsAppender {
  // Prepared on first use: the table exists only once the migrations have run.
  let insertAll: ((rows: readonly ProxyRequestsTable[]) => void) | undefined
  const prepare = () => {
    const insert = sqlite.prepare(`${INTO} VALUES (${COLUMNS.map(() => '?').join(', ')})`)
    const addSpend = sqlite.prepare(
      `INSERT INTO proxy_spend (user_id, profile, minute, cost_usd) VALUES (?, ?, ?, ?) ${ADD_SPEND}`,
    )
    return sqlite.transaction((rows: readonly ProxyRequestsTable[]) => {
      for (const row of rows)
        insert.run(
          row.id,
          row.user_id,
          row.run_id,
          row.token_id,
          row.profile,
          row.family,
          row.method,
          row.path,
          row.model,
          row.stream,
          row.status,
          row.feeds,
          row.input_tokens,
          row.output_tokens,
          row.cache_read_tokens,
          row.cache_write_tokens,
          row.cost_usd,
          row.error,
          row.started_at,
          row.duration_ms,
        )
      for (const spend of spendOf(rows))
        addSpend.run(spend.user_id, spend.profile, spend.minute, spend.cost_usd)
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

// The rows travel as one JSON array, which PostgreSQL takes apart itself: JSON.stringify is native, while
// twenty array parameters are escaped element by element in JavaScript (the driver's arrayString), a cost
// paid on the daemon's thread for every proxied request.
const POSTGRES_INSERT = {
  name: 'hangar_append_proxy_requests',
  text:
    `WITH added AS (${INTO} SELECT ${COLUMNS.join(', ')} FROM json_to_recordset($1::json) AS row(` +
    COLUMNS.map((column) => `${column} ${POSTGRES_TYPES[column]}`).join(', ') +
    // The request log has no foreign keys here (migration 0019): a row whose run was deleted while it
    // waited to be written goes with it, as the run's stored rows went.
    ') WHERE row.run_id IS NULL OR EXISTS (SELECT 1 FROM runs WHERE runs.id = row.run_id) ' +
    'RETURNING user_id, profile, started_at, cost_usd) ' +
    'INSERT INTO proxy_spend (user_id, profile, minute, cost_usd) ' +
    'SELECT user_id, profile, substr(started_at, 1, 16), sum(cost_usd) FROM added WHERE cost_usd IS NOT NULL ' +
    `GROUP BY user_id, profile, substr(started_at, 1, 16) ${ADD_SPEND}`,
}

export function createPostgresProxyRequestsAppender(pool: pg.Pool): ProxyRequestsAppender {
  return async (rows) => {
    if (rows.length === 0) return
    // One statement is one implicit transaction: all its rows or none.
    await pool.query({ ...POSTGRES_INSERT, values: [JSON.stringify(rows)] })
  }
}
