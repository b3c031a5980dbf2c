// Migration 0020: the runs whose workspace is not finalized are found through a partial index, not by
// reading every run, on both engines; its down drops the index.
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

/** The unfinalized runs, as runs-repository's `unfinalized` asks for them. */
const PLANNED = 'select * from runs where workspace_sync is not null'

/** The names of the indexes of `runs`. */
async function runsIndexes(handle: DatabaseHandle): Promise<string[]> {
  const query =
    handle.engine === 'postgres'
      ? sql<{ name: string }>`select indexname as name from pg_indexes
          where tablename = 'runs' and schemaname = current_schema()`
      : sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'runs'`
  return (await query.execute(handle.db)).rows.map((row) => row.name)
}

// PostgreSQL in a database of its own: the test migrates down, and a down drops tables.
describe.each(MIGRATION_ENGINES)('migration 0020-unfinalized-runs-index ($name)', (engine) => {
  it('finds the unfinalized runs through an index of their own, and its down drops it', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-migration-'))
    const database = await engine.database()
    const handle = await openDatabase({ dataDir, url: database.url })
    try {
      await migrateToLatest(handle.db, handle.engine)
      expect(await queryPlan(handle, PLANNED)).toMatch(/runs_unfinalized_idx/)
      expect(await runsIndexes(handle)).toContain('runs_unfinalized_idx')
      await migrateTo(handle, '0019-unchecked-run-keys')
      expect(await runsIndexes(handle)).not.toContain('runs_unfinalized_idx')
    } finally {
      await handle.close()
      await database.drop()
    }
  })
})
