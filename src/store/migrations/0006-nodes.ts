// The daemons sharing this store: each writes its row at start and a heartbeat every few seconds. A node
// whose heartbeat is older than the lease is gone: another node marks the runs it owned `interrupted`.
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('nodes')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('url', 'text')
    .addColumn('host', 'text', (column) => column.notNull())
    .addColumn('pid', 'integer', (column) => column.notNull())
    .addColumn('boot_id', 'text', (column) => column.notNull())
    .addColumn('version', 'text', (column) => column.notNull())
    .addColumn('started_at', 'text', (column) => column.notNull())
    .addColumn('heartbeat_at', 'text', (column) => column.notNull())
    .addColumn('stopped_at', 'text')
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('nodes').execute()
}
