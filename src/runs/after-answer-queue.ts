// Work the proxy does for a request once its answer is out (reading the usage, the request log's row, the
// run's `usage` event), held back until the event loop has slept: `delayMs` later, or sooner when someone
// must see its result (drain).
//
// Why not right away: the answer's write wakes the agent, and Linux often wakes it on the proxy's own core
// (a socket write is a "sync" wakeup: the waker is expected to sleep). Whatever the proxy does before it
// sleeps keeps the agent waiting for that core. With the bookkeeping done in the microtasks after the write,
// Hangar's proxy added 23-34 µs more to the p50 of a 1 KB request than with it a millisecond later, when the
// loop has slept and the agent has run (`scripts/bench-proxy-ab.mjs --latency`, issue 19).
//
// Nor while another request is in flight (`busy`): a millisecond after one answer is when the next request of
// a busy client is often on its way, and the bookkeeping then ran in the middle of it. With a request to each
// of three targets in turn, 77 of the 122 Hangar requests slower than the minimal pass-through's p99 had
// their predecessor's bookkeeping run inside them. The held work waits for the moment nothing is in flight
// (`idle`, a millisecond later again), and at most `maxHoldMs` from the first item held: under steady load
// there is no such moment.
//
// Nothing may decide on a request's bookkeeping before it is done: a run's totals and a stop drain the
// queue first (model-proxy). A budget needs only the costs, and model-proxy takes a request's cost before
// its item is queued, so the next request of a spent budget is refused without its predecessor's
// bookkeeping done.

import { proxyBookkeepingRan, workEnded, workStarted } from './proxy-timing.js'

/** The longest the work is held while requests are in flight (it counts in a crash's loss: README). */
export const MAX_HOLD_MS = 5

export interface AfterAnswerQueue<T> {
  add(item: T): void
  /** Does the held-back work now, in the order it came. */
  drain(): void
  /** No request is in flight any more: what is held is done a moment later. */
  idle(): void
  readonly size: number
}

export function createAfterAnswerQueue<T>(options: {
  work: (item: T) => void
  /** Called when `work` throws; the items after it are still done. */
  onError: (error: unknown) => void
  /** Called after a drain that did some work (what the next request would otherwise do first). */
  afterDrain?: () => void
  delayMs?: number
  /** Whether a request is in flight: the held work waits for idle(), up to maxHoldMs. */
  busy?: () => boolean
  maxHoldMs?: number
  /** Milliseconds on a monotonic clock (tests). */
  now?: () => number
}): AfterAnswerQueue<T> {
  const delayMs = options.delayMs ?? 1
  // Never shorter than the delay itself (a test holds the work for an hour).
  const maxHoldMs = Math.max(options.maxHoldMs ?? MAX_HOLD_MS, delayMs)
  const now = options.now ?? (() => performance.now())
  let items: T[] = []
  /** When the first item held was added. */
  let heldSince = 0
  let timer: NodeJS.Timeout | undefined
  /** When the timer fires (while there is one). */
  let dueAt = 0

  // Unreferenced: a stop drains what is held (model-proxy's close), the timer need not keep Node up.
  function schedule(ms: number): void {
    clearTimeout(timer)
    dueAt = now() + ms
    timer = setTimeout(due, ms).unref()
  }

  function due(): void {
    timer = undefined
    const waited = now() - heldSince
    // idle() brings it forward when the request in flight ends.
    if (items.length > 0 && options.busy?.() && waited < maxHoldMs) return schedule(maxHoldMs - waited)
    drain()
  }

  function drain(): void {
    clearTimeout(timer)
    timer = undefined
    // Taken whole first: work that adds (it never does today) goes to the next batch, not into this loop.
    const batch = items
    items = []
    const startedAt = batch.length > 0 ? workStarted(proxyBookkeepingRan) : undefined
    for (const item of batch) {
      try {
        options.work(item)
      } catch (error) {
        options.onError(error)
      }
    }
    if (batch.length > 0 && options.afterDrain)
      try {
        options.afterDrain()
      } catch (error) {
        options.onError(error)
      }
    workEnded(proxyBookkeepingRan, startedAt, batch.length)
  }

  return {
    add(item) {
      if (items.push(item) === 1) heldSince = now()
      if (timer === undefined) schedule(delayMs)
    },
    drain,
    idle() {
      if (items.length === 0) return
      const at = now()
      const wanted = Math.max(0, Math.min(delayMs, heldSince + maxHoldMs - at))
      // Only ever brought forward: after a lone request its own add() has just set the timer, and a timer is
      // not made again on every request.
      if (timer === undefined || dueAt > at + wanted) schedule(wanted)
    },
    get size() {
      return items.length
    },
  }
}
