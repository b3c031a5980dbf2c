// The proxy's usage per minute, for the usage report (issue 19). The report summed the request log over its
// range, through an index on (user_id, profile, started_at) that every proxied request paid for as it was
// written: on PostgreSQL 2.5 of the 5.5 µs a row of the log's COPY, on SQLite 3 of the 11 pages a batch of
// 16 rows wrote to the WAL. Budgets read proxy_spend since 0018, so the report was the index's last reader.
// Summed per user, minute, profile and run as the log's batches are written (as proxy_spend is), the report
// reads at most one row per minute a run was proxied, and the index goes.
// Only requests that were answered (status < 400) count, as the report counted them. `run_id` is '' for a
// request of no run (a `hangar env` token), so the key has no NULL in it; a run's rows go with the run, by
// the trigger that deletes its request log on PostgreSQL (0019) and by one of their own on SQLite.
import { type Kysely, PostgresAdapter, sql } from 'kysely'

function onPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter
}

/** 0019's function, which deletes a deleted run's rows, with proxy_usage's (`usage`) or without. */
function deleteRunsRows(usage: boolean) {
  return sql`CREATE OR REPLACE FUNCTION hangar_delete_runs_rows() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN
      DELETE FROM run_events WHERE run_id IN (SELECT id FROM deleted_runs);
      DELETE FROM proxy_requests WHERE run_id IN (SELECT id FROM deleted_runs);
      ${sql.raw(usage ? 'DELETE FROM proxy_usage WHERE run_id IN (SELECT id FROM deleted_runs);' : '')}
      RETURN NULL;
    END $$`
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('proxy_usage')
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    /** `YYYY-MM-DDTHH:MM` (UTC) of the requests' started_at. */
    .addColumn('minute', 'text', (column) => column.notNull())
    .addColumn('profile', 'text', (column) => column.notNull())
    .addColumn('run_id', 'text', (column) => column.notNull().defaultTo(''))
    .addColumn('input_tokens', 'bigint', (column) => column.notNull())
    .addColumn('output_tokens', 'bigint', (column) => column.notNull())
    .addColumn('cache_read_tokens', 'bigint', (column) => column.notNull())
    .addColumn('cache_write_tokens', 'bigint', (column) => column.notNull())
    /** The sum of the priced requests' costs; `priced` says how many of `requests` were priced. */
    .addColumn('cost_usd', 'double precision', (column) => column.notNull())
    .addColumn('priced', 'bigint', (column) => column.notNull())
    .addColumn('requests', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('proxy_usage_pk', ['user_id', 'minute', 'profile', 'run_id'])
    .execute()
  await sql`
    INSERT INTO proxy_usage (user_id, minute, profile, run_id, input_tokens, output_tokens, cache_read_tokens,
      cache_write_tokens, cost_usd, priced, requests)
    SELECT user_id, substr(started_at, 1, 16), profile, coalesce(run_id, ''), sum(input_tokens),
      sum(output_tokens), sum(cache_read_tokens), sum(cache_write_tokens), coalesce(sum(cost_usd), 0),
      count(cost_usd), count(*)
    FROM proxy_requests
    WHERE status < 400
    GROUP BY user_id, substr(started_at, 1, 16), profile, coalesce(run_id, '')
  `.execute(db)
  if (onPostgres(db)) await deleteRunsRows(true).execute(db)
  else
    await sql`CREATE TRIGGER runs_delete_usage AFTER DELETE ON runs
      BEGIN DELETE FROM proxy_usage WHERE run_id = old.id; END`.execute(db)
  await db.schema.dropIndex('proxy_requests_budget_idx').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('proxy_requests_budget_idx')
    .on('proxy_requests')
    .columns(['user_id', 'profile', 'started_at'])
    .execute()
  if (onPostgres(db)) await deleteRunsRows(false).execute(db)
  else await sql`DROP TRIGGER runs_delete_usage`.execute(db)
  await db.schema.dropTable('proxy_usage').execute()
}
