// Issue 17 item 10: the failed-auth limit keeps bounded memory however many clients guess, and frees a
// client exactly when its failures leave the window.
import { describe, expect, it } from 'vitest'
import { createAuthRateLimiter } from './auth-rate-limiter.js'

describe('createAuthRateLimiter', () => {
  it('tracks at most maxClients clients, dropping the least recently failing first', () => {
    const limiter = createAuthRateLimiter({ maxClients: 100, maxFailures: 2 })
    for (let client = 0; client < 5000; client++)
      for (let attempt = 0; attempt < 5; attempt++)
        limiter.recordFailure(`10.0.${client >> 8}.${client & 255}`)
    expect(limiter.size).toBe(100)
    expect(() => limiter.assertAllowed('10.0.19.135')).toThrow(/too many failed sign-ins/)
    expect(() => limiter.assertAllowed('10.0.0.0')).not.toThrow()
  })

  it('limits after more than maxFailures in the window and frees the client as they leave it', () => {
    let now = 0
    const limiter = createAuthRateLimiter({ maxFailures: 3, windowMs: 10_000, clock: () => new Date(now) })
    for (const at of [0, 1000, 2000]) {
      now = at
      limiter.recordFailure('a')
      limiter.assertAllowed('a')
    }
    now = 3000
    limiter.recordFailure('a')
    expect(() => limiter.assertAllowed('a')).toThrow(
      expect.objectContaining({ code: 'rate_limited', details: { retryAfterSeconds: 7 } }),
    )
    now = 10_000
    limiter.assertAllowed('a')
  })
})
