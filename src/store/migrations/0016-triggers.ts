// Triggers (issue 24): schedules and inbound webhooks that start runs as the user who made them, and
// every fire of each. A fire's (trigger_id, slot) is unique: a schedule's slot (its ISO time) or a
// webhook's delivery id is claimed by inserting the row, so several daemons sharing the store fire a slot
// once and a replayed delivery starts nothing. The webhook secret is a vault envelope (HMAC needs it back).
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('triggers')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('kind', 'text', (column) => column.notNull().check(sql.raw(`kind IN ('schedule', 'webhook')`)))
    .addColumn('cron', 'text')
    .addColumn('timezone', 'text')
    .addColumn('missed', 'text', (column) => column.notNull().check(sql.raw(`missed IN ('skip', 'once')`)))
    .addColumn('project_id', 'text')
    .addColumn('agent', 'text')
    .addColumn('prompt', 'text', (column) => column.notNull())
    .addColumn('conversation_id', 'text')
    .addColumn('filter', 'text')
    .addColumn('report', 'text')
    .addColumn('secret', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addUniqueConstraint('triggers_user_name', ['user_id', 'name'])
    .execute()
  await db.schema
    .createTable('trigger_fires')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('trigger_id', 'text', (column) =>
      column.notNull().references('triggers.id').onDelete('cascade'),
    )
    .addColumn('slot', 'text', (column) => column.notNull())
    .addColumn('source', 'text', (column) =>
      column.notNull().check(sql.raw(`source IN ('schedule', 'webhook', 'manual')`)),
    )
    .addColumn('status', 'text', (column) =>
      column.notNull().check(sql.raw(`status IN ('claimed', 'started', 'skipped', 'failed', 'filtered')`)),
    )
    .addColumn('reason', 'text')
    .addColumn('run_id', 'text')
    .addColumn('conversation_id', 'text')
    .addColumn('report_target', 'text')
    .addColumn('report_status', 'text')
    .addColumn('report_error', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .addUniqueConstraint('trigger_fires_slot', ['trigger_id', 'slot'])
    .execute()
  await db.schema.createIndex('trigger_fires_run').on('trigger_fires').column('run_id').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('trigger_fires').execute()
  await db.schema.dropTable('triggers').execute()
}
