// A batch of `count` text-delta envelopes of one run from `fromSeq`, with each one's stored JSON, as the
// event writer hands them to a store's run-event appender.
import type { EventEnvelope } from '../../src/core/events.js'

export function runEventBatch(runId: string, fromSeq: number, count: number) {
  const envelopes: EventEnvelope[] = Array.from({ length: count }, (_, index) => ({
    v: 1,
    runId,
    seq: fromSeq + index,
    ts: '2026-01-01T00:00:00.000Z',
    type: 'text-delta',
    text: `#${fromSeq + index}`,
  }))
  return [envelopes, envelopes.map((envelope) => JSON.stringify({ text: `#${envelope.seq}` }))] as const
}
