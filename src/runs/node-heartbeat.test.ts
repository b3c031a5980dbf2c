import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import { silentLogger } from '../core/logger.js'
import type { Store } from '../store/store.js'
import { createNodeHeartbeat } from './node-heartbeat.js'

describe.each(STORE_ENGINES)('node heartbeat ($name)', (engine) => {
  let testStore: TestStore
  let store: Store
  let now: Date
  const interrupted: { runId: string; reason: string }[] = []

  const nodeNamed = (id: string) =>
    createNodeHeartbeat({
      store,
      runs: {
        interrupt: async (_userId, runId, reason) => {
          interrupted.push({ runId, reason })
          await store.forUser(_userId).runs.update(runId, { status: 'interrupted', reason })
        },
      },
      node: { id, bootId: `boot-${id}`, version: '0.0.0', startedAt: now },
      // Beats come from the test alone: the timer never fires while it runs.
      heartbeatMs: 60_000,
      leaseMs: 3000,
      clock: () => now,
      log: silentLogger,
    })

  beforeEach(async () => {
    testStore = await engine.open()
    store = testStore.store
    now = new Date('2026-11-22T10:00:00.000Z')
    interrupted.length = 0
  })
  afterEach(async () => {
    await testStore.dispose()
  })

  it('interrupts the runs of a node whose lease expired, and only those', async () => {
    const user = await store.users.create({ name: 'owner', role: 'owner' })
    const runs = store.forUser(user.id).runs
    const onNode = async (node: string) => {
      const run = await runs.create({ agent: 'builtin', adapter: 'builtin', prompt: 'p', cwd: '/w' })
      return (await runs.claimQueued(run.id, { node, pid: 1, bootId: `boot-${node}` }))!
    }
    const a = nodeNamed('a')
    const b = nodeNamed('b')
    const c = nodeNamed('c')
    await a.start('http://a')
    await b.start('http://b')
    await c.start('http://c')
    const runOfB = await onNode('b')
    // Queued for b's files: nobody else can run it, so it ends with b.
    const queuedForB = await runs.create({
      agent: 'builtin',
      adapter: 'builtin',
      prompt: 'p',
      cwd: '/w',
      pinnedNode: 'b',
    })
    const runOfC = await onNode('c')
    // c stops cleanly: its row says so, and nobody takes it for dead.
    await c.stop()
    now = new Date(now.getTime() + 2000)
    expect(await a.beat()).toBe(0)
    // b falls silent past its lease; a notices on its next beat.
    now = new Date(now.getTime() + 2000)
    expect(await a.beat()).toBe(2)
    expect(await a.beat()).toBe(0)
    const reason = 'node b stopped answering (no heartbeat for 3 s)'
    expect(interrupted).toEqual([
      { runId: runOfB.id, reason },
      { runId: queuedForB.id, reason },
    ])
    expect((await runs.get(runOfC.id))?.status).toBe('preparing')
    const nodes = await store.nodes.list()
    expect(nodes.map((node) => [node.id, node.url, node.stoppedAt !== null])).toEqual([
      ['a', 'http://a', false],
      ['b', 'http://b', false],
      ['c', 'http://c', true],
    ])
    await a.stop()
    await b.stop()
  })
})
