// Migration 0021: the request log's run index holds only requests of a run, and queries by run still go
// through it, on both engines; its down restores the index of every row.
import { mkdtemp } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { migrateTo } from '../../../test/helpers/migrate-to.js'
import { queryPlan } from '../../../test/helpers/query-plan.js'
import { MIGRATION_ENGINES } from '../../../test/helpers/store-engines.js'
import { migrateToLatest } from '../migrate.js'
import { type DatabaseHandle, openDatabase } from '../open-database.js'

/** A run's requests, as proxy-requests-repository's `listForRun` asks for them. */
const PLANNED = "select * from proxy_requests where user_id = 'usr_a' and run_id = 'run_a'"

/** The definition of the run index, as the engine keeps it. */
async function runIndex(handle: DatabaseHandle): Promise<string> {
  const query =
    handle.engine === 'postgres'
      ? sql<{ definition: string }>`select indexdef as definition from pg_indexes
          where indexname = 'proxy_requests_run_idx' and schemaname = current_schema()`
      : sql<{ definition: string }>`select sql as definition from sqlite_master
          where type = 'index' and name = 'proxy_requests_run_idx'`
  return (await query.execute(handle.db)).rows[0]?.definition ?? ''
}

// PostgreSQL in a database of its own: the test migrates down, and a down drops tables.
describe.each(MIGRATION_ENGINES)('migration 0021-partial-run-index ($name)', (engine) => {
  it('indexes only the requests of a run, finds a run’s requests through it, and its down indexes all', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-migration-'))
    const database = await engine.database()
    const handle = await openDatabase({ dataDir, url: database.url })
    try {
      await migrateToLatest(handle.db, handle.engine)
      expect(await runIndex(handle)).toMatch(/where \(?"?run_id"? is not null\)?/i)
      expect(await queryPlan(handle, PLANNED)).toMatch(/proxy_requests_run_idx/)
      await migrateTo(handle, '0020-unfinalized-runs-index')
      expect(await runIndex(handle)).toMatch(/run_id/)
      expect(await runIndex(handle)).not.toMatch(/where/i)
    } finally {
      await handle.close()
      await database.drop()
    }
  })
})
