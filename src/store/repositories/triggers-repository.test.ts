// Triggers and fires on both engines: a slot is claimed once (the unique row), fires list with their run's
// status, a report is taken by one caller, and a user's triggers are theirs alone.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { STORE_ENGINES, type TestStore } from '../../../test/helpers/store-engines.js'
import type { Store } from '../store.js'

describe.each(STORE_ENGINES)('triggers repository ($name)', (engine) => {
  let testStore: TestStore
  let store: Store
  let userId: string

  beforeEach(async () => {
    testStore = await engine.open()
    store = testStore.store
    userId = (await store.users.create({ name: 'alice', role: 'owner' })).id
  })
  afterEach(async () => {
    await testStore.dispose()
  })

  const schedule = () =>
    store.triggers.create({
      userId,
      name: 'nightly',
      kind: 'schedule',
      cron: '0 3 * * *',
      timezone: 'UTC',
      missed: 'skip',
      projectId: null,
      agent: 'builtin',
      prompt: 'tidy up',
      conversationId: null,
      filter: null,
      report: { type: 'github', repository: 'o/r', issue: 3 },
      secretEnvelope: null,
    })

  it('claims a slot exactly once and lists fires with their run status', async () => {
    const trigger = await schedule()
    const claims = await Promise.all(
      Array.from({ length: 5 }, () =>
        store.triggers.claimFire(trigger.id, '2026-01-01T03:00:00.000Z', 'schedule'),
      ),
    )
    expect(claims.filter(Boolean)).toHaveLength(1)
    const fire = claims.find(Boolean)!
    expect(await store.triggers.lastScheduleSlot(trigger.id)).toBe('2026-01-01T03:00:00.000Z')
    await store.triggers.claimFire(trigger.id, '2026-01-02T03:00:00.000Z', 'schedule')
    expect(await store.triggers.lastScheduleSlot(trigger.id)).toBe('2026-01-02T03:00:00.000Z')

    const run = await store.forUser(userId).runs.create({
      agent: 'builtin',
      adapter: 'builtin',
      prompt: 'tidy up',
      cwd: '/tmp',
    })
    await store.triggers.updateFire(fire.id, { status: 'started', runId: run.id })
    expect(await store.triggers.activeRun(trigger.id, ['queued', 'running'])).toBe(run.id)
    expect(await store.triggers.activeRun(trigger.id, ['running'])).toBeUndefined()
    const listed = await store.triggers.fires(trigger.id)
    expect(listed).toHaveLength(2)
    expect(listed.find((candidate) => candidate.id === fire.id)).toMatchObject({
      status: 'started',
      runId: run.id,
      runStatus: 'queued',
    })
    expect((await store.triggers.fireOfRun(run.id))?.id).toBe(fire.id)

    const reports = await Promise.all([1, 2, 3].map(() => store.triggers.claimReport(fire.id)))
    expect(reports.filter(Boolean)).toHaveLength(1)
  })

  it("keeps a user's triggers to that user and deletes their fires with them", async () => {
    const trigger = await schedule()
    const bob = (await store.users.create({ name: 'bob', role: 'member' })).id
    expect(await store.triggers.listForUser(bob)).toEqual([])
    expect(await store.triggers.delete(bob, trigger.id)).toBe(false)
    expect((await store.triggers.listForUser(userId)).map((found) => found.id)).toEqual([trigger.id])
    expect((await store.triggers.get(trigger.id))?.report).toEqual({
      type: 'github',
      repository: 'o/r',
      issue: 3,
    })
    await store.triggers.claimFire(trigger.id, 'manual:1', 'manual')
    expect(await store.triggers.delete(userId, trigger.id)).toBe(true)
    expect(await store.triggers.get(trigger.id)).toBeUndefined()
    expect(await store.triggers.fires(trigger.id)).toEqual([])
  })
})
