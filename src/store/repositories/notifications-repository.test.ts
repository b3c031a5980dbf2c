// The notification queue on both engines: one delivery per channel and cause, each due row claimed by one
// claimer only (two stores on one database race for it), a lease that ran out makes a row due again, and
// a stale claimer cannot overwrite the outcome of the one that holds the row now.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { STORE_ENGINES, type TestStore } from '../../../test/helpers/store-engines.js'
import { openStore, type Store } from '../store.js'

describe.each(STORE_ENGINES)('notifications repository ($name)', (engine) => {
  let testStore: TestStore
  let store: Store
  let userId: string
  let now: Date

  beforeEach(async () => {
    now = new Date('2026-01-01T00:00:00Z')
    testStore = await engine.open({ clock: () => now })
    store = testStore.store
    userId = (await store.users.create({ name: 'alice', role: 'owner' })).id
  })
  afterEach(async () => {
    await testStore.dispose()
  })

  const channel = () =>
    store.notificationChannels.createChannel(userId, {
      type: 'webhook',
      format: 'generic',
      name: 'hook',
      url: 'https://example.com/hook',
      secretEnvelope: 'hv1.x',
      events: ['run.finished'],
      projectIds: null,
    })

  it('queues one delivery per channel and cause', async () => {
    const { id } = await channel()
    const first = await store.notificationChannels.enqueue({
      channelId: id,
      userId,
      event: 'run.finished',
      sourceKey: 'run:r1:end',
      payload: { title: 't' },
    })
    expect(first?.status).toBe('pending')
    const again = await store.notificationChannels.enqueue({
      channelId: id,
      userId,
      event: 'run.finished',
      sourceKey: 'run:r1:end',
      payload: { title: 't' },
    })
    expect(again).toBeUndefined()
    expect(await store.notificationChannels.listDeliveries(userId, id)).toHaveLength(1)
    // Another user never sees it.
    const bob = (await store.users.create({ name: 'bob', role: 'member' })).id
    expect(await store.notificationChannels.listDeliveries(bob, id)).toEqual([])
    expect(await store.notificationChannels.getChannel(bob, id)).toBeUndefined()
    expect(await store.notificationChannels.deleteChannel(bob, id)).toBe(false)
  })

  it('gives each due row to one claimer, even when two stores race', async () => {
    const { id } = await channel()
    for (let index = 0; index < 20; index++)
      await store.notificationChannels.enqueue({
        channelId: id,
        userId,
        event: 'run.finished',
        sourceKey: `run:r${index}:end`,
        payload: {},
      })
    const other = await openStore(
      engine.name === 'postgres'
        ? { dataDir: testStore.dataDir, url: testStore.databaseUrl, clock: () => now }
        : { dataDir: testStore.dataDir, clock: () => now },
    )
    try {
      const lease = new Date(now.getTime() + 30_000).toISOString()
      const claimed = []
      for (let round = 0; round < 20 && claimed.length < 20; round++) {
        const claims = await Promise.all([
          store.notificationChannels.claimDue('a', lease, 7),
          other.notificationChannels.claimDue('b', lease, 7),
          store.notificationChannels.claimDue('c', lease, 7),
          other.notificationChannels.claimDue('d', lease, 7),
        ])
        claimed.push(...claims.flat())
      }
      const ids = claimed.map((delivery) => delivery.id)
      expect(new Set(ids).size).toBe(ids.length)
      expect(ids).toHaveLength(20)
      expect(claimed.every((delivery) => delivery.attempts === 1)).toBe(true)
    } finally {
      await other.close()
    }
  })

  it('makes a row due again when its lease ran out, and ignores the stale claimer', async () => {
    const { id } = await channel()
    const queued = await store.notificationChannels.enqueue({
      channelId: id,
      userId,
      event: 'run.finished',
      sourceKey: 'run:r1:end',
      payload: {},
    })
    const lease = new Date(now.getTime() + 10_000).toISOString()
    expect(await store.notificationChannels.claimDue('a', lease, 5)).toHaveLength(1)
    expect(await store.notificationChannels.claimDue('b', lease, 5)).toHaveLength(0)
    now = new Date(now.getTime() + 20_000)
    const taken = await store.notificationChannels.claimDue(
      'b',
      new Date(now.getTime() + 10_000).toISOString(),
      5,
    )
    expect(taken.map((delivery) => [delivery.id, delivery.attempts])).toEqual([[queued!.id, 2]])
    expect(
      await store.notificationChannels.finishAttempt(queued!.id, 'a', {
        status: 'delivered',
        statusCode: 200,
      }),
    ).toBe(false)
    expect(
      await store.notificationChannels.finishAttempt(queued!.id, 'b', {
        status: 'pending',
        nextAttemptAt: new Date(now.getTime() + 5_000).toISOString(),
        error: 'HTTP 500',
        statusCode: 500,
      }),
    ).toBe(true)
    // Not due before its time.
    expect(await store.notificationChannels.claimDue('c', lease, 5)).toHaveLength(0)
    now = new Date(now.getTime() + 6_000)
    const retried = await store.notificationChannels.claimDue(
      'c',
      new Date(now.getTime() + 10_000).toISOString(),
      5,
    )
    expect(retried[0]).toMatchObject({ attempts: 3, lastError: 'HTTP 500', lastStatusCode: 500 })
  })

  it('keeps one VAPID key pair for the instance', async () => {
    const first = await store.notificationChannels.vapidKeys(() => ({
      publicKey: 'P1',
      privateEnvelope: 'E1',
    }))
    const second = await store.notificationChannels.vapidKeys(() => ({
      publicKey: 'P2',
      privateEnvelope: 'E2',
    }))
    expect(first).toEqual({ publicKey: 'P1', privateEnvelope: 'E1' })
    expect(second).toEqual(first)
  })
})
