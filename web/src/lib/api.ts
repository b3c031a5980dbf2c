// The one way the UI talks to the daemon: JSON over fetch with the session cookie. Errors arrive in the
// API's one envelope ({ error: { code, message, retryable, details } }) and become an ApiError whose message
// is the server's own, so a toast can show it as it is. A 401 means the session is gone: the app listens for
// SIGNED_OUT_EVENT and shows how to sign in again.

import type { FieldError } from './field-errors'

export const SIGNED_OUT_EVENT = 'hangar:signed-out'

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly hint: string | undefined,
    /** A 400's bad keys (`details.fields`), each with its message. */
    readonly fields: FieldError[] = [],
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

interface ErrorEnvelope {
  error?: { code?: string; message?: string; details?: { hint?: string; fields?: FieldError[] } }
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  let response: Response
  try {
    response = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
  } catch {
    throw new ApiError(
      'Cannot reach the Hangar daemon. Is "hangar up" still running?',
      0,
      'unreachable',
      undefined,
    )
  }
  if (response.status === 204) return undefined as T
  const text = await response.text()
  const parsed: unknown = text ? safeJson(text) : undefined
  if (!response.ok) {
    const envelope = (parsed ?? {}) as ErrorEnvelope
    const message = envelope.error?.message ?? `${method} ${path} answered ${response.status}`
    if (response.status === 401) window.dispatchEvent(new Event(SIGNED_OUT_EVENT))
    throw new ApiError(
      message,
      response.status,
      envelope.error?.code ?? 'http_error',
      envelope.error?.details?.hint,
      Array.isArray(envelope.error?.details?.fields) ? envelope.error.details.fields : [],
    )
  }
  return parsed as T
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The message to show for anything thrown: the server's message and its hint when there is one. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.hint ? `${error.message} (${error.hint})` : error.message
  return error instanceof Error ? error.message : String(error)
}
