// Server-Sent Events from a bus subscription. The body is a pull-based stream: each event becomes one chunk
// the moment the client's connection can take it, so nothing waits in a buffer, and a client that stops
// reading stops the pulls. Its subscription's bounded queue absorbs the difference until the bus ends it as
// lagging; the client then reconnects with its last id (`<seq>` on a run stream, `<runId>:<seq>` on a
// conversation stream) and replays the rest from the store.
import { ServerResponse } from 'node:http'
import type { Context } from 'hono'
import { AppError } from '../core/errors.js'
import { envelopeJson } from '../core/envelope-json.js'
import { hiddenSlot } from '../core/hidden-slot.js'
import type { EventEnvelope } from '../core/events.js'
import type { EventPosition, Subscription } from '../runs/event-bus.js'
import { eventSent } from '../runs/event-timing.js'

export const DEFAULT_KEEP_ALIVE_MS = 15_000
/** How long a client may take to read the end of a stream before its connection is cut. */
export const DEFAULT_STALL_TIMEOUT_MS = 30_000

const KEEP_ALIVE = ': keep-alive\n\n'
const LAGGING_NOTICE = ': lagging: reconnect with Last-Event-ID\n\n'
const FAILED_NOTICE = ': failed: reconnect with Last-Event-ID\n\n'

export interface SseOptions {
  /** The `id:` of an envelope; see runEventId and conversationEventId. */
  idOf: (envelope: EventEnvelope) => string
  /** Proxies and browsers drop connections that stay silent; a comment line every so often keeps it up. */
  keepAliveMs?: number
  stallTimeoutMs?: number
  /** Also name each event after its type (`event: text-delta`); EventSource's onmessage then sees none. */
  namedEvents?: boolean
  /** A failure to read the store mid-stream: the stream ends and the client resumes from its last id. */
  onError?: (error: unknown) => void
}

export const runEventId = (envelope: EventEnvelope): string => String(envelope.seq)
export const conversationEventId = (envelope: EventEnvelope): string => `${envelope.runId}:${envelope.seq}`

/** One event: `id:`, optionally `event:`, and the envelope as one `data:` line (JSON has no raw newlines). */
export function formatSseEvent(envelope: EventEnvelope, id: string, named = false): string {
  const event = named ? `event: ${envelope.type}\n` : ''
  return `id: ${id}\n${event}data: ${envelopeJson(envelope)}\n\n`
}

const encoder = new TextEncoder()
/**
 * Each envelope's bytes as last encoded. The bus hands the same (stored, never changed) envelope object to
 * every subscriber, so a batch fanned out to many clients is serialised and encoded once, not per client.
 */
const encodedEvents = hiddenSlot<{ id: string; named: boolean; bytes: Uint8Array }>('sseEncoded')

/** formatSseEvent as bytes, shared by every stream that sends this envelope with this id and form. */
export function sseEventBytes(envelope: EventEnvelope, id: string, named = false): Uint8Array {
  const cached = encodedEvents.get(envelope)
  if (cached && cached.id === id && cached.named === named) return cached.bytes
  const bytes = encoder.encode(formatSseEvent(envelope, id, named))
  encodedEvents.set(envelope, { id, named, bytes })
  return bytes
}

