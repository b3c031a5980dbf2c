// A proxied request of no run (a `hangar env` token's, an operator's own agent) has no run_id, and nothing
// looks such requests up by run: the run index need not hold them. Each of them was an insert into that
// index for nothing, on every request the proxy logs (on PostgreSQL ~0.9 µs of the server's ~3.2 µs per
// logged row, COPY of 100,000 rows; on SQLite a b-tree insert on the daemon's own thread). Queries by run
// (`run_id = ?`) imply it is not null, so both engines use the partial index for them.
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('proxy_requests_run_idx').execute()
  await db.schema
    .createIndex('proxy_requests_run_idx')
    .on('proxy_requests')
    .column('run_id')
    .where(sql.ref('run_id'), 'is not', null)
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('proxy_requests_run_idx').execute()
  await db.schema.createIndex('proxy_requests_run_idx').on('proxy_requests').column('run_id').execute()
}
