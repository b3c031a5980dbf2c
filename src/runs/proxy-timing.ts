// Where a proxied request's time goes besides its own handling, for scripts/bench-proxy-tails.mjs: the
// proxy's work between requests, on the daemon's thread, published on diagnostics channels as the event
// pipeline's stages are (event-timing). A request that arrives while it runs waits for it. Nothing is
// published while nobody subscribes, and only the process's own code can subscribe (the tool preloads
// scripts/bench-proxy-trace.mjs), so a daemon pays a `hasSubscribers` check per batch.
import diagnostics from 'node:diagnostics_channel'

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
