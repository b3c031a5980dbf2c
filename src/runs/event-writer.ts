// The one event writer. Every event of a run goes through it: secrets are redacted, adjacent text and
// reasoning deltas are coalesced, a dense per-run `seq` is assigned, the batch is stored in one transaction,
// and only then is it delivered to subscribers. A reconnecting client or a restarted daemon therefore
// sees exactly what was shown. A batch is what a run wrote during one turn of the event loop (plus what
// arrived while the previous batch was being stored): no timer of the writer's stands between a line and
// its client. (The SQLite store spaces its commits a couple of ms apart while streams keep it busy, and
// the PostgreSQL store has one INSERT in flight at a time: the batches of that wait go in one commit, and
// are delivered once it returns. A flush, a run's end, cuts its last batch at once and has it stored
// without that wait: nothing comes after it to share a commit with.)
import { rememberEventJson } from '../core/envelope-json.js'
import type { AgentEvent, EventEnvelope } from '../core/events.js'
import { PROTOCOL_VERSION } from '../core/events.js'
import { type Clock, systemClock } from '../core/ids.js'
import type { Redactor } from '../core/redact.js'
import type { RunsRepository } from '../store/repositories/runs-repository.js'
import { eventsStored, eventsStoring } from './event-timing.js'

/** 0: a batch is stored on the next turn of the event loop (setImmediate), not after a timer. */
export const DEFAULT_BATCH_DELAY_MS = 0
/**
 * A streamed secret arrives in pieces, and a piece alone matches no shape. So the trailing run of token
 * characters of the last delta of a batch waits for the next one (coalesced with it, then redacted as a
 * whole), at most this long when nothing follows.
 */
export const SECRET_TAIL_HOLD_MS = 200
const SECRET_TAIL = /[\w+/=-]+$/
const STORE_NOW = { now: true } as const
/** Longer runs are no token still being typed out; they go as they are (already redacted). */
const MAX_HELD_CHARACTERS = 512

export interface EventWriterOptions {
  runs: Pick<RunsRepository, 'appendEvents'>
  runId: string
  redactor: Redactor
  clock?: Clock
  /** How long a batch may gather before it is stored; 0 (the default) = until the next turn. */
  batchDelayMs?: number
  /** The seq of the last event already stored for this run (a continuation of an earlier writer). */
  afterSeq?: number
  /** Called with each stored batch, in order. */
  onDelivered?: (envelopes: EventEnvelope[]) => void
}

export interface EventWriter {
  write(event: AgentEvent): void
  /** Stores everything written so far. */
  flush(): Promise<void>
  /** The seq of the last stored event. */
  lastSeq(): number
}

function coalesce(events: AgentEvent[]): AgentEvent[] {
  const merged: AgentEvent[] = []
  for (const event of events) {
    const previous = merged.at(-1)
    if (
      previous &&
      (event.type === 'text-delta' || event.type === 'reasoning-delta') &&
      previous.type === event.type &&
      previous.parentId === event.parentId
    ) {
      merged[merged.length - 1] = { ...previous, text: previous.text + event.text }
    } else merged.push(event)
  }
  return merged
}

// The batches due on the next turn, of every writer: cut together in one callback, so that the store can
// put the batches of all runs of a turn in one transaction.
const dueNextTurn = new Set<() => void>()
let turnScheduled = false
function runTurn(): void {
  turnScheduled = false
  const due = [...dueNextTurn]
  dueNextTurn.clear()
  for (const work of due) work()
}

/** Runs `work` after `ms` (0: on the next turn of the event loop); returns what cancels it. */
function later(work: () => void, ms: number): () => void {
  if (ms <= 0) {
    dueNextTurn.add(work)
    if (!turnScheduled) {
      turnScheduled = true
      setImmediate(runTurn)
    }
    return () => dueNextTurn.delete(work)
  }
  const timeout = setTimeout(work, ms)
  return () => clearTimeout(timeout)
}

