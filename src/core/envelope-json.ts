// The JSON of the envelopes the one event writer makes, written once: the store's `data` column and every
// SSE client's `data:` line are cut from it instead of each serialising the envelope again. Kept on the
// envelope itself (a hidden slot: copies leave it behind), which is never changed once made; any other
// envelope is serialised as usual.
import type { AgentEvent, EventEnvelope } from './events.js'
import { hiddenSlot } from './hidden-slot.js'

/** Fields an envelope adds to its event: an event that has one of its own is serialised as usual. */
const ENVELOPE_FIELDS = ['v', 'runId', 'seq', 'ts'] as const

/** The JSON of a remembered envelope's event fields, `type` first: `{"type":"…",…}`. */
const eventJson = hiddenSlot<string>('eventJson')

/**
 * Serialises `event` (the writer's own copy, about to become `envelope` by gaining the envelope fields at
 * its end) once, for envelopeDataJson and envelopeJson. Call before the envelope fields are added.
 */
export function rememberEventJson(envelope: EventEnvelope, event: AgentEvent): void {
  for (const field of ENVELOPE_FIELDS) if (field in event) return
  const json = JSON.stringify(event)
  // Cut at fixed places below: only when `type` is the first key.
  if (json.startsWith(`{"type":${JSON.stringify(event.type)}`)) eventJson.set(envelope, json)
}

/** The `data` column of a stored event: its fields without the envelope's (nor `type`, a column too). */
export function envelopeDataJson(envelope: EventEnvelope): string {
  const json = eventJson.get(envelope)
  if (json !== undefined) {
    const rest = `{"type":${JSON.stringify(envelope.type)}`.length
    return json.length === rest + 1 ? '{}' : `{${json.slice(rest + 1)}`
  }
  const { v: _version, runId: _runId, seq: _seq, ts: _ts, type: _type, ...fields } = envelope
  return JSON.stringify(fields)
}

/** JSON.stringify(envelope), the same string, cut from the remembered event JSON when there is one. */
export function envelopeJson(envelope: EventEnvelope): string {
  const json = eventJson.get(envelope)
  if (json === undefined) return JSON.stringify(envelope)
  return `${json.slice(0, -1)},"v":${envelope.v},"runId":${JSON.stringify(envelope.runId)},"seq":${envelope.seq},"ts":${JSON.stringify(envelope.ts)}}`
}
