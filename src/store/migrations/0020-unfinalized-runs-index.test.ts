// Migration 0020: the runs whose workspace is not finalized are found through a partial index, not by
// reading every run, on both engines; its down drops the index.
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
  { name: 'sqlite', url: async () => undefined },
  { name: 'postgres', url: freshPostgresUrl },
] as const

/** The plan of the unfinalized-runs query (runs-repository's `unfinalized`), as one text. */
async function plan(handle: DatabaseHandle): Promise<string> {
  const query = 'select * from runs where workspace_sync is not null'
  if (handle.engine === 'postgres') {
    // A table of a few rows is read whole whatever its indexes: plan as for a large one.
    await sql`set enable_seqscan = off`.execute(handle.db)
    const rows = (await sql.raw<{ 'QUERY PLAN': string }>(`explain ${query}`).execute(handle.db)).rows
    await sql`reset enable_seqscan`.execute(handle.db)
    return rows.map((row) => row['QUERY PLAN']).join('\n')
  }
  const rows = (await sql.raw<{ detail: string }>(`explain query plan ${query}`).execute(handle.db)).rows
  return rows.map((row) => row.detail).join('\n')
}

/** The names of the indexes of `runs`. */
async function runsIndexes(handle: DatabaseHandle): Promise<string[]> {
  const query =
    handle.engine === 'postgres'
      ? sql<{ name: string }>`select indexname as name from pg_indexes
          where tablename = 'runs' and schemaname = current_schema()`
      : sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'runs'`
  return (await query.execute(handle.db)).rows.map((row) => row.name)
}

describe.each(ENGINES)('migration 0020-unfinalized-runs-index ($name)', (engine) => {
  it('finds the unfinalized runs through an index of their own, and its down drops it', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-migration-'))
    const handle = await openDatabase({ dataDir, url: await engine.url() })
    try {
      await migrateToLatest(handle.db, handle.engine)
      expect(await plan(handle)).toMatch(/runs_unfinalized_idx/)
      expect(await runsIndexes(handle)).toContain('runs_unfinalized_idx')
      await migrateTo(handle, '0019-unchecked-run-keys')
      expect(await runsIndexes(handle)).not.toContain('runs_unfinalized_idx')
    } finally {
      await handle.close()
    }
  })
})
