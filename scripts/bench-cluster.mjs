// Several daemons on one PostgreSQL, in npm run bench: how many queued runs three nodes claim per second
// together (row lock, per-agent lock and slot count included), and how long an event stored by one node
// takes to reach a subscriber of another through LISTEN/NOTIFY. Numbers only; no assertion.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { DATABASE_URL, freshSchema, percentile } from './bench-support.mjs'

export async function benchCluster(root) {
  const { openStore } = await import(path.join(root, 'dist/src/store/store.js'))
  const { createClusterLiveSource } = await import(path.join(root, 'dist/src/runs/cluster-live-source.js'))
  const { createEventBus } = await import(path.join(root, 'dist/src/runs/event-bus.js'))
  const { silentLogger } = await import(path.join(root, 'dist/src/core/logger.js'))
  let schema
  try {
    schema = await freshSchema()
  } catch (error) {
    return { skipped: `no PostgreSQL at ${DATABASE_URL} (${error.code ?? error.message})` }
  }
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-cluster-'))
  const stores = []
  try {
    for (let node = 0; node < 3; node++) stores.push(await openStore({ dataDir, url: schema.url }))
    const user = await stores[0].users.create({ name: 'bench', role: 'owner' })

    // Claims: 3000 queued runs over 10 agents, three nodes taking them as fast as they can.
    const RUNS = 3000
    const runs = stores[0].forUser(user.id).runs
    for (let index = 0; index < RUNS; index++)
      await runs.create({ agent: `agent-${index % 10}`, adapter: 'builtin', prompt: 'p', cwd: '/w' })
    const started = performance.now()
    const claimed = await Promise.all(
      stores.map(async (store, node) => {
        const scope = store.forUser(user.id).runs
        let count = 0
        for (;;) {
          const queued = await store.runQueue.queued(`n${node}`, 100)
          if (queued.length === 0) return count
          for (const run of queued) {
            const owner = { node: `n${node}`, pid: 1, bootId: `b${node}` }
            if (await scope.claimQueued(run.id, owner, { agent: run.agent, max: RUNS })) count++
          }
        }
      }),
    )
    const claimSeconds = (performance.now() - started) / 1000
    const totalClaimed = claimed.reduce((sum, count) => sum + count, 0)

    // Events: node A stores and publishes one event at a time; node B's subscriber times its arrival.
    const sources = []
    const buses = []
    for (const [index, store] of stores.slice(0, 2).entries()) {
      const source = await createClusterLiveSource({
        notifications: store.notifications,
        store,
        origin: `node-${index}`,
        onGap: () => {},
        log: silentLogger,
      })
      sources.push(source)
      buses.push(createEventBus({ source }))
    }
    const run = await runs.create({ agent: 'stream', adapter: 'builtin', prompt: 'p', cwd: '/w' })
    const EVENTS = 500
    const sentAt = new Map()
    const latencies = []
    const subscription = buses[1].subscribeRun(run.id, {
      afterSeq: 0,
      loadStored: async () => [],
    })
    const receiving = (async () => {
      for await (const envelope of subscription) {
        latencies.push(performance.now() - sentAt.get(envelope.seq))
        if (envelope.seq === EVENTS) return
      }
    })()
    for (let seq = 1; seq <= EVENTS; seq++) {
      const envelope = {
        v: 1,
        runId: run.id,
        seq,
        ts: new Date().toISOString(),
        type: 'text-delta',
        text: 'x',
      }
      // From before the append: the notice to the other nodes goes in the INSERT that stores the event
      // (postgres-run-events-appender.ts), so node B may have it before the append returns here.
      sentAt.set(seq, performance.now())
      await runs.appendEvents([envelope])
      buses[0].publish([envelope], { userId: user.id, conversationId: null })
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
    await receiving
    for (const bus of buses) bus.close()
    for (const source of sources) await source.close()
    return {
      claims: { total: totalClaimed, perSecond: totalClaimed / claimSeconds, byNode: claimed },
      latencies,
    }
  } finally {
    for (const store of stores) await store.close()
    await schema.drop().catch(() => {})
    rmSync(dataDir, { recursive: true, force: true })
  }
}

export function printClusterBench(result) {
  console.log('several daemons on one PostgreSQL:')
  if (result.skipped) {
    console.log(`  not measured: ${result.skipped}`)
    return
  }
  const { claims, latencies } = result
  console.log(
    `  run claims, 3 nodes at once: ${Math.round(claims.perSecond)} claims/s (${claims.total} runs, per node ${claims.byNode.join(' / ')})`,
  )
  console.log(
    `  event appended on node A → subscriber on node B (the append included): p50 ${percentile(latencies, 50).toFixed(2)} ms  p99 ${percentile(latencies, 99).toFixed(2)} ms  (n=${latencies.length})`,
  )
}
