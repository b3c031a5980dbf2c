// Migration 0018 sums the request log per user, profile and minute into proxy_spend, which budgets read
// from then on: the spend of a store upgraded with requests in it must come through, on both engines.
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { migrateTo } from '../../../test/helpers/migrate-to.js'
import { freshPostgresUrl } from '../../../test/helpers/store-engines.js'
import { migrateToLatest } from '../migrate.js'
import { openDatabase } from '../open-database.js'
import { createStore } from '../store.js'

const ENGINES = [
  { name: 'sqlite', url: async () => undefined },
  { name: 'postgres', url: freshPostgresUrl },
] as const

describe.each(ENGINES)('migration 0018-proxy-spend ($name)', (engine) => {
  it('sums the existing request log per user, profile and minute, and budgets read it', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-migration-'))
    const handle = await openDatabase({ dataDir, url: await engine.url() })
    try {
      await migrateTo(handle, '0016-triggers')
      await sql`insert into users (id, name, role, created_at) values ('usr_1', 'o', 'owner', '2026-01-01')`.execute(
        handle.db,
      )
      const request = (id: string, profile: string, startedAt: string, cost: number | null) =>
        sql`insert into proxy_requests (id, user_id, token_id, profile, family, method, path, status,
          started_at, duration_ms, cost_usd)
          values (${id}, 'usr_1', 'tok', ${profile}, 'anthropic', 'POST', '/v1/messages', 200, ${startedAt}, 1,
          ${cost})`.execute(handle.db)
      await request('preq_1', 'reviewer', '2026-03-01T10:00:01.000Z', 0.25)
      await request('preq_2', 'reviewer', '2026-03-01T10:00:59.999Z', 0.5)
      await request('preq_3', 'reviewer', '2026-03-01T10:01:00.000Z', 1)
      await request('preq_4', 'reviewer', '2026-03-01T10:02:00.000Z', null)
      await request('preq_5', 'coder', '2026-03-01T10:00:30.000Z', 2)

      await migrateToLatest(handle.db, handle.engine)

      const rows = await sql<{ profile: string; minute: string; cost_usd: number }>`
        select profile, minute, cost_usd from proxy_spend order by profile, minute`.execute(handle.db)
      expect(rows.rows.map((row) => ({ ...row, cost_usd: Number(row.cost_usd) }))).toEqual([
        { profile: 'coder', minute: '2026-03-01T10:00', cost_usd: 2 },
        { profile: 'reviewer', minute: '2026-03-01T10:00', cost_usd: 0.75 },
        { profile: 'reviewer', minute: '2026-03-01T10:01', cost_usd: 1 },
      ])
      const reviewer = createStore(handle).forUser('usr_1').proxyRequests
      expect(await reviewer.spentSince('reviewer', '2026-03-01T10:01:00.000Z')).toBe(1)
      // The minute a window starts in counts whole: a budget errs on the side of spent.
      expect(await reviewer.spentSince('reviewer', '2026-03-01T10:00:30.000Z')).toBe(1.75)
      // New rows add to it, whichever way they are written.
      await reviewer.record({
        id: 'preq_6',
        runId: null,
        tokenId: 'tok',
        profile: 'reviewer',
        family: 'anthropic',
        method: 'POST',
        path: '/v1/messages',
        model: null,
        stream: false,
        status: 200,
        feeds: [],
        usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
        costUsd: 0.125,
        error: null,
        startedAt: '2026-03-01T10:01:30.000Z',
        durationMs: 1,
      })
      expect(await reviewer.spentSince('reviewer', '2026-03-01T10:01:00.000Z')).toBe(1.125)
    } finally {
      await handle.close()
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})