export function streamSubscription(
  context: Context,
  subscription: Subscription,
  options: SseOptions,
): Response {
  const events = subscription[Symbol.asyncIterator]()
  const keepAliveMs = options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS
  const stallTimeoutMs = options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS
  const signal = context.req.raw.signal
  let keepAlive: NodeJS.Timeout | undefined
  let stallTimer: NodeJS.Timeout | undefined
  let open = true
  let pulling = false

  const release = () => {
    clearInterval(keepAlive)
    signal.removeEventListener('abort', cancel)
    subscription.close()
  }
  // The client went away (or the server closed the socket): stop everything, including the cut timer.
  function cancel() {
    open = false
    clearTimeout(stallTimer)
    release()
  }
  // Ends the body once, after its last chunk. A client that is not reading would never take that end,
  // leaving its connection waiting to drain; it gets stallTimeoutMs to do so.
  const finish = (controller: ReadableStreamDefaultController<Uint8Array>, notice?: string) => {
    if (!open) return
    open = false
    release()
    if (notice) controller.enqueue(encoder.encode(notice))
    controller.close()
    stallTimer = setTimeout(() => cutConnection(context), stallTimeoutMs)
    stallTimer.unref()
  }

  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (signal.aborted) return cancel()
      signal.addEventListener('abort', cancel, { once: true })
      keepAlive = setInterval(() => {
        // Only into an empty queue: a client that is not reading needs no more bytes.
        if (open && (controller.desiredSize ?? 0) > 0) controller.enqueue(encoder.encode(KEEP_ALIVE))
      }, keepAliveMs)
      keepAlive.unref()
      // Lagging (or a bus shutting down) is decided elsewhere while this stream may be blocked on a client
      // that stopped reading, so it is acted on here rather than on a pull that may never come. An ending
      // met by a pull in flight (run-end, a failed read) is the pull's to handle.
      void subscription.ended.then((reason) => {
        if (reason === 'lagging') finish(controller, LAGGING_NOTICE)
        else if (!pulling) finish(controller)
      })
    },
    async pull(controller) {
      pulling = true
      try {
        const next = await events.next()
        pulling = false
        if (!open) return
        if (next.done) return finish(controller)
        const { value } = next
        controller.enqueue(sseEventBytes(value, options.idOf(value), options.namedEvents))
        if (eventSent.hasSubscribers) eventSent.publish({ envelope: value })
      } catch (error) {
        pulling = false
        if (!open) return
        options.onError?.(error)
        finish(controller, FAILED_NOTICE)
      }
    },
    cancel,
  })

  return context.body(body, 200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache',
    // nginx buffers responses unless told not to.
    'X-Accel-Buffering': 'no',
  })
}

/**
 * Destroys the Node response under @hono/node-server if it has not finished: a client that stopped reading
 * keeps it waiting for its socket to drain, so ending the body alone would hold the connection forever.
 */
function cutConnection(context: Context): void {
  const env: unknown = context.env
  if (typeof env !== 'object' || env === null || !('outgoing' in env)) return
  const { outgoing } = env
  if (outgoing instanceof ServerResponse && !outgoing.writableFinished) outgoing.destroy()
}

const RUN_EVENT_ID = /^\d{1,15}$/
const CONVERSATION_EVENT_ID = /^(run_[0-9A-Za-z]{1,64}):(\d{1,15})$/

/**
 * Where a reconnecting client left off: the `Last-Event-ID` header (EventSource sends it by itself), else
 * `?lastEventId=` for clients that cannot set headers. The header wins, because an EventSource that
 * reconnects keeps its original URL. Null when neither is there; a malformed id is a 400.
 */
export function parseLastEventId(context: Context, form: 'run'): number | null
export function parseLastEventId(context: Context, form: 'conversation'): EventPosition | null
export function parseLastEventId(
  context: Context,
  form: 'run' | 'conversation',
): number | EventPosition | null {
  const value = context.req.header('last-event-id') || context.req.query('lastEventId')
  if (!value) return null
  const trimmed = value.trim()
  if (form === 'run') {
    if (RUN_EVENT_ID.test(trimmed)) return Number(trimmed)
  } else {
    const match = CONVERSATION_EVENT_ID.exec(trimmed)
    if (match) return { runId: match[1]!, seq: Number(match[2]) }
  }
  const expected = form === 'run' ? '<seq>' : '<runId>:<seq>'
  throw new AppError('invalid_request', `Last-Event-ID must be ${expected} on a ${form} stream`, {
    details: { lastEventId: value.slice(0, 100) },
  })
}
