// Two nodes on one PostgreSQL, each with its own bus: what one stores and publishes reaches the other's
// subscribers in order, through LISTEN/NOTIFY; a dropped notification connection makes the bus resync.
import pg from 'pg'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import type { AgentEvent, EventEnvelope } from '../core/events.js'
import { silentLogger } from '../core/logger.js'
import type { Store } from '../store/store.js'
import { type ClusterLiveSource, createClusterLiveSource } from './cluster-live-source.js'
import { createEventBus, type EventBus } from './event-bus.js'

const postgres = STORE_ENGINES.find((engine) => engine.name === 'postgres')!

describe('cluster live source (postgres)', () => {
  let testStore: TestStore
  let store: Store
  const opened: { source: ClusterLiveSource; bus: EventBus }[] = []

  async function node(origin: string) {
    const source = await createClusterLiveSource({
      notifications: store.notifications!,
      store,
      origin,
      // Called only after a drop, long after `bus` below exists.
      onGap: () => bus.resync(),
      log: silentLogger,
    })
    const bus = createEventBus({ source })
    opened.push({ source, bus })
    return bus
  }

  beforeEach(async () => {
    testStore = await postgres.open()
    store = testStore.store
  })
  afterEach(async () => {
    for (const { source, bus } of opened.splice(0)) {
      bus.close()
      await source.close()
    }
    await testStore.dispose()
  })

  async function newRun() {
    const user = await store.users.create({ name: `u${Date.now()}`, role: 'owner' })
    const runs = store.forUser(user.id).runs
    const run = await runs.create({ agent: 'builtin', adapter: 'builtin', prompt: 'p', cwd: '/w' })
    let seq = 0
    return {
      user,
      run,
      runs,
      /** Stores a batch, then publishes it on `bus`, as the one event writer does. */
      async write(bus: EventBus, events: AgentEvent[]) {
        const batch: EventEnvelope[] = events.map((event) => ({
          ...event,
          v: 1,
          runId: run.id,
          seq: ++seq,
          ts: new Date().toISOString(),
        }))
        await runs.appendEvents(batch)
        bus.publish(batch, { userId: user.id, conversationId: null })
      },
    }
  }

  it('delivers the events a node stores to subscribers on another node, in order, then ends at run-end', async () => {
    const a = await node('node-a')
    const b = await node('node-b')
    const { run, runs, write } = await newRun()
    const subscription = b.subscribeRun(run.id, {
      afterSeq: 0,
      loadStored: (after) => runs.listEvents(run.id, { afterSeq: after, limit: 100 }),
    })
    const received: EventEnvelope[] = []
    const reading = (async () => {
      for await (const envelope of subscription) received.push(envelope)
    })()
    for (let batch = 0; batch < 20; batch++)
      await write(a, [
        { type: 'text-delta', text: `${batch}a` },
        { type: 'text-delta', text: `${batch}b` },
      ])
    await write(a, [{ type: 'run-end', status: 'succeeded' }])
    await reading
    expect(received.map((envelope) => envelope.seq)).toEqual(
      Array.from({ length: 41 }, (_, index) => index + 1),
    )
    expect(received.at(-1)?.type).toBe('run-end')
    expect(subscription.reason).toBe('run-end')
  })

  // A batch per run per turn would otherwise cost a NOTIFY round trip each, queued behind one another.
  it('folds the batches a run publishes while its notice waits to be sent into that one notice', async () => {
    const real = store.notifications!
    const sent: { runId: string; fromSeq: number; toSeq: number }[] = []
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    const source = await createClusterLiveSource({
      notifications: {
        async notify(channel, payload) {
          sent.push(JSON.parse(payload) as { runId: string; fromSeq: number; toSeq: number })
          if (sent.length === 1) await held
          await real.notify(channel, payload)
        },
        listen: (channel, handlers) => real.listen(channel, handlers),
      },
      store,
      origin: 'node-a',
      onGap: () => {},
      log: silentLogger,
    })
    const a = createEventBus({ source })
    opened.push({ source, bus: a })
    const b = await node('node-b')
    const first = await newRun()
    const second = await newRun()
    const subscription = b.subscribeRun(first.run.id, {
      afterSeq: 0,
      loadStored: (after) => first.runs.listEvents(first.run.id, { afterSeq: after, limit: 100 }),
    })
    const received: number[] = []
    const reading = (async () => {
      for await (const envelope of subscription) received.push(envelope.seq)
    })()
    await first.write(a, [{ type: 'text-delta', text: 'sent at once' }])
    for (let batch = 0; batch < 5; batch++) {
      await first.write(a, [{ type: 'text-delta', text: `waits ${batch}` }])
      await second.write(a, [{ type: 'text-delta', text: `other run ${batch}` }])
    }
    await first.write(a, [{ type: 'run-end', status: 'succeeded' }])
    release()
    await reading
    expect(received).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(sent.map(({ runId, fromSeq, toSeq }) => [runId, fromSeq, toSeq])).toEqual([
      [first.run.id, 1, 1],
      [first.run.id, 2, 7],
      [second.run.id, 1, 5],
    ])
  })

  it('ends subscriptions as lagging when the notification connection drops, so clients replay', async () => {
    const b = await node('node-b')
    const { run, runs } = await newRun()
    const subscription = b.subscribeRun(run.id, {
      afterSeq: 0,
      loadStored: (after) => runs.listEvents(run.id, { afterSeq: after, limit: 100 }),
    })
    const admin = new pg.Client({ connectionString: testStore.databaseUrl })
    await admin.connect()
    try {
      // Only this store's listener: other suites may be listening in the same database.
      await admin.query(
        `select pg_terminate_backend(pid) from pg_stat_activity
         where query = 'LISTEN "hangar_events.' || current_schema() || '"' and pid <> pg_backend_pid()`,
      )
    } finally {
      await admin.end()
    }
    expect(await subscription.ended).toBe('lagging')
  })
})
