// The proxy's request log, written behind: a proxied request queues its row and goes on; the queue is
// stored every `flushMs` (default 25 ms) in one transaction, and at once by flush() — before anything
// reads the log back to decide (a run's totals at its end, a budget's re-seed) — and by close(), on a
// clean stop. A crash loses at most the rows of the last interval (and their cost, for budgets).
import type { Logger } from '../core/logger.js'
import type { NewProxyRequest } from '../store/repositories/proxy-requests-repository.js'
import type { Store } from '../store/store.js'

export const REQUEST_LOG_FLUSH_MS = 25

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

export function createRequestLogWriter(options: {
  store: Store
  log: Logger
  flushMs?: number
}): RequestLogWriter {
  const { store, log } = options
  const flushMs = options.flushMs ?? REQUEST_LOG_FLUSH_MS
  let queue: { userId: string; row: NewProxyRequest }[] = []
  let timer: NodeJS.Timeout | undefined
  let closed = false
  // One batch at a time, in order: a flush waits for the batches before it.
  let writing: Promise<void> = Promise.resolve()

  async function write(batch: { userId: string; row: NewProxyRequest }[]): Promise<void> {
    if (batch.length === 0) return
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

  function flush(): Promise<void> {
    clearTimeout(timer)
    timer = undefined
    writing = writing.then(() => {
      const batch = queue
      queue = []
      return write(batch)
    })
    return writing
  }

  return {
    add(userId, row) {
      queue.push({ userId, row })
      if (closed) void flush()
      // Unref'd: a pending batch never keeps the process alive; a clean stop flushes it through close().
      else timer ??= setTimeout(() => void flush(), flushMs).unref()
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
