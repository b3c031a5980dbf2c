// Review and land (issue 22): the ref a conversation asked to start from (`baseRef` on create), the
// branch a workspace was based on (where it lands by default), a claim that makes one land of a workspace
// at a time (a conditional UPDATE, so daemons sharing PostgreSQL agree), and the review comments on a
// workspace's diff with the lines they quoted and the commit and blob they refer to.
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('conversations').addColumn('base_ref', 'text').execute()
  await db.schema.alterTable('workspaces').addColumn('base_branch', 'text').execute()
  await db.schema.alterTable('workspaces').addColumn('landing_by', 'text').execute()
  await db.schema.alterTable('workspaces').addColumn('landing_at', 'text').execute()
  await db.schema
    .createTable('review_comments')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (column) =>
      column.notNull().references('workspaces.id').onDelete('cascade'),
    )
    .addColumn('review_id', 'text', (column) => column.notNull())
    .addColumn('path', 'text', (column) => column.notNull())
    .addColumn('start_line', 'integer', (column) => column.notNull())
    .addColumn('end_line', 'integer', (column) => column.notNull())
    .addColumn('body', 'text', (column) => column.notNull())
    .addColumn('quoted', 'text', (column) => column.notNull())
    .addColumn('commit_sha', 'text', (column) => column.notNull())
    .addColumn('blob_sha', 'text', (column) => column.notNull())
    .addColumn('run_id', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .execute()
  await db.schema
    .createIndex('review_comments_workspace')
    .on('review_comments')
    .columns(['workspace_id', 'id'])
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('review_comments').execute()
  for (const column of ['landing_at', 'landing_by', 'base_branch'])
    await db.schema.alterTable('workspaces').dropColumn(column).execute()
  await db.schema.alterTable('conversations').dropColumn('base_ref').execute()
}
