// Two nodes on one PostgreSQL, each with its own store and bus: what one stores and publishes reaches the
// other's subscribers in order, through LISTEN/NOTIFY; a dropped notification connection makes the bus
// resync.
import pg from 'pg'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import type { AgentEvent, EventEnvelope } from '../core/events.js'
import { silentLogger } from '../core/logger.js'
import { openStore, type Store } from '../store/store.js'
import { type ClusterLiveSource, createClusterLiveSource } from './cluster-live-source.js'
import { createEventBus, type EventBus } from './event-bus.js'

const postgres = STORE_ENGINES.find((engine) => engine.name === 'postgres')!

describe('cluster live source (postgres)', () => {
  let testStore: TestStore
  let store: Store
  const opened: { source: ClusterLiveSource; bus: EventBus; nodeStore: Store }[] = []
  /** Each node's own store (its own pool and appender, as a daemon has). */
  const storeOf = new Map<EventBus, Store>()

  async function node(origin: string) {
    const nodeStore = await openStore({ dataDir: testStore.dataDir, url: testStore.databaseUrl })
    const source = await createClusterLiveSource({
      notifications: nodeStore.notifications!,
      store: nodeStore,
      origin,
      // Called only after a drop, long after `bus` below exists.
      onGap: () => bus.resync(),
      log: silentLogger,
    })
    const bus = createEventBus({ source })
    opened.push({ source, bus, nodeStore })
    storeOf.set(bus, nodeStore)
    return bus
  }

  beforeEach(async () => {
    testStore = await postgres.open()
    store = testStore.store
  })
  afterEach(async () => {
    for (const { source, bus, nodeStore } of opened.splice(0)) {
      bus.close()
      await source.close()
      await nodeStore.close()
    }
    storeOf.clear()
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
      /** Stores a batch through `bus`'s node, then publishes it there, as the one event writer does. */
      async write(bus: EventBus, events: AgentEvent[]) {
        const batch: EventEnvelope[] = events.map((event) => ({
          ...event,
          v: 1,
          runId: run.id,
          seq: ++seq,
          ts: new Date().toISOString(),
        }))
        await storeOf.get(bus)!.forUser(user.id).runs.appendEvents(batch)
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

  function readAll(bus: EventBus, { run, runs }: Awaited<ReturnType<typeof newRun>>) {
    const subscription = bus.subscribeRun(run.id, {
      afterSeq: 0,
      loadStored: (after) => runs.listEvents(run.id, { afterSeq: after, limit: 100 }),
    })
    return (async () => {
      const received: number[] = []
      for await (const envelope of subscription) received.push(envelope.seq)
      return received
    })()
  }

  // The notice goes in the statement that stores the batch: a node that stored events and died before
  // publishing them (or before a NOTIFY of its own) no longer leaves the other nodes' clients waiting.
  it('tells the other nodes of a batch the store committed, even one never published', async () => {
    const a = await node('node-a')
    const b = await node('node-b')
    const stored = await newRun()
    const runsOfA = storeOf.get(a)!.forUser(stored.user.id).runs
    const reading = readAll(b, stored)
    const batch = (seq: number, event: AgentEvent): EventEnvelope => ({
      ...event,
      v: 1,
      runId: stored.run.id,
      seq,
      ts: new Date().toISOString(),
    })
    await runsOfA.appendEvents([
      batch(1, { type: 'text-delta', text: 'stored' }),
      batch(2, { type: 'text-delta', text: 'not published' }),
    ])
    await runsOfA.appendEvents([batch(3, { type: 'run-end', status: 'succeeded' })])
    expect(await reading).toEqual([1, 2, 3])
  })

  // Batches of several runs asked for together share one statement, and each run gets its notice.
  it('delivers the batches of several runs stored together to another node, each in order', async () => {
    const a = await node('node-a')
    const b = await node('node-b')
    const runs = [await newRun(), await newRun(), await newRun()]
    const readings = runs.map((run) => readAll(b, run))
    for (let batch = 0; batch < 5; batch++)
      await Promise.all(runs.map((run) => run.write(a, [{ type: 'text-delta', text: `${batch}` }])))
    await Promise.all(runs.map((run) => run.write(a, [{ type: 'run-end', status: 'succeeded' }])))
    expect(await Promise.all(readings)).toEqual(runs.map(() => [1, 2, 3, 4, 5, 6]))
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
