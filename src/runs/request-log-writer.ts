// The proxy's request log, written behind: a proxied request queues its row and goes on; the queue is
// stored within `flushMs` (by default 25 ms on SQLite, 50 on PostgreSQL) in one transaction, and at once by
// flush() — before anything reads the log back to decide (a run's totals at its end, a budget's re-seed) —
// and by close(), on a clean stop. A crash loses at most the rows of the last interval (and their cost, for
// budgets).
//
// Once the oldest row has waited most of the interval, the batch is stored at the first moment no proxied
// request is in flight (`busy`: a row queued then, or the timer looking again each millisecond), and when
// the interval is up whatever is in flight. On SQLite the write holds the daemon's thread (some 30 rows:
// 0.3 ms p50, 0.5 ms p90), and a write at a fixed time falls in the middle of some request as often as not:
// it was the largest part of the proxy's 1 KB p99 (+1.08 ms against +0.69 ms with the log's writes held
// off, in 20,000 sequential requests). With a request to each of three targets in turn, 3 % of batches now
// go at the end of the interval, against 14 % when only a queued row looked for a pause.
import type { Logger } from '../core/logger.js'
import type { NewProxyRequest } from '../store/repositories/proxy-requests-repository.js'
import type { Store } from '../store/store.js'
import { proxyRequestLogWritten, workEnded, workStarted } from './proxy-timing.js'

/**
 * On PostgreSQL a batch is a round trip, three statements parsed and planned, a COPY set up and a backend
 * woken on the daemon's cores: with 16 clients on two cores, 50 ms between batches gave the proxy 5-9 %
 * more throughput than 25 ms in three A/B runs (scripts/bench-proxy-ab.mjs, issue 19), at twice the rows a
 * crash may lose. On SQLite a batch is a transaction on the daemon's own thread, which holds the request that
 * stores it: a shorter interval keeps that stall short.
 */
export const REQUEST_LOG_FLUSH_MS: Record<Store['engine'], number> = { sqlite: 25, postgres: 50 }
/** The share of the interval after which a row queued while no request is in flight stores the batch. */
const STORE_ON_REQUEST_END_AFTER = 0.8

export interface RequestLogWriter {
  /** Queues a row; stored within the flush interval. */
  add(userId: string, row: NewProxyRequest): void
  /** Resolves once every row queued before the call is stored (or its failure logged). */
  flush(): Promise<void>
  /** Stores what is queued; rows added afterwards are stored at once. */
  close(): Promise<void>
  /** How many rows wait for the next flush. */
  readonly queued: number
}

/** Unref'd: a pending batch never keeps the process alive; a clean stop flushes it through close(). */
const later = (work: () => void, ms: number) => setTimeout(work, ms).unref()

export function createRequestLogWriter(options: {
  store: Store
  log: Logger
  flushMs?: number
  /** Milliseconds on a monotonic clock (tests). */
  now?: () => number
  /** Whether proxied requests are in flight: a batch due early waits for a moment they are not. */
  busy?: () => boolean
}): RequestLogWriter {
  const { store, log } = options
  const flushMs = options.flushMs ?? REQUEST_LOG_FLUSH_MS[store.engine]
  const now = options.now ?? (() => performance.now())
  let queue: { userId: string; row: NewProxyRequest }[] = []
  /** When the oldest queued row was queued. */
  let oldestAt = 0
  let timer: NodeJS.Timeout | undefined
  let closed = false
  // One batch at a time, in order: a flush waits for the batches before it.
  let writing: Promise<void> = Promise.resolve()

  async function write(batch: { userId: string; row: NewProxyRequest }[]): Promise<void> {
    if (batch.length === 0) return
    const startedAt = workStarted(proxyRequestLogWritten)
    await storeBatch(batch)
    workEnded(proxyRequestLogWritten, startedAt, batch.length)
  }

  async function storeBatch(batch: { userId: string; row: NewProxyRequest }[]): Promise<void> {
    try {
      // The whole batch in one statement (one transaction), all or none.
      await store.proxyRequestLog.recordMany(batch)
    } catch {
      // One bad row (its run deleted meanwhile) must not cost the others: each on its own.
      for (const { userId, row } of batch)
        await store
          .forUser(userId)
          .proxyRequests.record(row)
          .catch((error: unknown) => log.error('could not record a proxied request', { error }))
    }
  }

  /**
   * The timer: the batch is due. It is stored at once when no request is in flight or the interval is up;
   * else looked at again a millisecond later. (Requests come at a steady pace: a row is queued a millisecond
   * after each answer, and when that falls inside the next request, so it does for every row of a batch.
   * The timer's own pace is another, and finds the pauses.)
   */
  function due(): void {
    timer = undefined
    if (queue.length === 0) return
    if (!options.busy?.() || now() - oldestAt >= flushMs) return void flush()
    timer = later(due, 1)
  }

  function flush(): Promise<void> {
    clearTimeout(timer)
    timer = undefined
    // Taken now, not when the batch before it is written: rows queued while a write is in flight (a COPY's
    // round trip on PostgreSQL) wait for their own interval instead of asking for a batch each.
    const batch = queue
    queue = []
    writing = writing.then(() => write(batch))
    return writing
  }

  return {
    add(userId, row) {
      queue.push({ userId, row })
      if (closed) return void flush()
      const at = now()
      if (queue.length === 1) oldestAt = at
      if (at - oldestAt >= flushMs * STORE_ON_REQUEST_END_AFTER && !options.busy?.()) return void flush()
      timer ??= later(due, flushMs * STORE_ON_REQUEST_END_AFTER)
    },
    flush,
    async close() {
      closed = true
      await flush()
    },
    get queued() {
      return queue.length
    },
  }
}
