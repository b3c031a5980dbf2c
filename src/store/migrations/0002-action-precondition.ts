// Pending actions remember what must still hold when they are applied (the target's content hash at
// proposal time), so a file changed behind the proposal's back becomes a conflict, not an overwrite.
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('pending_actions').addColumn('precondition', 'text').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('pending_actions').dropColumn('precondition').execute()
}
