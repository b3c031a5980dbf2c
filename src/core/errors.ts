/**
 * The one error type of Hangar. Every failure a user can see is an AppError with a code from this list;
 * the HTTP layer maps codes to statuses in one place (server/error-envelope.ts) and the CLI prints
 * `message` (plus `hint`) on one line. Anything else that escapes is a bug and is reported as `internal`.
 */
export const ERROR_CODES = [
  // The request body, query or arguments do not have the expected shape. `details` names the fields.
  'invalid_request',
  // The request body is not valid JSON.
  'invalid_json',
  // The request body is larger than the configured limit.
  'payload_too_large',
  // The request body's Content-Type is not one the route takes (e.g. /api/login takes only JSON).
  'unsupported_media_type',
  // No credentials, or credentials that are malformed, wrong, expired or revoked.
  'unauthorized',
  // Authenticated, but this principal may not do this (a PAT managing PATs, a member adding users…).
  'forbidden',
  // Too many failed sign-ins or token checks from this client; `details.retryAfterSeconds` says when to retry.
  'rate_limited',
  // No such object for this user (another user's ids answer this too).
  'not_found',
  // The object is in a state that does not allow this (a decided action, a busy conversation…).
  'conflict',
  // A profile's spending limit for its window is used up.
  'budget_exceeded',
  // hangar.yaml (or another config source) is malformed; `details` has file, line and key path.
  'config_invalid',
  // The command line is wrong (unknown flag value, missing argument).
  'usage',
  // The --database / HANGAR_DATABASE_URL value is not a URL we can use.
  'database_url_invalid',
  // The database could not be reached or refused us; retrying later may work.
  'database_unavailable',
  // The data directory cannot be created or written, or every user may write in it.
  'data_dir_unwritable',
  // No instance key is configured, so provider keys cannot be stored or read.
  'vault_unavailable',
  // A vault envelope failed authentication: tampered, bound to another user or purpose, or an unknown key.
  'secret_unreadable',
  // No daemon is running for this data dir (daemon.json missing or stale).
  'daemon_not_running',
  // A model provider or feed answered with an error.
  'upstream_error',
  // Something took longer than its limit.
  'timeout',
  // The route or feature exists in the contract but is built by a later milestone.
  'not_implemented',
  // A dependency is down; the rest of the daemon still works.
  'unavailable',
  // A profile asks for `sandbox: workspace` but bubblewrap is missing or cannot create namespaces here.
  'sandbox_unavailable',
  // A bug: anything thrown that is not an AppError.
  'internal',
] as const

export type ErrorCode = (typeof ERROR_CODES)[number]

export interface AppErrorOptions {
  /** True when the same request may succeed later without changes. Derived from facts, never from text. */
  retryable?: boolean
  /** One line telling the user how to fix it; the CLI prints it after the message. */
  hint?: string
  /** Machine-readable context (field paths, file and line…). Never secrets. */
  details?: Record<string, unknown>
  cause?: unknown
}

const RETRYABLE_BY_DEFAULT: ReadonlySet<ErrorCode> = new Set([
  'database_unavailable',
  'timeout',
  'unavailable',
  'rate_limited',
])

export class AppError extends Error {
  readonly code: ErrorCode
  readonly retryable: boolean
  readonly hint: string | undefined
  readonly details: Record<string, unknown> | undefined

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'AppError'
    this.code = code
    this.retryable = options.retryable ?? RETRYABLE_BY_DEFAULT.has(code)
    this.hint = options.hint
    this.details = options.details
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError
}

/**
 * The message for a user: the error's own text plus its hint, on one line. The hint follows a semicolon,
 * not parentheses, so a hint that itself has a parenthesis never nests.
 */
export function describeError(error: unknown): string {
  if (isAppError(error)) return error.hint ? `${error.message}; ${error.hint}` : error.message
  return 'internal error (see the daemon log for details)'
}
