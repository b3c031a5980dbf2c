// The workspace lifecycle (issue 20 item 5): the ports each live workspace holds (one row per port, so
// the primary key keeps them distinct across every daemon sharing the store), where its setup command
// ran and how it ended, and the owner's approval of a repository's `.hangar/workspace.yaml` (a hash of
// the exact content: a changed file needs approving again). (Numbered 0011: 0010 is taken elsewhere.)
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workspace_ports')
    .addColumn('port', 'integer', (column) => column.primaryKey())
    .addColumn('workspace_id', 'text', (column) =>
      column.notNull().references('workspaces.id').onDelete('cascade'),
    )
    .addColumn('created_at', 'text', (column) => column.notNull())
    .execute()
  await db.schema
    .createIndex('workspace_ports_workspace')
    .on('workspace_ports')
    .column('workspace_id')
    .execute()
  await db.schema
    .createTable('workspace_setups')
    .addColumn('workspace_id', 'text', (column) =>
      column.notNull().references('workspaces.id').onDelete('cascade'),
    )
    .addColumn('target', 'text', (column) => column.notNull())
    .addColumn('dir', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull().check(sqlCheck()))
    .addColumn('exit_code', 'integer')
    .addColumn('command_hash', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('workspace_setups_pk', ['workspace_id', 'target'])
    .execute()
  await db.schema
    .createTable('workspace_config_approvals')
    .addColumn('project', 'text', (column) => column.primaryKey())
    .addColumn('content_hash', 'text', (column) => column.notNull())
    .addColumn('approved_by', 'text', (column) => column.notNull().references('users.id'))
    .addColumn('approved_at', 'text', (column) => column.notNull())
    .execute()
}

function sqlCheck() {
  // A raw CHECK works the same on both engines.
  return sql`status in ('succeeded', 'failed')`
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('workspace_config_approvals').execute()
  await db.schema.dropTable('workspace_setups').execute()
  await db.schema.dropTable('workspace_ports').execute()
}
