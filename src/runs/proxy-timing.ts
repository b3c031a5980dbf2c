// Where a proxied request's time goes besides its own handling, for scripts/bench-proxy-tails.mjs: the
// proxy's work between requests, on the daemon's thread, published on diagnostics channels as the event
// pipeline's stages are (event-timing). A request that arrives while it runs waits for it. Nothing is
// published while nobody subscribes, and only the process's own code can subscribe (the tool preloads
// scripts/bench-proxy-trace.mjs), so a daemon pays a `hasSubscribers` check per batch.
import diagnostics, { type Channel } from 'node:diagnostics_channel'

/** The proxy's after-answer bookkeeping (after-answer-queue) ran: one drain of its held items. */
export const proxyBookkeepingRan = diagnostics.channel('hangar:proxy-bookkeeping')
/** A batch of the request log was stored, or failed and was written row by row (request-log-writer). */
export const proxyRequestLogWritten = diagnostics.channel('hangar:proxy-request-log-batch')

/**
 * When the work ran, on performance.now(), and how many items (requests, rows) it covered. A request-log
 * batch's span is its write's, from start to commit: on PostgreSQL that holds a round trip, during which the
 * daemon's thread is free.
 */
export interface ProxyWorkMessage {
  startedAt: number
  endedAt: number
  items: number
}

/** When a piece of work starts: the time, or undefined while nobody listens on `channel` (nothing to publish). */
export function workStarted(channel: Channel): number | undefined {
  return channel.hasSubscribers ? performance.now() : undefined
}

/** Publishes the work begun at `startedAt` (workStarted's) as ended now, when someone listened then. */
export function workEnded(channel: Channel, startedAt: number | undefined, items: number): void {
  if (startedAt === undefined) return
  channel.publish({ startedAt, endedAt: performance.now(), items } satisfies ProxyWorkMessage)
}
