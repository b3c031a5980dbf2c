// Migration 0022 sums the answered requests of the log per user, minute, profile and run into proxy_usage,
// which the usage report reads from then on, and drops the index only the report used: the usage of a store
// upgraded with requests in it must come through, a deleted run's usage must go with it, on both engines,
// and the down must give the index back.
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { migrateTo } from '../../../test/helpers/migrate-to.js'
import { MIGRATION_ENGINES } from '../../../test/helpers/store-engines.js'
import { migrateToLatest } from '../migrate.js'
import { type DatabaseHandle, openDatabase } from '../open-database.js'
import { createStore } from '../store.js'

async function hasBudgetIndex(handle: DatabaseHandle): Promise<boolean> {
  const query =
    handle.engine === 'postgres'
      ? sql<{ name: string }>`select indexname as name from pg_indexes
          where indexname = 'proxy_requests_budget_idx' and schemaname = current_schema()`
      : sql<{ name: string }>`select name from sqlite_master
          where type = 'index' and name = 'proxy_requests_budget_idx'`
  return (await query.execute(handle.db)).rows.length > 0
}

// PostgreSQL in a database of its own: the test migrates down, and a down drops tables.
describe.each(MIGRATION_ENGINES)('migration 0022-proxy-usage ($name)', (engine) => {
  it("sums the log's answered requests per minute and run, drops the report's index, and its down restores it", async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-migration-'))
    const database = await engine.database()
    const handle = await openDatabase({ dataDir, url: database.url })
    try {
      await migrateTo(handle, '0021-partial-run-index')
      const store = createStore(handle)
      const user = await store.users.create({ name: 'o', role: 'owner' })
      const scope = store.forUser(user.id)
      const run = await scope.runs.create({
        agent: 'reviewer',
        adapter: 'claude-code',
        prompt: 'p',
        cwd: '/w',
      })
      const request = (
        id: string,
        runId: string | null,
        status: number,
        startedAt: string,
        cost: number | null,
      ) =>
        sql`insert into proxy_requests (id, user_id, run_id, token_id, profile, family, method, path, status,
          input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, started_at, duration_ms, cost_usd)
          values (${id}, ${user.id}, ${runId}, 'tok', 'reviewer', 'anthropic', 'POST', '/v1/messages', ${status},
          10, 2, 30, 4, ${startedAt}, 1, ${cost})`.execute(handle.db)
      await request('preq_1', run.id, 200, '2026-03-01T10:00:01.000Z', 0.25)
      await request('preq_2', run.id, 200, '2026-03-01T10:00:59.999Z', null)
      await request('preq_3', run.id, 502, '2026-03-01T10:00:30.000Z', 7)
      await request('preq_4', null, 200, '2026-03-01T10:00:30.000Z', 1)
      await request('preq_5', run.id, 200, '2026-03-02T08:00:00.000Z', 0.5)
      expect(await hasBudgetIndex(handle)).toBe(true)

      await migrateToLatest(handle.db, handle.engine)

      expect(await hasBudgetIndex(handle)).toBe(false)
      const rows = await sql<Record<string, string | number>>`
        select minute, run_id, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd,
          priced, requests
        from proxy_usage order by minute, run_id`.execute(handle.db)
      const numbers = (row: Record<string, string | number>) =>
        Object.fromEntries(
          Object.entries(row).map(([key, value]) => [
            key,
            key === 'minute' || key === 'run_id' ? value : Number(value),
          ]),
        )
      const sums = { output_tokens: 2, cache_read_tokens: 30, cache_write_tokens: 4 }
      expect(rows.rows.map(numbers)).toEqual([
        {
          minute: '2026-03-01T10:00',
          run_id: '',
          input_tokens: 10,
          ...sums,
          cost_usd: 1,
          priced: 1,
          requests: 1,
        },
        {
          minute: '2026-03-01T10:00',
          run_id: run.id,
          input_tokens: 20,
          output_tokens: 4,
          cache_read_tokens: 60,
          cache_write_tokens: 8,
          cost_usd: 0.25,
          priced: 1,
          requests: 2,
        },
        {
          minute: '2026-03-02T08:00',
          run_id: run.id,
          input_tokens: 10,
          ...sums,
          cost_usd: 0.5,
          priced: 1,
          requests: 1,
        },
      ])
      const range = { from: '2026-03-01T00:00:00.000Z', to: '2026-03-02T23:59:59.999Z' }
      const byDay = Object.fromEntries((await scope.usage.cells(range)).map((cell) => [cell.day, cell]))
      expect(byDay['2026-03-01']).toMatchObject({ inputTokens: 30, costUsd: 1.25, unpriced: 1, requests: 3 })
      expect(byDay['2026-03-01']!.runIds).toEqual([run.id])
      expect(byDay['2026-03-02']).toMatchObject({ inputTokens: 10, costUsd: 0.5, unpriced: 0, requests: 1 })

      // A deleted run's usage goes with it; a token's stays.
      await sql`delete from runs where id = ${run.id}`.execute(handle.db)
      const left = await sql<{ run_id: string }>`select run_id from proxy_usage`.execute(handle.db)
      expect(left.rows).toEqual([{ run_id: '' }])

      await migrateTo(handle, '0021-partial-run-index')
      expect(await hasBudgetIndex(handle)).toBe(true)
      await expect(sql`select 1 from proxy_usage`.execute(handle.db)).rejects.toThrow()
    } finally {
      await handle.close()
      await database.drop()
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})
