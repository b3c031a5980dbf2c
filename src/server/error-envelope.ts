// The one place where errors become HTTP: `{ error: { code, message, retryable, details } }`. Anything
// that is not an AppError is a bug: logged with its stack, answered as `internal` without one — except a
// client that went away mid-request, which is no bug of ours (see isClientAbort).
import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { AppError, describeError, type ErrorCode, isAppError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'

const STATUS_BY_CODE: Record<ErrorCode, ContentfulStatusCode> = {
  invalid_request: 400,
  invalid_json: 400,
  usage: 400,
  config_invalid: 400,
  database_url_invalid: 400,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unauthorized: 401,
  forbidden: 403,
  rate_limited: 429,
  budget_exceeded: 403,
  not_found: 404,
  conflict: 409,
  upstream_error: 502,
  not_implemented: 501,
  database_unavailable: 503,
  data_dir_unwritable: 503,
  vault_unavailable: 503,
  daemon_not_running: 503,
  unavailable: 503,
  sandbox_unavailable: 503,
  timeout: 504,
  secret_unreadable: 500,
  internal: 500,
}

export function statusOf(code: ErrorCode): ContentfulStatusCode {
  return STATUS_BY_CODE[code]
}

export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; retryable: boolean; details: Record<string, unknown> | null }
}

export function toErrorEnvelope(error: AppError): ErrorEnvelope {
  // The hint as the CLI prints it (describeError: after a semicolon, never nested parentheses).
  const message = describeError(error)
  return { error: { code: error.code, message, retryable: error.retryable, details: error.details ?? null } }
}

/** The status nginx made the convention for "the client closed the request"; no client ever reads it. */
export const CLIENT_CLOSED_REQUEST = 499

/**
 * True when the error only says the client went away before its request was read (an aborted upload):
 * Node's `aborted` ECONNRESET from the request stream, as it is or as the cause of a wrapping error, while
 * the request's signal says the client is gone. An upstream connection reset is none of these.
 */
export function isClientAbort(thrown: unknown, signal: AbortSignal | undefined): boolean {
  if (!signal?.aborted) return false
  for (let error = thrown, depth = 0; error instanceof Error && depth < 5; error = error.cause, depth++) {
    if ((error as NodeJS.ErrnoException).code === 'ECONNRESET' && error.message === 'aborted') return true
  }
  return false
}

export function createErrorHandler(log: Logger) {
  return (thrown: unknown, context: Context) => {
    // Nothing can be sent and nothing failed on our side: the access log line (status 499) is the record.
    if (!isAppError(thrown) && isClientAbort(thrown, context.req.raw.signal)) {
      return context.body(null, CLIENT_CLOSED_REQUEST as ContentfulStatusCode)
    }
    const error = isAppError(thrown) ? thrown : new AppError('internal', 'internal error', { cause: thrown })
    if (error.code === 'internal') {
      log.error('request failed', {
        requestId: context.get('requestId'),
        method: context.req.method,
        path: context.req.path,
        error: thrown instanceof Error ? { message: thrown.message, stack: thrown.stack } : String(thrown),
      })
    }
    const status = statusOf(error.code)
    if (status === 401) context.header('WWW-Authenticate', 'Bearer realm="hangar"')
    const retryAfter = error.details?.retryAfterSeconds
    if (error.code === 'rate_limited' && typeof retryAfter === 'number')
      context.header('Retry-After', String(retryAfter))
    return context.json(toErrorEnvelope(error), status)
  }
}
