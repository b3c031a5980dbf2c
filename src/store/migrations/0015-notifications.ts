// Notifications (issue 24): per-user channels (a Web Push subscription or an outbound webhook), the queue
// of deliveries to them (claimed per row, so several daemons on one PostgreSQL never send one twice, and
// kept across restarts), and the instance's VAPID key pair (one row, the private key in the vault).
// A channel's secret (its webhook HMAC key, or a push subscription's keys) is a vault envelope.
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('notification_channels')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('type', 'text', (column) => column.notNull().check(sql.raw(`type IN ('webpush', 'webhook')`)))
    .addColumn('format', 'text', (column) =>
      column.notNull().check(sql.raw(`format IN ('webpush', 'generic', 'slack', 'discord', 'ntfy')`)),
    )
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('url', 'text', (column) => column.notNull())
    .addColumn('secret_envelope', 'text', (column) => column.notNull())
    /** JSON array of event names. */
    .addColumn('events', 'text', (column) => column.notNull())
    /** JSON array of project ids, or null: every project the user may see. */
    .addColumn('project_ids', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .execute()
  await db.schema
    .createIndex('notification_channels_user')
    .on('notification_channels')
    .column('user_id')
    .execute()
  await db.schema
    .createTable('notification_deliveries')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('channel_id', 'text', (column) =>
      column.notNull().references('notification_channels.id').onDelete('cascade'),
    )
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('event', 'text', (column) => column.notNull())
    /** What caused it (`<runId>:run.finished`, an action id…): one delivery per channel and cause. */
    .addColumn('source_key', 'text', (column) => column.notNull())
    .addColumn('payload', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) =>
      column.notNull().check(sql.raw(`status IN ('pending', 'sending', 'delivered', 'failed')`)),
    )
    .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (column) => column.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', 'text')
    .addColumn('last_error', 'text')
    .addColumn('last_status_code', 'integer')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('delivered_at', 'text')
    .addUniqueConstraint('notification_deliveries_source', ['channel_id', 'source_key'])
    .execute()
  await db.schema
    .createIndex('notification_deliveries_due')
    .on('notification_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute()
  await db.schema
    .createTable('notification_vapid_keys')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('public_key', 'text', (column) => column.notNull())
    .addColumn('private_envelope', 'text', (column) => column.notNull())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('notification_vapid_keys').execute()
  await db.schema.dropTable('notification_deliveries').execute()
  await db.schema.dropTable('notification_channels').execute()
}
