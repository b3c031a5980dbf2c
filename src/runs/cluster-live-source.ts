// Live events across the daemons sharing one PostgreSQL. A batch published here reaches this node's
// subscribers at once, and the other nodes by a NOTIFY naming the run and its seq range (never the events:
// they are stored already, and a payload is small). The store sends that NOTIFY in the statement that
// stores the batch (announceRunEvents): it is committed with the rows, so the other nodes hear of every
// stored batch in commit order, even one this node died before publishing, and it costs no round trip
// and commit of its own. A node that hears of a run reads the rows it has not delivered yet, so notices
// that arrive late or twice change nothing, and the bus's per-run seq bookkeeping keeps the order. When the
// notification connection drops, the bus is told to resync. A daemon alone on its database announces
// nothing: cluster-presence.ts decides when it does.
import type { Logger } from '../core/logger.js'
import type { StoreNotifications } from '../store/pg-notifications.js'
import type { Store } from '../store/store.js'
import { type ClusterPresence, createClusterPresence, presenceOf } from './cluster-presence.js'
import { createInProcessLiveSource, type LiveBatch, type LiveSource } from './event-bus.js'

export const EVENTS_CHANNEL = 'hangar_events'

/** What a NOTIFY carries: the sending process, whose run, and which seqs were stored. */
interface EventNotice {
  origin: string
  userId: string
  conversationId: string | null
  runId: string
  fromSeq: number
  toSeq: number
}

function parsePayload(payload: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(payload)
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

function noticeOf(parsed: Record<string, unknown>): EventNotice | undefined {
  const notice = parsed as Partial<EventNotice>
  if (typeof notice.origin !== 'string' || typeof notice.userId !== 'string') return undefined
  if (typeof notice.runId !== 'string' || typeof notice.toSeq !== 'number') return undefined
  if (typeof notice.fromSeq !== 'number') return undefined
  return { ...(notice as EventNotice), conversationId: notice.conversationId ?? null }
}

export interface ClusterLiveSource extends LiveSource {
  /** Who listens besides this daemon, and whether it announces what it stores (cluster-presence.ts). */
  presence: Pick<ClusterPresence, 'announcing' | 'peers'>
  close(): Promise<void>
}

export async function createClusterLiveSource(options: {
  notifications: StoreNotifications
  store: Store
  /** Unique per process (the boot id): a node ignores its own notices, it delivered those already. */
  origin: string
  onGap: () => void
  log: Logger
  /** This node's id (its earlier processes are no peers). */
  nodeId?: string
  /** The nodes' lease and heartbeat period (server.leaseMs, server.heartbeatMs): who else listens. */
  leaseMs: number
  heartbeatMs: number
}): Promise<ClusterLiveSource> {
  const { notifications, store, origin, log } = options
  const presence = createClusterPresence({
    notifications,
    store,
    channel: EVENTS_CHANNEL,
    origin,
    ...(options.nodeId !== undefined && { nodeId: options.nodeId }),
    leaseMs: options.leaseMs,
    checkMs: options.heartbeatMs,
    onMissed: options.onGap,
    log,
  })
  const local = createInProcessLiveSource()
  // The last seq of each remote run delivered here; forgotten at its run-end.
  const delivered = new Map<string, number>()
  let receiving: Promise<void> = Promise.resolve()

  async function catchUp(notice: EventNotice): Promise<void> {
    // A run first heard of mid-way starts at this notice: its earlier events went to subscribers that
    // replayed them from the store.
    const from = delivered.get(notice.runId) ?? notice.fromSeq - 1
    if (notice.toSeq <= from) return
    const envelopes = await store
      .forUser(notice.userId)
      .runs.listEvents(notice.runId, { afterSeq: from, limit: notice.toSeq - from })
    if (envelopes.length === 0) return
    const last = envelopes.at(-1)!
    if (last.type === 'run-end') delivered.delete(notice.runId)
    else delivered.set(notice.runId, last.seq)
    local.publish({ envelopes, userId: notice.userId, conversationId: notice.conversationId })
  }

  const stop = await notifications.listen(EVENTS_CHANNEL, {
    onPayload(payload) {
      const parsed = parsePayload(payload)
      if (!parsed) return
      const message = presenceOf(parsed)
      if (message) return presence.hear(message)
      const notice = noticeOf(parsed)
      if (!notice || notice.origin === origin) return
      // One at a time, in arrival order (= commit order of the senders).
      receiving = receiving
        .then(() => catchUp(notice))
        .catch((error: unknown) => log.warn('could not read the events of a notice', { error }))
    },
    onGap() {
      delivered.clear()
      options.onGap()
      presence.reconnected()
    },
    onError: (error) => log.warn('event notifications lost their connection', { error }),
  })

  await presence.start()

  return {
    presence,
    publish(batch: LiveBatch) {
      // The other nodes hear of it from the store's notice of the batch.
      local.publish(batch)
    },
    listen: (listener) => local.listen(listener),
    async close() {
      await presence.close()
      await stop()
    },
  }
}
