import { Hono } from 'hono'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { STORE_ENGINES, type TestStore } from '../../../test/helpers/store-engines.js'
import { defaultConfig, parseConfig } from '../../core/config.js'
import { silentLogger } from '../../core/logger.js'
import type { User } from '../../store/repositories/users-repository.js'
import type { AppVariables } from '../auth-middleware.js'
import { createErrorHandler } from '../error-envelope.js'
import { proxyRequestRow } from '../../../test/helpers/proxy-request-row.js'
import { registerUsageRoutes } from './usage-routes.js'

interface UsageBody {
  from: string
  to: string
  groupBy: string
  total: { costUsd: number; requests: number; runs: number }
  groups: {
    key: string
    costUsd: number
    agentCostUsd?: number
    unpriced?: number
    inputTokens: number
    byAgent?: Record<string, { costUsd: number; tokens: number }>
  }[]
  budgets: { profile: string; usd: number; spentUsd: number; fraction: number; window: string }[]
  error?: { message: string }
}

describe('GET /api/usage', () => {
  let testStore: TestStore
  let owner: User
  let app: Hono<{ Variables: AppVariables }>

  const get = async (query = '') => {
    const response = await app.request(`/api/usage${query}`)
    return { status: response.status, body: (await response.json()) as UsageBody }
  }

  beforeEach(async () => {
    testStore = await STORE_ENGINES[0]!.open()
    const { store } = testStore
    owner = await store.users.create({ name: 'owner', role: 'owner' })
    const config = parseConfig(
      'agents:\n  reviewer: { adapter: claude-code, budget: { usd: 2, window: 1w } }\n',
    )
    await store
      .forUser(owner.id)
      .profiles.put('mine', { adapter: 'builtin', budget: { usd: 1, window: '1d' } })
    app = new Hono<{ Variables: AppVariables }>()
    app.use('*', async (context, next) => {
      context.set('principal', { via: 'session', user: owner, sessionId: 's', sessionKind: 'browser' })
      await next()
    })
    registerUsageRoutes(app, { store, runtime: { config: config ?? defaultConfig() } })
    app.onError(createErrorHandler(silentLogger))
    const record = (id: string, profile: string, startedAt: string, costUsd: number) =>
      store.forUser(owner.id).proxyRequests.record(proxyRequestRow({ id, profile, startedAt, costUsd }))
    await record('p1', 'reviewer', '2026-02-01T08:00:00.000Z', 0.5)
    await record('p2', 'mine', '2026-02-03T08:00:00.000Z', 1.5)
    await record('p3', 'reviewer', '2026-02-03T09:00:00.000Z', 0.25)
    await record('p4', 'mine', new Date().toISOString(), 0.75)
  })
  afterEach(async () => {
    await testStore.dispose()
  })

  it('answers one zero-filled group per UTC day, split by agent, for a date range', async () => {
    const { status, body } = await get('?from=2026-02-01&to=2026-02-04')
    expect(status).toBe(200)
    expect(body).toMatchObject({
      from: '2026-02-01T00:00:00.000Z',
      to: '2026-02-04T23:59:59.999Z',
      groupBy: 'day',
    })
    expect(body.groups.map((group) => [group.key, group.costUsd])).toEqual([
      ['2026-02-01', 0.5],
      ['2026-02-02', 0],
      ['2026-02-03', 1.75],
      ['2026-02-04', 0],
    ])
    expect(body.groups[2]!.byAgent).toEqual({
      mine: { costUsd: 1.5, tokens: 11 },
      reviewer: { costUsd: 0.25, tokens: 11 },
    })
    expect(body.total).toMatchObject({ costUsd: 2.25, requests: 3, runs: 0 })
  })

  it('groups by agent, costliest first, and reports every budget with its own window', async () => {
    const { body } = await get('?groupBy=agent&from=2026-01-01')
    expect(body.groups.map((group) => [group.key, group.costUsd])).toEqual([
      ['mine', 2.25],
      ['reviewer', 0.75],
    ])
    // A 1-day window holds only today's request; hangar.yaml's 1-week window none of February's.
    expect(body.budgets).toEqual([
      expect.objectContaining({ profile: 'reviewer', usd: 2, window: '1w', spentUsd: 0, fraction: 0 }),
      expect.objectContaining({ profile: 'mine', usd: 1, window: '1d', spentUsd: 0.75, fraction: 0.75 }),
    ])
  })

  // A proxied run on a model missing from the price table showed "$0.00" in Usage although its agent
  // reported what it cost: the agent's figure counts (once), and what nobody priced is counted apart.
  it("counts an agent's own cost for runs the proxy could not price, and what nobody priced as unpriced", async () => {
    const scope = testStore.store.forUser(owner.id)
    const now = new Date().toISOString()
    const agentCosted = await scope.runs.create({
      agent: 'coder',
      adapter: 'claude-code',
      prompt: 'p',
      cwd: '/w',
    })
    const usage = { inputTokens: 20, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 }
    await scope.runs.update(agentCosted.id, {
      usage: { ...usage, costUsd: 0.9, costSource: 'agent' },
      costUsd: 0.9,
    })
    const record = (id: string, costUsd: number | null, runId: string | null) =>
      scope.proxyRequests.record(proxyRequestRow({ id, profile: 'coder', startedAt: now, costUsd, runId }))
    await record('q1', null, agentCosted.id)
    await record('q2', 0.1, agentCosted.id)
    await record('q3', null, null)
    const unpricedRun = await scope.runs.create({ agent: 'coder', adapter: 'codex', prompt: 'p', cwd: '/w' })
    await scope.runs.update(unpricedRun.id, { usage: { ...usage, costSource: 'unknown' } })

    const { body } = await get('?groupBy=agent')
    const coder = body.groups.find((group) => group.key === 'coder')
    expect(coder).toMatchObject({ costUsd: 0.9, agentCostUsd: 0.9, unpriced: 2, requests: 3, runs: 2 })
    expect(coder!.inputTokens).toBe(50)
  })

  it('defaults to the last 30 days by day', async () => {
    const { body } = await get()
    expect(body.groups).toHaveLength(30)
    expect(body.groups.at(-1)!.key).toBe(new Date().toISOString().slice(0, 10))
    expect(body.groups.at(-1)!.byAgent).toEqual({ mine: { costUsd: 0.75, tokens: 11 } })
  })

  // A time without an offset was read in the daemon's local time zone, so the same query answered
  // another range on a daemon outside UTC.
  it("reads a time without an offset as UTC, whatever the daemon's time zone", async () => {
    const zone = process.env.TZ
    process.env.TZ = 'America/New_York'
    try {
      const { body } = await get('?from=2026-02-01T10:00&to=2026-02-03T09:00:00')
      expect(body).toMatchObject({ from: '2026-02-01T10:00:00.000Z', to: '2026-02-03T09:00:00.000Z' })
      // Both bounds inclusive: p3 started at 09:00 on the 3rd; p1 (08:00 on the 1st) is before from.
      expect(body.total).toMatchObject({ costUsd: 1.75, requests: 2 })
      const offset = await get('?from=2026-02-01T09:00:00%2B01:00&to=2026-02-01T09:00:00.000Z')
      expect(offset.body).toMatchObject({ from: '2026-02-01T08:00:00.000Z', total: { requests: 1 } })
    } finally {
      if (zone === undefined) delete process.env.TZ
      else process.env.TZ = zone
    }
  })

  it('refuses a bad bound, a reversed range, an unknown grouping and too many days with a clear message', async () => {
    expect((await get('?from=last-week')).body.error?.message).toBe(
      'from must be a date (2026-11-01) or an ISO-8601 time, not "last-week"',
    )
    expect((await get('?from=2026-03-01&to=2026-02-01')).body.error?.message).toMatch(
      /^from \(2026-03-01T00:00:00.000Z\) is after to/,
    )
    expect((await get('?groupBy=week')).body.error?.message).toBe('groupBy must be "day" or "agent"')
    // Date.parse would take both: the first as 2026-03-02, the second in the daemon's local time.
    expect((await get('?to=2026-02-30')).body.error?.message).toBe(
      'to must be a date (2026-11-01) or an ISO-8601 time, not "2026-02-30"',
    )
    expect((await get('?from=2026-02-01%2010:00')).status).toBe(400)
    const long = await get('?from=2020-01-01&to=2026-01-01')
    expect(long.status).toBe(400)
    expect(long.body.error?.message).toBe(
      'a range of 2193 days is too long to group by day (at most 366); narrow from/to, or use groupBy=agent',
    )
    expect((await get('?from=2020-01-01&to=2026-01-01&groupBy=agent')).status).toBe(200)
  })
})
