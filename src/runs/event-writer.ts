// The one event writer. Every event of a run goes through it: secrets are redacted, adjacent text and
// reasoning deltas are coalesced, a dense per-run `seq` is assigned, the batch is stored in one statement,
// and only then is it delivered to subscribers. A reconnecting client or a restarted daemon therefore
// sees exactly what was shown.
import type { AgentEvent, EventEnvelope } from '../core/events.js'
import { PROTOCOL_VERSION } from '../core/events.js'
import { type Clock, systemClock } from '../core/ids.js'
import type { Redactor } from '../core/redact.js'
import type { RunsRepository } from '../store/repositories/runs-repository.js'

export const DEFAULT_BATCH_DELAY_MS = 5

export interface EventWriterOptions {
  runs: Pick<RunsRepository, 'appendEvents'>
  runId: string
  redactor: Redactor
  clock?: Clock
  /** How long a batch may gather before it is stored. */
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
      previous.type === event.type
    ) {
      merged[merged.length - 1] = { type: event.type, text: previous.text + event.text }
    } else merged.push(event)
  }
  return merged
}

export function createEventWriter(options: EventWriterOptions): EventWriter {
  const clock = options.clock ?? systemClock
  const delay = options.batchDelayMs ?? DEFAULT_BATCH_DELAY_MS
  let seq = options.afterSeq ?? 0
  let queue: AgentEvent[] = []
  let timer: NodeJS.Timeout | undefined
  let chain: Promise<void> = Promise.resolve()
  let failure: unknown

  const persist = async () => {
    timer = undefined
    if (queue.length === 0) return
    const batch = coalesce(queue)
    queue = []
    const ts = clock().toISOString()
    const envelopes = batch.map((event): EventEnvelope => ({
      ...options.redactor.value(event),
      v: PROTOCOL_VERSION,
      runId: options.runId,
      seq: ++seq,
      ts,
    }))
    await options.runs.appendEvents(envelopes)
    options.onDelivered?.(envelopes)
  }

  const schedule = () => {
    chain = chain.then(persist).catch((error: unknown) => {
      failure ??= error
    })
    return chain
  }

  return {
    write(event) {
      queue.push(event)
      if (!timer) timer = setTimeout(schedule, delay)
    },
    async flush() {
      if (timer) {
        clearTimeout(timer)
        timer = undefined
      }
      await schedule()
      if (failure) throw failure
    },
    lastSeq: () => seq,
  }
}
