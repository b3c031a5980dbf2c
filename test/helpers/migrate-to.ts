// A store migrated up to a given migration only, so a test can write rows as an older release did and
// then watch the migrations after it carry them over.
import { Migrator, sql } from 'kysely'
import { MIGRATIONS } from '../../src/store/migrate.js'
import type { DatabaseHandle } from '../../src/store/open-database.js'

export async function migrateTo(handle: DatabaseHandle, migration: keyof typeof MIGRATIONS): Promise<void> {
  const schema =
    handle.engine === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(handle.db)).rows[0]?.schema
      : undefined
  const migrator = new Migrator({
    db: handle.db,
    provider: { getMigrations: async () => MIGRATIONS },
    migrationTableName: 'hangar_migrations',
    migrationLockTableName: 'hangar_migrations_lock',
    ...(schema && { migrationTableSchema: schema }),
  })
  const { error } = await migrator.migrateTo(migration)
  if (error) throw error
}
