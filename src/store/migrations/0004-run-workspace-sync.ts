// A run on an SSH target ends with its workspace synced back. When that fails the run fails, but what the
// agent reached is kept (`agent_status`) with what a retried finalize needs (`workspace_sync`, JSON: the
// target, the remote workspace and the local state that was shipped), so a later finalize can finish it.
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('runs').addColumn('agent_status', 'text').execute()
  await db.schema.alterTable('runs').addColumn('workspace_sync', 'text').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('runs').dropColumn('workspace_sync').execute()
  await db.schema.alterTable('runs').dropColumn('agent_status').execute()
}
