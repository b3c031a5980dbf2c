// This daemon's place among the nodes sharing the store: a heartbeat row every `heartbeatMs`, and on each
// beat a look for nodes whose lease ran out (no heartbeat for `leaseMs`, no clean stop). Their unfinished
// runs are marked `interrupted` here, so clients see them end; their processes are left alone — they run on
// another machine, or belong to a process this node does not own.
import os from 'node:os'
import type { Logger } from '../core/logger.js'
import type { Store } from '../store/store.js'
import type { ActionsService } from './actions-service.js'
import type { RunService } from './run-service.js'

export interface NodeHeartbeatOptions {
  store: Store
  runs: Pick<RunService, 'interrupt'>
  /** Fails the actions a lost node was applying (as interrupted). */
  actions?: Pick<ActionsService, 'interruptNode'>
  node: { id: string; bootId: string; version: string; startedAt: Date }
  heartbeatMs: number
  leaseMs: number
  clock?: () => Date
  log: Logger
}

export function createNodeHeartbeat(options: NodeHeartbeatOptions) {
  const { store, node, log } = options
  const now = options.clock ?? (() => new Date())
  let timer: NodeJS.Timeout | undefined
  let url: string | null = null
  let beating: Promise<void> | undefined

  /** Interrupts the unfinished runs of nodes whose lease expired; returns how many. */
  async function interruptOrphans(): Promise<number> {
    const since = new Date(now().getTime() - options.leaseMs).toISOString()
    let interrupted = 0
    for (const dead of await store.nodes.expiredSince(since)) {
      if (dead === node.id) continue
      const why = `node ${dead} stopped answering (no heartbeat for ${Math.round(options.leaseMs / 1000)} s)`
      await options.actions?.interruptNode(dead, why)
      // Its runs under way, and the queued ones only it could have run (they need its files).
      const orphans = [
        ...(await store.runQueue.activeOnNode(dead)),
        ...(await store.runQueue.queuedPinnedTo(dead)),
      ]
      for (const run of orphans) {
        try {
          await options.runs.interrupt(
            run.userId,
            run.id,
            `node ${dead} stopped answering (no heartbeat for ${Math.round(options.leaseMs / 1000)} s)`,
          )
          interrupted++
        } catch (error) {
          // Another live node interrupted it first (its run-end took the same seq).
          log.debug('run already interrupted elsewhere', { runId: run.id, error })
        }
      }
    }
    return interrupted
  }

  /** One heartbeat and one look for lost nodes; the number of runs it interrupted. */
  async function beat(): Promise<number> {
    try {
      await store.nodes.heartbeat(
        {
          id: node.id,
          url,
          host: os.hostname(),
          pid: process.pid,
          bootId: node.bootId,
          version: node.version,
          startedAt: node.startedAt.toISOString(),
        },
        now().toISOString(),
      )
      const interrupted = await interruptOrphans()
      if (interrupted > 0) log.warn('interrupted the runs of a node whose lease expired', { interrupted })
      return interrupted
    } catch (error) {
      // A database that does not answer degrades the cluster view, not the daemon.
      log.error('heartbeat failed', { error })
      return 0
    }
  }

  const tick = () => {
    beating ??= beat()
      .then(() => {})
      .finally(() => (beating = undefined))
  }

  return {
    beat,
    /** Writes the first heartbeat now, then one every `heartbeatMs`. */
    async start(listenUrl: string | null): Promise<void> {
      url = listenUrl
      await beat()
      timer = setInterval(tick, options.heartbeatMs)
      timer.unref()
    },
    /** A clean stop: the row stays, marked stopped, so no other node takes this one for dead. */
    async stop(): Promise<void> {
      if (timer) clearInterval(timer)
      await beating
      await store.nodes.stopped(node.id, node.bootId, now().toISOString()).catch(() => {})
    },
  }
}

export type NodeHeartbeat = ReturnType<typeof createNodeHeartbeat>
