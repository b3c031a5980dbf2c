// Errors the proxy itself answers, in the wire family's own error shape, so each CLI shows them the way it
// shows its provider's errors (and retries what it would retry: a spent budget is a 403, never a 429).
export type UrlFamily = 'anthropic' | 'openai' | 'gemini'

export type ProxyErrorKind =
  | 'unauthorized'
  | 'invalid_json'
  | 'payload_too_large'
  | 'budget_exceeded'
  | 'upstream_unreachable'
  | 'not_found'
  | 'unsupported_media_type'
  | 'upstream_timeout'
  | 'loop_detected'

const STATUS: Record<ProxyErrorKind, number> = {
  unauthorized: 401,
  invalid_json: 400,
  payload_too_large: 413,
  budget_exceeded: 403,
  upstream_unreachable: 502,
  not_found: 404,
  unsupported_media_type: 415,
  upstream_timeout: 504,
  loop_detected: 508,
}

const ANTHROPIC_TYPE: Record<ProxyErrorKind, string> = {
  unauthorized: 'authentication_error',
  invalid_json: 'invalid_request_error',
  payload_too_large: 'request_too_large',
  budget_exceeded: 'permission_error',
  upstream_unreachable: 'api_error',
  not_found: 'not_found_error',
  unsupported_media_type: 'invalid_request_error',
  upstream_timeout: 'timeout_error',
  loop_detected: 'api_error',
}

const GEMINI_STATUS: Record<ProxyErrorKind, string> = {
  unauthorized: 'UNAUTHENTICATED',
  invalid_json: 'INVALID_ARGUMENT',
  payload_too_large: 'INVALID_ARGUMENT',
  budget_exceeded: 'PERMISSION_DENIED',
  upstream_unreachable: 'UNAVAILABLE',
  not_found: 'NOT_FOUND',
  unsupported_media_type: 'INVALID_ARGUMENT',
  upstream_timeout: 'DEADLINE_EXCEEDED',
  loop_detected: 'FAILED_PRECONDITION',
}

export function proxyErrorBody(
  family: UrlFamily | undefined,
  kind: ProxyErrorKind,
  message: string,
): { status: number; body: string } {
  const status = STATUS[kind]
  let body: unknown
  if (family === 'anthropic') body = { type: 'error', error: { type: ANTHROPIC_TYPE[kind], message } }
  else if (family === 'gemini') body = { error: { code: status, message, status: GEMINI_STATUS[kind] } }
  else body = { error: { message, type: kind, code: kind, param: null } }
  return { status, body: JSON.stringify(body) }
}
