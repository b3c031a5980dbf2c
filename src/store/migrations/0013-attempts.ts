// Compare attempts (issue 22): one prompt started in several isolated workspaces of a project at once, one
// conversation each, compared side by side and one of them picked. `attempt_groups` is the request, and
// `attempts` one row per agent: its conversation, its check command's outcome (bounded output) and the
// diff stats taken when it finished. A project's own check command is `projects.check_command`
// (`check` is a reserved word on both engines). (Numbered 0013: 0012 is taken elsewhere.)
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('projects').addColumn('check_command', 'text').execute()
  await db.schema
    .createTable('attempt_groups')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('project_id', 'text', (column) => column.notNull())
    .addColumn('prompt', 'text', (column) => column.notNull())
    .addColumn('base_ref', 'text')
    .addColumn('picked_conversation_id', 'text')
    .addColumn('picked_at', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .execute()
  await db.schema
    .createIndex('attempt_groups_user_idx')
    .on('attempt_groups')
    .columns(['user_id', 'created_at'])
    .execute()
  await db.schema
    .createTable('attempts')
    .addColumn('conversation_id', 'text', (column) => column.primaryKey())
    .addColumn('group_id', 'text', (column) =>
      column.notNull().references('attempt_groups.id').onDelete('cascade'),
    )
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('position', 'integer', (column) => column.notNull())
    .addColumn('agent', 'text', (column) => column.notNull())
    .addColumn('run_id', 'text')
    .addColumn('workspace_id', 'text')
    .addColumn('check_command', 'text')
    .addColumn('check_status', 'text', (column) =>
      column
        .notNull()
        .check(sql.raw(`check_status IN ('pending', 'running', 'passed', 'failed', 'skipped', 'none')`)),
    )
    .addColumn('check_exit_code', 'integer')
    .addColumn('check_output', 'text')
    .addColumn('files_changed', 'integer')
    .addColumn('additions', 'integer')
    .addColumn('deletions', 'integer')
    .addColumn('finished_at', 'text')
    .addColumn('discarded_at', 'text')
    .execute()
  await db.schema.createIndex('attempts_group_idx').on('attempts').column('group_id').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('attempts').execute()
  await db.schema.dropTable('attempt_groups').execute()
  await db.schema.alterTable('projects').dropColumn('check_command').execute()
}
