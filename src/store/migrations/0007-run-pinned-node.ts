// A run needs the files of one machine: its conversation's workspace, or the directory it was submitted
// for. `pinned_node` names the daemon that may claim it; the others leave it queued.
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('runs').addColumn('pinned_node', 'text').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('runs').dropColumn('pinned_node').execute()
}
