// Sends queued deliveries, off every run's path: it claims due rows from the store (one claimer per row,
// across daemons), sends each with a bounded timeout through a guarded connection (the address a name
// resolves to is checked when the socket opens), and records the outcome. A failure is retried with
// exponential backoff (jittered) up to a limit, then marked failed; every attempt shows in the channel's
// delivery log. Nothing here ever throws into a caller: a broken channel costs a log line.
import type { Logger } from '../core/logger.js'
import type { NotificationDelivery } from '../store/repositories/notifications-repository.js'
import type { Store } from '../store/store.js'
import type { OutgoingRequest } from './webhook-request.js'

export interface DeliveryWorkerOptions {
  store: Store
  node: string
  /** Builds the request of a claimed delivery (decrypts its channel's secret); undefined = channel gone. */
  requestOf: (delivery: NotificationDelivery) => Promise<OutgoingRequest | undefined>
  fetch: typeof fetch
  /** The target answered that it is gone for good (404/410): a push subscription the browser dropped. */
  onGone?: (delivery: NotificationDelivery) => Promise<void>
  log: Logger
  clock?: () => Date
  /** Per attempt (connect + response). Default 10 s. */
  timeoutMs?: number
  /** First retry delay; doubled each attempt up to maxDelayMs. Defaults 2 s and 5 min. */
  baseDelayMs?: number
  maxDelayMs?: number
  /** Attempts before a delivery is failed. Default 8. */
  maxAttempts?: number
  /** How often the queue is polled besides kicks (other processes enqueue too). Default 1 s. */
  pollMs?: number
  /** Deliveries sent at once. Default 8. */
  concurrency?: number
}

export interface DeliveryWorker {
  /** Look at the queue now (something was enqueued in this process). */
  kick(): void
  /** Settles once nothing is being sent (tests). */
  idle(): Promise<void>
  stop(): Promise<void>
}

/** Statuses a receiver answers when trying again later can help. */
function retryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 425 || status === 429 || status >= 500
}

export function backoffMs(attempt: number, baseMs: number, maxMs: number, random = Math.random): number {
  const exponential = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1))
  // Full jitter on the upper half: retries of many channels do not arrive in lockstep.
  return Math.round(exponential / 2 + (random() * exponential) / 2)
}

export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const clock = options.clock ?? (() => new Date())
  const timeoutMs = options.timeoutMs ?? 10_000
  const baseDelayMs = options.baseDelayMs ?? 2_000
  const maxDelayMs = options.maxDelayMs ?? 300_000
  const maxAttempts = options.maxAttempts ?? 8
  const pollMs = options.pollMs ?? 1_000
  const concurrency = options.concurrency ?? 8
  const repository = options.store.notificationChannels
  let stopped = false
  let running: Promise<void> | undefined
  let again = false
  const inFlight = new Set<Promise<void>>()

  async function attempt(delivery: NotificationDelivery): Promise<void> {
    let statusCode: number | null = null
    let error: string
    let retry = true
    try {
      const request = await options.requestOf(delivery)
      if (!request) {
        await repository.finishAttempt(delivery.id, options.node, {
          status: 'failed',
          error: 'the channel was removed',
          statusCode: null,
        })
        return
      }
      const response = await options.fetch(request.url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      })
      statusCode = response.status
      // The receiver's answer is not read beyond a small bound; it never reaches a log or a response.
      await response.body?.cancel().catch(() => undefined)
      if (response.status >= 200 && response.status < 300) {
        await repository.finishAttempt(delivery.id, options.node, { status: 'delivered', statusCode })
        return
      }
      error = `the receiver answered HTTP ${response.status}`
      retry = retryableStatus(response.status)
      if (response.status === 404 || response.status === 410) await options.onGone?.(delivery)
    } catch (caught) {
      error = describeFailure(caught, timeoutMs)
    }
    const exhausted = !retry || delivery.attempts >= maxAttempts
    const nextAttemptAt = new Date(
      clock().getTime() + backoffMs(delivery.attempts, baseDelayMs, maxDelayMs),
    ).toISOString()
    await repository.finishAttempt(
      delivery.id,
      options.node,
      exhausted
        ? { status: 'failed', error, statusCode }
        : { status: 'pending', nextAttemptAt, error, statusCode },
    )
    options.log.warn('notification delivery failed', {
      delivery: delivery.id,
      channel: delivery.channelId,
      attempt: delivery.attempts,
      error,
      willRetry: !exhausted,
    })
  }

  async function drain(): Promise<void> {
    do {
      again = false
      while (!stopped) {
        const free = concurrency - inFlight.size
        if (free <= 0) {
          await Promise.race(inFlight)
          continue
        }
        // A lease long enough for the attempt and the write after it.
        const leaseUntil = new Date(clock().getTime() + timeoutMs * 3).toISOString()
        const claimed = await repository.claimDue(options.node, leaseUntil, free)
        if (claimed.length === 0) break
        for (const delivery of claimed) {
          const sending: Promise<void> = attempt(delivery)
            .catch((error: unknown) => options.log.error('notification delivery crashed', { error }))
            .finally(() => inFlight.delete(sending))
          inFlight.add(sending)
        }
      }
    } while (again && !stopped)
    await Promise.all(inFlight)
  }

  function kick(): void {
    if (stopped) return
    if (running) {
      again = true
      return
    }
    running = drain()
      .catch((error: unknown) => options.log.warn('notification queue unavailable', { error }))
      .finally(() => {
        running = undefined
      })
  }

  const timer = setInterval(kick, pollMs)
  timer.unref()
  kick()

  return {
    kick,
    async idle() {
      while (running) await running
    },
    async stop() {
      stopped = true
      clearInterval(timer)
      await running
    },
  }
}

function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError' || error.name === 'AbortError')
      return `no answer within ${Math.round(timeoutMs / 1000)} s`
    // The guarded lookup's refusal names the host, never an address or a secret.
    const cause = (error as { cause?: unknown }).cause
    if (cause instanceof Error) return `${error.message}: ${cause.message}`
    return error.message
  }
  return String(error)
}
