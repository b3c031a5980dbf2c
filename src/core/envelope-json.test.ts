import { describe, expect, it } from 'vitest'
import { envelopeDataJson, envelopeJson, rememberEventJson } from './envelope-json.js'
import type { AgentEvent, EventEnvelope } from './events.js'

/** As the event writer makes an envelope: the event copy gains the envelope fields at its end. */
function envelopeOf(event: AgentEvent, seq = 7): EventEnvelope {
  const copy = structuredClone(event)
  const envelope = copy as unknown as EventEnvelope
  rememberEventJson(envelope, copy)
  Object.assign(copy, { v: 1, runId: 'run_01"quoted', seq, ts: '2026-01-01T00:00:00.000Z' })
  return envelope
}

const dataOf = (envelope: EventEnvelope) => {
  const { v: _v, runId: _r, seq: _s, ts: _t, type: _type, ...fields } = envelope
  return JSON.stringify(fields)
}

describe('envelope JSON', () => {
  const events: AgentEvent[] = [
    { type: 'text-delta', text: 'hé "quoted" \n line' },
    { type: 'tool-call', toolCallId: 't1', name: 'Write', input: { path: 'a', nested: [1, { b: null }] } },
    { type: 'tool-result', toolCallId: 't1', output: 'ok', isError: false, parentId: 'task' },
    { type: 'run-end', status: 'succeeded' },
    // `type` not first, and an event with no field but its type: both still come out right.
    { status: 'failed', type: 'run-end' } as AgentEvent,
    { type: 'raw', stream: 'stdout', value: '' },
  ]

  it('gives the same strings as serialising the envelope, for the store row and for SSE', () => {
    for (const event of events) {
      const envelope = envelopeOf(event)
      expect(envelopeJson(envelope)).toBe(JSON.stringify(envelope))
      expect(envelopeDataJson(envelope)).toBe(dataOf(envelope))
    }
    // Envelopes it did not see (read back from the store) are serialised as usual.
    const stored = { ...envelopeOf(events[0]!) }
    expect(envelopeJson(stored)).toBe(JSON.stringify(stored))
    expect(envelopeDataJson(stored)).toBe(dataOf(stored))
    // Nor does a copy carry the original's JSON: a copy that differs is serialised as it is.
    for (const copy of [
      { ...envelopeOf({ type: 'text-delta', text: 'first' }), text: 'copied' },
      Object.assign({}, envelopeOf({ type: 'text-delta', text: 'first' }), { text: 'copied' }),
    ]) {
      expect(envelopeJson(copy)).toBe(JSON.stringify(copy))
      expect(envelopeDataJson(copy)).toBe('{"text":"copied"}')
    }
  })

  it('cuts both from the one serialisation made when the envelope was', () => {
    const envelope = envelopeOf({ type: 'text-delta', text: 'first' })
    // Never done to a real envelope: shows that nothing serialises it again.
    ;(envelope as { text: string }).text = 'changed'
    expect(envelopeJson(envelope)).toContain('"text":"first"')
    expect(envelopeDataJson(envelope)).toBe('{"text":"first"}')
  })

  it('serialises as usual an event that has a field named like an envelope field', () => {
    const envelope = envelopeOf({ type: 'text-delta', text: 'x', ts: 'mine' } as AgentEvent)
    expect(envelopeJson(envelope)).toBe(JSON.stringify(envelope))
    expect(envelopeDataJson(envelope)).toBe(dataOf(envelope))
  })
})
