// How the engine would run `query`, as one text: PostgreSQL's EXPLAIN (planned as for a large table, since a
// table of a few rows is read whole whatever its indexes) or SQLite's EXPLAIN QUERY PLAN. Migration tests
// check with it that a query goes through the index they made.
import { sql } from 'kysely'
import type { DatabaseHandle } from '../../src/store/open-database.js'

export async function queryPlan(handle: DatabaseHandle, query: string): Promise<string> {
  if (handle.engine === 'postgres') {
    await sql`set enable_seqscan = off`.execute(handle.db)
    const rows = (await sql.raw<{ 'QUERY PLAN': string }>(`explain ${query}`).execute(handle.db)).rows
    await sql`reset enable_seqscan`.execute(handle.db)
    return rows.map((row) => row['QUERY PLAN']).join('\n')
  }
  const rows = (await sql.raw<{ detail: string }>(`explain query plan ${query}`).execute(handle.db)).rows
  return rows.map((row) => row.detail).join('\n')
}
