// Parses OpenClaw's one JSON document at the end of a run (OpenClaw 2026.9, notes "OpenClaw / Output
// formats"). `agent exec --json` prints `{ok, status, final, payloads, usage, toolSummary, model, provider,
// sessionId, error?}`; `agent --local --json` (used to resume) prints `{payloads, meta: {agentMeta:
// {sessionId, model, usage, costUsd}, aborted, stopReason, finalAssistantVisibleText, …}}`; a CLI error is
// `{ok: false, error: {type, message}}`. The document may be pretty-printed over many lines, so lines are
// buffered until they parse. A cancelled run prints nothing: no document means not completed.
import type { AgentEvent, UsageTotals } from '../../core/events.js'
import type { ParserContext, ParserOutcome, StreamParser } from '../types.js'
import { type AgentErrorCode, codeForFailure, errorEvent } from './agent-error-codes.js'
import {
  arrayField,
  guarded,
  isObject,
  type JsonObject,
  objectField,
  raw,
  stringField,
} from './parse-helpers.js'
import { agentUsageEvent, costUsd, tokenCount, usageTotals } from './usage-totals.js'

/** A document larger than this is not an envelope (the `--local` one is about 11 KB). */
const MAX_BUFFER_CHARACTERS = 4 * 1024 * 1024
/** Bounds the search for an envelope among stray lines at the end. */
const MAX_SALVAGE_ATTEMPTS = 400

interface EnvelopeResult {
  events: AgentEvent[]
  outcome: ParserOutcome
}

export function createOpenclawEnvelopeParser(context: ParserContext): StreamParser {
  let buffer: string[] = []
  let bufferCharacters = 0
  let outcome: ParserOutcome = { completed: false }
  let seen = false

  /** Buffered lines back as `raw`, when they turned out not to be (part of) an envelope. */
  function flush(): AgentEvent[] {
    const events = buffer.map((line) => raw(line))
    buffer = []
    bufferCharacters = 0
    return events
  }

  function accept(document: unknown): AgentEvent[] | undefined {
    if (seen || !isObject(document)) return undefined
    const result = readEnvelope(document)
    if (!result) return undefined
    seen = true
    outcome = result.outcome
    return result.events
  }

  function handle(text: string): AgentEvent[] {
    if (text.trim() === '') return []
    // Outside a document, only a line opening one is buffered; anything else is a stray diagnostic.
    if (buffer.length === 0 && !text.trimStart().startsWith('{')) return [raw(text)]
    buffer.push(text)
    bufferCharacters += text.length
    if (bufferCharacters > MAX_BUFFER_CHARACTERS) return flush()
    // Only a line closing an object can complete the document; parsing on every line would be quadratic.
    if (!text.trimEnd().endsWith('}')) return []
    const document = parseDocument(buffer.join('\n'))
    if (document === undefined) return []
    const lines = buffer
    buffer = []
    bufferCharacters = 0
    return accept(document) ?? lines.map((line) => raw(line))
  }

  /**
   * At the end, a document with stray lines mixed in: the widest run of lines from one opening `{` to
   * a closing `}` that parses as an envelope. Everything around it stays `raw`.
   */
  function salvage(lines: string[]): AgentEvent[] {
    const starts = lines.flatMap((line, index) => (line.trimStart().startsWith('{') ? [index] : []))
    const ends = lines.flatMap((line, index) => (line.trimEnd().endsWith('}') ? [index] : [])).reverse()
    let attempts = 0
    for (const start of starts) {
      for (const end of ends) {
        if (end < start || (attempts += 1) > MAX_SALVAGE_ATTEMPTS) continue
        const events = accept(parseDocument(lines.slice(start, end + 1).join('\n')))
        if (!events) continue
        const before = lines.slice(0, start).map((line) => raw(line))
        return [...before, ...events, ...lines.slice(end + 1).map((line) => raw(line))]
      }
    }
    return lines.map((line) => raw(line))
  }

  // The envelope arrives only at the end; the launch chose the session id, so it is known from the start.
  const sessionId = () => outcome.sessionId ?? context.sessionId

  return {
    line: guarded(handle),
    sessionId,
    finish() {
      const lines = buffer
      buffer = []
      bufferCharacters = 0
      let events: AgentEvent[]
      try {
        events = lines.length > 0 ? salvage(lines) : []
      } catch {
        events = lines.map((line) => raw(line))
      }
      const session = sessionId()
      return { events, outcome: session ? { ...outcome, sessionId: session } : outcome }
    },
  }
}

