// The runs whose workspace's host copy may still hold changes (`workspace_sync` set until a finalize
// clears it) are read by the scheduler on each pass with queued runs, and before a workspace is handed
// out: a few rows among all runs ever made, found by reading every one of them without an index. A
// partial index holds the few alone, on both engines.
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('runs_unfinalized_idx')
    .on('runs')
    .column('id')
    .where(sql.ref('workspace_sync'), 'is not', null)
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('runs_unfinalized_idx').execute()
}
