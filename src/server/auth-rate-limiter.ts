// Failed authentication, limited per client: more than `maxFailures` failed credentials (a bearer token,
// a session cookie, a sign-in link, an MCP token) within `windowMs` and the client gets 429 with
// Retry-After until the window has passed. Successes are never counted.
//
// A limited client is refused even with a valid credential, which is not even looked at: answering
// "valid" to a limited guesser would hand back the oracle the limit exists to take away. The cost is that
// a person sharing the guesser's address (or a loopback daemon's local processes) waits out at most one
// window. Memory is bounded: at most `maxClients` clients are tracked, the least recently failing
// dropped first, each with at most `maxFailures + 1` timestamps.
import type { Context } from 'hono'
import { AppError } from '../core/errors.js'
import { type Clock, systemClock } from '../core/ids.js'
import { clientAddress, type HttpPosture } from './http-posture.js'

export interface AuthRateLimiterOptions {
  maxFailures?: number
  windowMs?: number
  maxClients?: number
  clock?: Clock
}

export interface AuthRateLimiter {
  /** Throws `rate_limited` when the client is over the limit. */
  assertAllowed(client: string): void
  recordFailure(client: string): void
  /** How many clients are tracked (bounded by maxClients). */
  readonly size: number
}

export function createAuthRateLimiter(options: AuthRateLimiterOptions = {}): AuthRateLimiter {
  const maxFailures = options.maxFailures ?? 20
  const windowMs = options.windowMs ?? 10_000
  const maxClients = options.maxClients ?? 10_000
  const clock = options.clock ?? systemClock
  /** Failure times per client, oldest first; Map order is least recently failing first. */
  const failures = new Map<string, number[]>()

  const recent = (client: string, now: number): number[] => {
    const times = failures.get(client)
    if (!times) return []
    const kept = times.filter((time) => time > now - windowMs)
    if (kept.length === 0) failures.delete(client)
    else failures.set(client, kept)
    return kept
  }

  return {
    assertAllowed(client) {
      const now = clock().getTime()
      const times = recent(client, now)
      if (times.length <= maxFailures) return
      // Allowed again once enough failures have left the window to bring the count back to the limit.
      const freeAt = times[times.length - maxFailures - 1]! + windowMs
      const retryAfterSeconds = Math.max(1, Math.ceil((freeAt - now) / 1000))
      throw new AppError('rate_limited', `too many failed sign-ins from this client`, {
        hint: `wait ${retryAfterSeconds} s, then check the token or sign-in link you are using`,
        details: { retryAfterSeconds },
      })
    },
    recordFailure(client) {
      const now = clock().getTime()
      const times = [...recent(client, now), now].slice(-(maxFailures + 1))
      failures.delete(client)
      failures.set(client, times)
      while (failures.size > maxClients) failures.delete(failures.keys().next().value!)
    },
    get size() {
      return failures.size
    },
  }
}

/** What the app hands every authenticating route through the request context. */
export interface HttpGuards {
  posture: HttpPosture
  limiter: AuthRateLimiter
}

/**
 * Runs one credential check under the limit: refused up front when the client is limited, and counted
 * when the check fails with `unauthorized`. Only the check itself goes in here, so a request without
 * credentials (the UI asking who is signed in) is never counted.
 */
export async function checkCredential<T>(
  context: Context,
  guards: HttpGuards | undefined,
  check: () => Promise<T>,
): Promise<T> {
  if (!guards) return check()
  const client = clientAddress(context, guards.posture)
  guards.limiter.assertAllowed(client)
  try {
    return await check()
  } catch (error) {
    if (error instanceof AppError && error.code === 'unauthorized') guards.limiter.recordFailure(client)
    throw error
  }
}
