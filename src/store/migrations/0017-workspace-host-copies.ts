// Where each workspace was shipped (an SSH target's copy of it), kept after its runs' changes came back:
// a run's `workspace_sync` is cleared by a successful finalize, yet the host keeps the copy (the next run
// ships only what it lacks), so removing the workspace needs this to remove those copies too.
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workspace_host_copies')
    .addColumn('workspace_id', 'text', (column) =>
      column.notNull().references('workspaces.id').onDelete('cascade'),
    )
    .addColumn('target', 'text', (column) => column.notNull())
    /** The copy's key under the target's directory (remoteKey of the local directory shipped). */
    .addColumn('key', 'text', (column) => column.notNull())
    /** The target's directory as the host resolved it (absolute). */
    .addColumn('remote_root', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('workspace_host_copies_pk', ['workspace_id', 'target', 'key'])
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('workspace_host_copies').execute()
}
