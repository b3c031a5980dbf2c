// Projects: directories on the daemon's host that conversations and runs work on (a git repository, or a
// plain folder that is copied instead of worktree'd), the members the owner granted each one to, and the
// project of each conversation, run and pending action. A removed project leaves its id on those rows
// (no foreign key): their history stays readable as "removed project".
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('projects')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull().unique())
    .addColumn('path', 'text', (column) => column.notNull().unique())
    .addColumn('kind', 'text', (column) => column.notNull().check(sql.raw(`kind IN ('git', 'folder')`)))
    .addColumn('default_agent', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .execute()
  await db.schema
    .createTable('project_members')
    .addColumn('project_id', 'text', (column) =>
      column.notNull().references('projects.id').onDelete('cascade'),
    )
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('project_members_pk', ['project_id', 'user_id'])
    .execute()
  await db.schema.createIndex('project_members_user_idx').on('project_members').column('user_id').execute()
  for (const table of ['conversations', 'runs', 'pending_actions'])
    await db.schema.alterTable(table).addColumn('project_id', 'text').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['conversations', 'runs', 'pending_actions'])
    await db.schema.alterTable(table).dropColumn('project_id').execute()
  await db.schema.dropTable('project_members').execute()
  await db.schema.dropTable('projects').execute()
}
