// The LLM proxy's request log: one row per model request that went through the proxy, for the run's
// request log (which feeds the model received), usage and cost per run or per proxy token, and the
// per-profile budget window. Proxy tokens minted for a run name it (`run_id`), so they end with it.
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('personal_access_tokens').addColumn('run_id', 'text').execute()
  await db.schema
    .createTable('proxy_requests')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('run_id', 'text', (column) => column.references('runs.id').onDelete('cascade'))
    .addColumn('token_id', 'text', (column) => column.notNull())
    .addColumn('profile', 'text', (column) => column.notNull())
    .addColumn('family', 'text', (column) => column.notNull())
    .addColumn('method', 'text', (column) => column.notNull())
    .addColumn('path', 'text', (column) => column.notNull())
    .addColumn('model', 'text')
    .addColumn('stream', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('status', 'integer', (column) => column.notNull())
    .addColumn('feeds', 'text')
    .addColumn('input_tokens', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('output_tokens', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('cache_read_tokens', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('cache_write_tokens', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('cost_usd', 'double precision')
    .addColumn('error', 'text')
    .addColumn('started_at', 'text', (column) => column.notNull())
    .addColumn('duration_ms', 'integer', (column) => column.notNull())
    .execute()
  await db.schema.createIndex('proxy_requests_run_idx').on('proxy_requests').column('run_id').execute()
  await db.schema
    .createIndex('proxy_requests_budget_idx')
    .on('proxy_requests')
    .columns(['user_id', 'profile', 'started_at'])
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('proxy_requests').execute()
  await db.schema.alterTable('personal_access_tokens').dropColumn('run_id').execute()
}
