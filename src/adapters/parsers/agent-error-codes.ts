// The `code` every parser puts on `error` events and failure outcomes. The CLI's own words stay in
// `message`; the code is what a UI or a retry policy branches on, so it is one small closed set.
import type { ErrorEvent } from '../../core/events.js'

export const AGENT_ERROR_CODES = [
  // The model API refused the credentials (HTTP 401/403, or the CLI says authentication failed).
  'unauthorized',
  // The model API throttled the run or a quota ran out (HTTP 429).
  'rate_limited',
  // The model API answered another HTTP error, or the connection to it failed.
  'upstream_error',
  // The CLI gave up after its own time limit.
  'timeout',
  // The CLI reports that the turn was aborted.
  'cancelled',
  // The CLI reports a failed turn and names no cause we can map.
  'agent_error',
  // A notice the CLI shows without failing the turn (loop detected, model metadata missing…).
  'agent_warning',
  // The CLI wrote stdout lines its parser does not know (a newer output format?): raised once per run by
  // the run executor, besides the `raw` events that keep the lines.
  'output_unrecognized',
  // The profile has feeds but the run's model traffic bypasses Hangar's proxy, so they cannot be injected:
  // raised once per run, at its start (runs/feeds-delivery).
  'feeds_not_delivered',
] as const
export type AgentErrorCode = (typeof AGENT_ERROR_CODES)[number]

export function codeForHttpStatus(status: number | undefined): AgentErrorCode | undefined {
  if (status === undefined) return undefined
  if (status === 401 || status === 403) return 'unauthorized'
  if (status === 429) return 'rate_limited'
  if (status === 408) return 'timeout'
  return status >= 400 ? 'upstream_error' : undefined
}

/**
 * The HTTP status quoted in an error text ("API Error: 401", "unexpected status 401", "HTTP 401", a
 * Google error body's `"code":401`). Some CLIs give no structured status, so this picks the code only;
 * retryability always comes from the kind of event.
 */
export function httpStatusInText(text: string): number | undefined {
  const match = /(?:\b(?:status(?:[ _]?code)?|api error|http)|"code")["':=\s]+([1-5]\d\d)\b/i.exec(text)
  return match ? Number(match[1]) : undefined
}

/** The code for a failure given what the CLI reported: a status when it has one, else its message. */
export function codeForFailure(status: number | undefined, message: string): AgentErrorCode {
  return codeForHttpStatus(status) ?? codeForHttpStatus(httpStatusInText(message)) ?? 'agent_error'
}

export function errorEvent(code: AgentErrorCode, message: string, retryable: boolean): ErrorEvent {
  return { type: 'error', code, message, retryable }
}