function parseDocument(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

function readEnvelope(document: JsonObject): EnvelopeResult | undefined {
  const meta = objectField(document, 'meta')
  if (meta && Array.isArray(document.payloads)) return readLocalEnvelope(document, meta)
  if (typeof document.ok !== 'boolean') return undefined
  const events: AgentEvent[] = []
  const text = payloadText(document) || stringField(document, 'final')
  if (text) events.push({ type: 'text-delta', text })
  const usage = readUsage(
    objectField(document, 'usage'),
    costUsd(objectField(objectField(document, 'usage'), 'cost')?.total),
  )
  if (usage) events.push(agentUsageEvent(usage, stringField(document, 'model')))
  const outcome: ParserOutcome = { completed: true }
  const sessionId = stringField(document, 'sessionId')
  if (sessionId) outcome.sessionId = sessionId
  if (usage) outcome.usage = usage
  if (document.ok === false) {
    const error = objectField(document, 'error')
    const message =
      stringField(error, 'message') ??
      `OpenClaw ended with status ${stringField(document, 'status') ?? 'error'}`
    const code = failureCode(stringField(document, 'status'), stringField(error, 'kind'), message)
    outcome.failure = { code, message }
    events.push(errorEvent(code, message, false))
  }
  return { events, outcome }
}

function readLocalEnvelope(document: JsonObject, meta: JsonObject): EnvelopeResult {
  const agentMeta = objectField(meta, 'agentMeta')
  const events: AgentEvent[] = []
  const text = payloadText(document) || stringField(meta, 'finalAssistantVisibleText')
  if (text) events.push({ type: 'text-delta', text })
  const reported = objectField(agentMeta, 'usage')
  const usage = readUsage(
    reported,
    costUsd(agentMeta?.costUsd) ?? costUsd(objectField(reported, 'cost')?.total),
  )
  if (usage) events.push(agentUsageEvent(usage, stringField(agentMeta, 'model')))
  // An aborted turn still prints its document; like any cancel it is not a completion.
  const outcome: ParserOutcome = { completed: meta.aborted !== true }
  const sessionId = stringField(agentMeta, 'sessionId')
  if (sessionId) outcome.sessionId = sessionId
  if (usage) outcome.usage = usage
  const error = objectField(meta, 'error')
  if (error || stringField(meta, 'stopReason') === 'error') {
    const message = stringField(error, 'message') ?? 'OpenClaw reported a failed turn'
    const code = failureCode(undefined, stringField(error, 'kind'), message)
    outcome.failure = { code, message }
    events.push(errorEvent(code, message, false))
  }
  return { events, outcome }
}

/** The visible answer: the text payloads, without the error payload a timeout adds. */
function payloadText(document: JsonObject): string {
  return arrayField(document, 'payloads')
    .filter((payload) => isObject(payload) && payload.isError !== true)
    .map((payload) => (isObject(payload) ? (stringField(payload, 'text') ?? '') : ''))
    .filter((text) => text !== '')
    .join('\n\n')
}

/** OpenClaw's usage keeps cache reads and writes out of `input` (`total` is the sum of all four). */
function readUsage(usage: JsonObject | undefined, cost: number | undefined): UsageTotals | undefined {
  if (!usage) return undefined
  return usageTotals(
    tokenCount(usage.input),
    tokenCount(usage.output),
    tokenCount(usage.cacheRead),
    tokenCount(usage.cacheWrite),
    cost,
  )
}

function failureCode(status: string | undefined, kind: string | undefined, message: string): AgentErrorCode {
  if (status === 'timeout' || kind === 'timeout') return 'timeout'
  if (kind === 'aborted') return 'cancelled'
  return codeForFailure(undefined, message)
}
