// Small pieces every stream parser needs. Parsers never throw: anything unexpected becomes `raw`.
import type { AgentEvent, RawEvent, UsageTotals } from '../../core/events.js'
import type { ParserOutcome, StreamParser } from '../types.js'

export type JsonObject = Record<string, unknown>

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The line as a JSON object, or undefined (blank, not JSON, or JSON that is not an object). */
export function parseJsonLine(line: string): JsonObject | undefined {
  const trimmed = line.trim()
  if (!trimmed.startsWith('{')) return undefined
  try {
    const value: unknown = JSON.parse(trimmed)
    return isObject(value) ? value : undefined
  } catch {
    return undefined
  }
}

export function raw(line: string, stream: RawEvent['stream'] = 'stdout'): RawEvent {
  return { type: 'raw', stream, value: line }
}

export function stringField(object: JsonObject | undefined, key: string): string | undefined {
  const value = object?.[key]
  return typeof value === 'string' ? value : undefined
}

export function numberField(object: JsonObject | undefined, key: string): number | undefined {
  const value = object?.[key]
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined
}

export function objectField(object: JsonObject | undefined, key: string): JsonObject | undefined {
  const value = object?.[key]
  return isObject(value) ? value : undefined
}

export function arrayField(object: JsonObject | undefined, key: string): unknown[] {
  const value = object?.[key]
  return Array.isArray(value) ? value : []
}

/** A path relative to the workspace (POSIX separators); absolute paths outside it stay absolute. */
export function workspaceRelative(cwd: string, filePath: string): string {
  const root = cwd.endsWith('/') ? cwd : `${cwd}/`
  if (filePath.startsWith(root)) return filePath.slice(root.length)
  if (filePath === cwd) return '.'
  return filePath.replace(/^\.\//, '')
}

/** Wraps a parser's line handler so a bug in it yields `raw` instead of an exception. */
export function guarded(handler: (line: string) => AgentEvent[]): (line: string) => AgentEvent[] {
  return (line) => {
    try {
      return handler(line)
    } catch {
      return [raw(line)]
    }
  }
}

/** The outcome from what a parser gathered; parts it never saw stay absent. */
export function outcomeOf(state: {
  completed: boolean
  failure?: ParserOutcome['failure'] | undefined
  sessionId?: string | undefined
  usage?: UsageTotals | undefined
}): ParserOutcome {
  const outcome: ParserOutcome = { completed: state.completed }
  if (state.failure) outcome.failure = state.failure
  if (state.sessionId) outcome.sessionId = state.sessionId
  if (state.usage) outcome.usage = state.usage
  return outcome
}

/**
 * A StreamParser from a line handler (guarded: it never throws) and its outcome, read at the end and, for
 * the session id, after every line.
 */
export function streamParser(
  handle: (line: string) => AgentEvent[],
  outcome: () => ParserOutcome,
): StreamParser {
  return {
    line: guarded(handle),
    sessionId: () => outcome().sessionId,
    finish: () => ({ events: [], outcome: outcome() }),
  }
}
