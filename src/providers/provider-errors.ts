// The errors a provider client throws. Retryability comes from facts (the HTTP status, a dropped
// connection, the provider's structured error type), never from reading the message text.
import { AppError, isAppError } from '../core/errors.js'
import { checkHistory } from '../core/history.js'
import type { Message } from '../core/messages.js'
import { createRedactor } from '../core/redact.js'
import { RefusedAddressError } from './guarded-connection.js'

/** 408 timeout, 409 conflict (a lock upstream), 429 rate limit and every 5xx may pass on a later try. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500
}

/** Refuses to send a history that breaks the tool-call invariant: the provider would reject it anyway. */
export function requireValidHistory(messages: Message[], provider: string): void {
  const check = checkHistory(messages)
  if (check.ok) return
  throw new AppError(
    'invalid_request',
    `The conversation cannot be sent to ${provider}: ${check.problems[0]}`,
    {
      details: { provider, problems: check.problems },
      hint: 'Repair the history (repairHistory) before sending it.',
    },
  )
}

export interface HttpErrorFacts {
  provider: string
  status: number
  /** The provider's own explanation, when its body had one. */
  providerMessage: string | undefined
  retryAfter: string | null
  /** Cut out of the message, in case the provider echoes it. */
  apiKey: string | undefined
}

export function httpError(facts: HttpErrorFacts): AppError {
  const redactor = createRedactor()
  redactor.add(facts.apiKey)
  const explanation = facts.providerMessage ? `: ${redactor.text(facts.providerMessage.slice(0, 500))}` : ''
  const retryAfterSeconds = facts.retryAfter === null ? undefined : Number(facts.retryAfter)
  return new AppError('upstream_error', `${facts.provider} answered HTTP ${facts.status}${explanation}`, {
    retryable: isRetryableStatus(facts.status),
    details: {
      provider: facts.provider,
      status: facts.status,
      ...(retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) ? { retryAfterSeconds } : {}),
    },
  })
}

/** Following a redirect would send the key to wherever the endpoint points, so we stop instead. */
export function redirectError(provider: string, status: number): AppError {
  return new AppError(
    'upstream_error',
    `The ${provider} endpoint redirected (HTTP ${status}); redirects are not followed so the key is never forwarded`,
    {
      retryable: false,
      details: { provider, status },
      hint: 'Set the base URL to the final address of the endpoint.',
    },
  )
}

/** An in-band error: the stream started with HTTP 200, then the provider reported a failure. */
export function streamError(provider: string, message: string, retryable: boolean): AppError {
  return new AppError(
    'upstream_error',
    `${provider} reported an error mid-stream: ${message.slice(0, 500)}`,
    {
      retryable,
      details: { provider, inStream: true },
    },
  )
}

/** The connection closed before the provider said the turn was over: a dropped connection, so retryable. */
export function truncatedStreamError(provider: string): AppError {
  return new AppError('upstream_error', `The ${provider} stream ended before the model finished its turn`, {
    retryable: true,
    details: { provider, truncated: true },
  })
}

export function malformedStreamError(provider: string, cause: unknown): AppError {
  return new AppError('upstream_error', `${provider} sent a stream chunk that is not valid JSON`, {
    retryable: false,
    details: { provider },
    cause,
  })
}

/** A connection the guarded fetch refused (a user-set base URL the policy does not allow), if any. */
function refusalIn(cause: unknown): Error | undefined {
  let current = cause
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof RefusedAddressError) return current
    if (isAppError(current) && current.code === 'invalid_request' && current.details?.field === 'baseUrl')
      return current
    current = current.cause
  }
  return undefined
}

export function connectionError(provider: string, cause: unknown): AppError {
  // A refusal is the policy's answer, not a flaky network: say why, and do not retry.
  const refused = refusalIn(cause)
  if (refused) {
    return new AppError('upstream_error', `The connection to ${provider} was refused: ${refused.message}`, {
      retryable: false,
      details: { provider },
      cause,
    })
  }
  return new AppError('upstream_error', `The connection to ${provider} failed or dropped`, {
    retryable: true,
    details: { provider },
    cause,
  })
}

/**
 * The caller aborted. An AppError given as the abort reason is passed on as is (the loop's own timeout or
 * cancel); `AbortSignal.timeout()` becomes `timeout`; anything else is a non-retryable abort.
 */
export function abortedError(provider: string, signal: AbortSignal): AppError {
  const reason: unknown = signal.reason
  if (isAppError(reason)) return reason
  if (reason instanceof Error && reason.name === 'TimeoutError') {
    return new AppError('timeout', `The ${provider} request timed out`, {
      details: { provider },
      cause: reason,
    })
  }
  return new AppError('upstream_error', `The ${provider} request was aborted`, {
    retryable: false,
    details: { provider, aborted: true },
    cause: reason,
  })
}
