// Which provider and model a user's built-in agent uses when the profile names none: one row per user,
// chosen in Settings (`PUT /api/settings/builtin`). (Numbered after 0008, applying actions.)
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('builtin_settings')
    .addColumn('user_id', 'text', (column) => column.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'text', (column) => column.notNull())
    .addColumn('model', 'text')
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('builtin_settings').execute()
}
