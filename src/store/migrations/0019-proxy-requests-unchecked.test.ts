// Migration 0019 drops the request log's foreign keys on PostgreSQL only (a trigger deletes a run's rows
// with it), keeps them on SQLite, and its down puts them back.
import { mkdtemp } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { migrateTo } from '../../../test/helpers/migrate-to.js'
import { freshPostgresUrl } from '../../../test/helpers/store-engines.js'
import { migrateToLatest } from '../migrate.js'
import { type DatabaseHandle, openDatabase } from '../open-database.js'

const ENGINES = [
  { name: 'sqlite', url: async () => undefined, keysAfter: 2 },
  { name: 'postgres', url: freshPostgresUrl, keysAfter: 0 },
] as const

async function foreignKeys(handle: DatabaseHandle): Promise<number> {
  const query =
    handle.engine === 'postgres'
      ? sql<{ n: number }>`select count(*)::int as n from pg_constraint
          where conrelid = 'proxy_requests'::regclass and contype = 'f'`
      : sql<{ n: number }>`select count(*) as n from pragma_foreign_key_list('proxy_requests')`
  return Number((await query.execute(handle.db)).rows[0]!.n)
}

describe.each(ENGINES)('migration 0019-proxy-requests-unchecked ($name)', (engine) => {
  it('drops the foreign keys on PostgreSQL only, and its down restores them', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-migration-'))
    const handle = await openDatabase({ dataDir, url: await engine.url() })
    try {
      await migrateToLatest(handle.db, handle.engine)
      expect(await foreignKeys(handle)).toBe(engine.keysAfter)
      await migrateTo(handle, '0018-proxy-spend')
      expect(await foreignKeys(handle)).toBe(2)
      await migrateToLatest(handle.db, handle.engine)
      expect(await foreignKeys(handle)).toBe(engine.keysAfter)
    } finally {
      await handle.close()
    }
  })
})
