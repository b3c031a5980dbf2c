// Two nodes on one PostgreSQL, each with its own store and bus: what one stores and publishes reaches the
// other's subscribers in order, through LISTEN/NOTIFY; a dropped notification connection makes the bus
// resync.
import pg from 'pg'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import type { AgentEvent, EventEnvelope } from '../core/events.js'
import { parseConfig } from '../core/config.js'
import { silentLogger } from '../core/logger.js'
import { openStore, type Store } from '../store/store.js'
import { type ClusterLiveSource, createClusterLiveSource } from './cluster-live-source.js'
import { createEventBus, type EventBus } from './event-bus.js'

const postgres = STORE_ENGINES.find((engine) => engine.name === 'postgres')!

describe('cluster live source (postgres)', () => {
  let testStore: TestStore
  let store: Store
  /** Users made so far: each gets a name of its own. */
  let users = 0
  const opened: { source: ClusterLiveSource; bus: EventBus; nodeStore: Store; origin: string }[] = []
  /** Each node's own store (its own pool and appender, as a daemon has). */
  const storeOf = new Map<EventBus, Store>()
  const sourceOf = new Map<EventBus, ClusterLiveSource>()
  /** How many times each node's subscribers were told to replay. */
  const resyncs = new Map<string, number>()

  /** The daemon's defaults (server.leaseMs, server.heartbeatMs). */
  const { leaseMs, heartbeatMs } = parseConfig('').server

  /** A node; once it is made, it and the nodes before it know of each other (their hellos were answered). */
  async function node(origin: string, presence: { leaseMs?: number; heartbeatMs?: number } = {}) {
    const nodeStore = await openStore({ dataDir: testStore.dataDir, url: testStore.databaseUrl })
    // The bus is made once the source is: a peer's answer while the source starts finds none to resync.
    const made: { bus?: EventBus } = {}
    const source = await createClusterLiveSource({
      notifications: nodeStore.notifications!,
      store: nodeStore,
      origin,
      onGap: () => {
        resyncs.set(origin, (resyncs.get(origin) ?? 0) + 1)
        made.bus?.resync()
      },
      log: silentLogger,
      leaseMs,
      heartbeatMs,
      ...presence,
    })
    const bus = (made.bus = createEventBus({ source }))
    const others = opened.map((other) => other.origin)
    opened.push({ source, bus, nodeStore, origin })
    storeOf.set(bus, nodeStore)
    sourceOf.set(bus, source)
    await until(
      () =>
        others.every((other) => source.presence.peers().includes(other)) &&
        opened.every((other) => other.origin === origin || other.source.presence.peers().includes(origin)),
    )
    // Replays from the store told while the nodes met are over: counted from here.
    resyncs.set(origin, 0)
    return bus
  }

  async function until(condition: () => boolean): Promise<void> {
    while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5))
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
    sourceOf.clear()
    resyncs.clear()
    await testStore.dispose()
  })

  async function newRun() {
    // A name of its own: runs made in one millisecond (a fast machine) took the same `u<Date.now()>`.
    const user = await store.users.create({ name: `u${++users}`, role: 'owner' })
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
  /** What is said on the events channel, as a listener that is no daemon hears it. */
  async function eavesdrop() {
    const client = new pg.Client({ connectionString: testStore.databaseUrl })
    await client.connect()
    const schema = (await client.query<{ schema: string }>('select current_schema() as schema')).rows[0]!
      .schema
    const heard: Record<string, unknown>[] = []
    client.on('notification', (message) => heard.push(JSON.parse(message.payload ?? 'null')))
    const channel = `hangar_events.${schema}`.slice(0, 63)
    await client.query(`LISTEN ${client.escapeIdentifier(channel)}`)
    return {
      heard,
      /** Sends `payload` on the channel and waits until it is heard back: all sent before it was heard too. */
      async say(payload: Record<string, unknown>) {
        await client.query('select pg_notify($1, $2)', [channel, JSON.stringify(payload)])
        await until(() => heard.some((message) => JSON.stringify(message) === JSON.stringify(payload)))
      },
      notices: () => heard.filter((message) => 'runId' in message),
      said: (origin: string) =>
        heard
          .filter((message) => message.origin === origin && 'presence' in message)
          .map((message) => message.presence),
      end: () => client.end(),
    }
  }

  // Every NOTIFY wakes every listening connection of the database: a daemon alone sends none.
  it('announces nothing while no other daemon listens, and from the moment one says hello', async () => {
    const channel = await eavesdrop()
    try {
      const a = await node('node-a')
      const first = await newRun()
      await first.write(a, [{ type: 'text-delta', text: 'alone' }])
      await channel.say({ marker: 1 })
      expect(sourceOf.get(a)!.presence.announcing()).toBe(false)
      expect(channel.notices()).toEqual([])
      expect(channel.said('node-a')).toEqual(['hello'])

      const b = await node('node-b')
      expect(sourceOf.get(a)!.presence.announcing()).toBe(true)
      const reading = readAll(b, first)
      await first.write(a, [{ type: 'run-end', status: 'succeeded' }])
      // Stored before b came, replayed from the store; then live.
      expect(await reading).toEqual([1, 2])
      await channel.say({ marker: 'after run-end' })
      expect(channel.notices()).toEqual([
        expect.objectContaining({ origin: 'node-a', runId: first.run.id, toSeq: 2 }),
      ])
      expect(channel.said('node-a')).toEqual(['hello', 'here'])
      // No heartbeat told b of a: b announced once a answered, and says so once what it stored before has
      // landed (whenever that is: b knew of a before).
      await until(() => channel.said('node-b').length === 2)
      expect(channel.said('node-b')).toEqual(['hello', 'here'])

      // b stops cleanly: a is alone again, says so, and stops announcing.
      const bEntry = opened.find((entry) => entry.origin === 'node-b')!
      opened.splice(opened.indexOf(bEntry), 1)
      bEntry.bus.close()
      await bEntry.source.close()
      await bEntry.nodeStore.close()
      await until(() => !sourceOf.get(a)!.presence.announcing())
      const second = await newRun()
      await second.write(a, [{ type: 'text-delta', text: 'alone again' }])
      await channel.say({ marker: 2 })
      expect(channel.notices()).toHaveLength(1)
      expect(channel.said('node-b')).toEqual(['hello', 'here', 'bye'])
      // Said after it stopped announcing, so perhaps after the marker.
      await until(() => channel.said('node-a').length === 3)
      expect(channel.said('node-a')).toEqual(['hello', 'here', 'quiet'])
    } finally {
      await channel.end()
    }
  })

  // What a daemon stored before it announced may have reached no other daemon: theirs replay from the store.
  it('answers a hello with here, and has the subscribers of a daemon that hears here replay', async () => {
    await node('node-a')
    await node('node-b')
    const channel = await eavesdrop()
    try {
      // A third daemon starts (or one's lost connection is back): both answer, each hears the other's here.
      await channel.say({ origin: 'node-c', presence: 'hello' })
      await until(() => channel.said('node-a').includes('here') && channel.said('node-b').includes('here'))
      await until(() => resyncs.get('node-a')! >= 1 && resyncs.get('node-b')! >= 1)
      expect(sourceOf.get(opened[0]!.bus)!.presence.peers()).toEqual(['node-b', 'node-c'])
    } finally {
      await channel.end()
    }
  })

  // Anyone who may NOTIFY on the database can say bye in a daemon's name: the daemon is not lost for it.
  it('counts a daemon again when it speaks after a bye said in its name', async () => {
    const a = await node('node-a')
    await node('node-b')
    const channel = await eavesdrop()
    try {
      await channel.say({ origin: 'node-b', presence: 'bye' })
      // a believes itself alone and says so; b hears it, says hello, and a announces to it again.
      await until(() => channel.said('node-a').join() === 'quiet,here')
      expect(sourceOf.get(a)!.presence.peers()).toEqual(['node-b'])
      expect(sourceOf.get(a)!.presence.announcing()).toBe(true)
    } finally {
      await channel.end()
    }
  })

  it('says hello when a daemon that believes itself alone falls quiet while this one listens', async () => {
    await node('node-a')
    const channel = await eavesdrop()
    try {
      await channel.say({ origin: 'node-q', presence: 'quiet' })
      await until(() => channel.said('node-a').length === 1)
      expect(channel.said('node-a')).toEqual(['hello'])
    } finally {
      await channel.end()
    }
  })

  // Heartbeats: a starting daemon waits for the answer of those that beat, and a peer whose lease ran out
  // (no beat, no news) is dropped.
  it('knows the peers that beat within their lease, and drops those whose lease ran out', async () => {
    const a = await node('node-a', { leaseMs: 60_000, heartbeatMs: 20 })
    const beat = (bootId: string, at: Date) =>
      store.nodes.heartbeat(
        {
          id: `host-${bootId}`,
          url: null,
          host: 'h',
          pid: 1,
          bootId,
          version: 'v',
          startedAt: at.toISOString(),
        },
        at.toISOString(),
      )
    await beat('node-a', new Date())
    // b starts knowing a from its heartbeat: it announces from its start and has heard a's answer when made.
    const source = await createClusterLiveSource({
      notifications: testStore.store.notifications!,
      store: testStore.store,
      origin: 'node-b',
      onGap: () => {},
      log: silentLogger,
      leaseMs,
      heartbeatMs,
    })
    try {
      expect(source.presence.peers()).toEqual(['node-a'])
      expect(source.presence.announcing()).toBe(true)
      // It had stored nothing unannounced: it said no here, which would have made a's subscribers replay
      // (a heard its hello, answered, and b waited for that answer).
      expect(resyncs.get('node-a')).toBe(0)
    } finally {
      await source.close()
    }
    await until(() => !sourceOf.get(a)!.presence.announcing())
    // A node that beat a moment ago is a peer until its lease runs out.
    await beat('node-z', new Date(Date.now() - 60_000 + 300))
    await until(() => sourceOf.get(a)!.presence.peers().includes('node-z'))
    expect(sourceOf.get(a)!.presence.announcing()).toBe(true)
    await until(() => !sourceOf.get(a)!.presence.peers().includes('node-z'))
    expect(sourceOf.get(a)!.presence.announcing()).toBe(false)
    // A node's own earlier process (it died without a clean stop) is no peer of its next one.
    await beat('node-r-before', new Date())
    const restarted = await createClusterLiveSource({
      notifications: testStore.store.notifications!,
      store: testStore.store,
      origin: 'node-r-after',
      nodeId: 'host-node-r-before',
      onGap: () => {},
      log: silentLogger,
      leaseMs,
      heartbeatMs,
    })
    try {
      expect(restarted.presence.peers()).not.toContain('node-r-before')
    } finally {
      await restarted.close()
    }
  })
})