export function createEventWriter(options: EventWriterOptions): EventWriter {
  const clock = options.clock ?? systemClock
  const delay = options.batchDelayMs ?? DEFAULT_BATCH_DELAY_MS
  let seq = options.afterSeq ?? 0
  let queue: AgentEvent[] = []
  /** Cancels the scheduled batch (or the wait of a held tail). */
  let cancelPending: (() => void) | undefined
  /** The timer waits for more of a held tail (not for a batch to gather). */
  let holding = false
  /** The tail held back by the last batch, while nothing has been written after it. */
  let held: AgentEvent | undefined
  let chain: Promise<void> = Promise.resolve()
  let failure: unknown

  /** Splits off the last delta's trailing token characters, unless they already waited once. */
  const holdTail = (batch: AgentEvent[]): AgentEvent | undefined => {
    const last = batch.at(-1)
    if (!last || (last.type !== 'text-delta' && last.type !== 'reasoning-delta')) return undefined
    const tail = SECRET_TAIL.exec(last.text)?.[0]
    if (!tail || tail.length > MAX_HELD_CHARACTERS) return undefined
    const kept = last.text.slice(0, last.text.length - tail.length)
    if (kept) batch[batch.length - 1] = { ...last, text: kept }
    else batch.pop()
    return { ...last, text: tail }
  }

  const persist = async (final: boolean) => {
    cancelPending = undefined
    holding = false
    if (queue.length === 0) return
    // Nothing came after the held tail while it waited: it goes now.
    const expired = queue.length === 1 && queue[0] === held
    const batch = coalesce(queue)
    queue = []
    held = final || expired ? undefined : holdTail(batch)
    if (held) {
      queue.unshift(held)
      if (!cancelPending) {
        holding = true
        cancelPending = later(() => void schedule(false), SECRET_TAIL_HOLD_MS)
      }
    }
    if (batch.length === 0) return
    const ts = clock().toISOString()
    const envelopes = new Array<EventEnvelope>(batch.length)
    for (let index = 0; index < batch.length; index++) {
      // The redactor returns a copy of its own: it becomes the envelope, rather than copied once more.
      const event = options.redactor.value(batch[index]!)
      const envelope = event as unknown as Record<string, unknown>
      rememberEventJson(envelope as unknown as EventEnvelope, event)
      envelope.v = PROTOCOL_VERSION
      envelope.runId = options.runId
      envelope.seq = seq + index + 1
      envelope.ts = ts
      envelopes[index] = envelope as unknown as EventEnvelope
    }
    seq += batch.length
    if (eventsStoring.hasSubscribers) eventsStoring.publish({ envelopes })
    // The last batch (flush: a run's end) has nothing after it to share a commit with: it goes at once.
    await options.runs.appendEvents(envelopes, final ? STORE_NOW : undefined)
    if (eventsStored.hasSubscribers) eventsStored.publish({ envelopes })
    options.onDelivered?.(envelopes)
  }

  const schedule = (final: boolean) => {
    chain = chain
      .then(() => persist(final))
      .catch((error: unknown) => {
        failure ??= error
      })
    return chain
  }

  return {
    write(event) {
      queue.push(event)
      // A new event ends the wait of a held tail: both go with the next batch, at the usual delay.
      if (cancelPending && holding) {
        cancelPending()
        cancelPending = undefined
        holding = false
      }
      if (!cancelPending) cancelPending = later(() => void schedule(false), delay)
    },
    async flush() {
      if (cancelPending) {
        cancelPending()
        cancelPending = undefined
        holding = false
      }
      // The end of the stream: its last batch is cut now, not once the batches before it are stored, and
      // goes to the store at once (STORE_NOW) with those still waiting for their commit, in order, instead
      // of each of them waiting for the commit interval in turn.
      const last = persist(true).catch((error: unknown) => {
        failure ??= error
      })
      chain = Promise.all([chain, last]).then(() => undefined)
      await chain
      if (failure) throw failure
    },
    lastSeq: () => seq,
  }
}
