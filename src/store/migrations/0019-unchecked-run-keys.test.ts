// Migration 0019 drops the foreign keys of the request log and of run events on PostgreSQL only (a trigger
// deletes a run's rows with it), keeps them on SQLite, and its down puts them back.
import { mkdtemp } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { migrateTo } from '../../../test/helpers/migrate-to.js'
import { MIGRATION_ENGINES } from '../../../test/helpers/store-engines.js'
import { migrateToLatest } from '../migrate.js'
import { type DatabaseHandle, openDatabase } from '../open-database.js'

/** How many foreign keys the request log and run events have. */
async function foreignKeys(handle: DatabaseHandle): Promise<{ proxyRequests: number; runEvents: number }> {
  const count = async (table: string) => {
    const query =
      handle.engine === 'postgres'
        ? sql<{ n: number }>`select count(*)::int as n from pg_constraint
            where conrelid = ${table}::regclass and contype = 'f'`
        : sql<{ n: number }>`select count(*) as n from pragma_foreign_key_list(${table})`
    return Number((await query.execute(handle.db)).rows[0]!.n)
  }
  return { proxyRequests: await count('proxy_requests'), runEvents: await count('run_events') }
}

// PostgreSQL in a database of its own: the test migrates down, and a down drops tables.
describe.each(MIGRATION_ENGINES)('migration 0019-unchecked-run-keys ($name)', (engine) => {
  it('drops the foreign keys on PostgreSQL only, and its down restores them', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-migration-'))
    const database = await engine.database()
    const handle = await openDatabase({ dataDir, url: database.url })
    try {
      const checked = { proxyRequests: 2, runEvents: 1 }
      const latest = engine.name === 'postgres' ? { proxyRequests: 0, runEvents: 0 } : checked
      await migrateToLatest(handle.db, handle.engine)
      expect(await foreignKeys(handle)).toEqual(latest)
      await migrateTo(handle, '0018-proxy-spend')
      expect(await foreignKeys(handle)).toEqual(checked)
      await migrateToLatest(handle.db, handle.engine)
      expect(await foreignKeys(handle)).toEqual(latest)
    } finally {
      await handle.close()
      await database.drop()
    }
  })
})
