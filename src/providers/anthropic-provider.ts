// The Anthropic client of the built-in agent, on the official SDK. The SDK does the HTTP and SSE
// framing; translation lives in to-anthropic-request.ts and read-anthropic-stream.ts. Retries are off:
// the loop decides, from `retryable` on the errors thrown here.
import Anthropic, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from '@anthropic-ai/sdk'
import { AppError, isAppError } from '../core/errors.js'
import { generateFromStream } from './generate-from-stream.js'
import {
  abortedError,
  connectionError,
  httpError,
  malformedStreamError,
  redirectError,
  requireValidHistory,
  streamError,
} from './provider-errors.js'
import { readAnthropicStream } from './read-anthropic-stream.js'
import { toAnthropicRequest } from './to-anthropic-request.js'
import type { LlmClient, LlmRequest, LlmStreamEvent, ProviderOptions } from './types.js'

const PROVIDER = 'anthropic'

/**
 * Without an explicit key the SDK would look for one in the environment and in profile files on disk;
 * the key must come from our vault or our proxy only, so that search is switched off.
 */
class IsolatedAnthropic extends Anthropic {
  protected override _shouldResolveDefaultCredentials(): boolean {
    return false
  }
}

/** The SDK would follow a redirect with the key attached; `manual` turns it into a 3xx error instead. */
function withoutRedirects(baseFetch: typeof fetch): typeof fetch {
  return (input, init) => baseFetch(input, { ...init, redirect: 'manual' })
}

function toAppError(error: unknown, signal: AbortSignal | undefined, apiKey: string | undefined): AppError {
  // First: an aborted SDK stream ends quietly, which the reader reports as truncated.
  if (signal?.aborted) return abortedError(PROVIDER, signal)
  if (isAppError(error)) return error
  if (error instanceof APIUserAbortError) {
    return new AppError('upstream_error', 'The anthropic request was aborted', {
      retryable: false,
      details: { provider: PROVIDER, aborted: true },
    })
  }
  if (error instanceof APIConnectionTimeoutError) {
    return new AppError('timeout', 'The anthropic request timed out', { details: { provider: PROVIDER } })
  }
  if (error instanceof APIConnectionError) return connectionError(PROVIDER, error)
  if (error instanceof APIError) {
    const status = error.status
    if (status === undefined) {
      // An `error` event inside a 200 stream: overloaded and internal errors pass on a later try.
      const retryable = error.type === 'overloaded_error' || error.type === 'api_error'
      return streamError(PROVIDER, error.apiMessage ?? error.type ?? 'unknown error', retryable)
    }
    if (status >= 300 && status < 400) return redirectError(PROVIDER, status)
    return httpError({
      provider: PROVIDER,
      status,
      providerMessage: error.apiMessage ?? undefined,
      retryAfter: error.headers?.get('retry-after') ?? null,
      apiKey,
    })
  }
  if (error instanceof SyntaxError) return malformedStreamError(PROVIDER, error)
  // Anything else raised while reading the body is the connection going away mid-stream.
  return connectionError(PROVIDER, error)
}

export function createAnthropicProvider(options: ProviderOptions): LlmClient {
  const client = new IsolatedAnthropic({
    // `null` (not undefined) keeps the SDK from reading ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN.
    apiKey: options.apiKey ?? null,
    authToken: null,
    baseURL: options.baseURL,
    fetch: withoutRedirects(options.fetch ?? fetch),
    maxRetries: 0,
    logLevel: 'off',
    // A keyless endpoint (our proxy swaps the key in) must say so, or the SDK refuses to send.
    defaultHeaders: { ...options.headers, ...(options.apiKey === undefined ? { authorization: null } : {}) },
  })

  async function* stream(request: LlmRequest): AsyncGenerator<LlmStreamEvent> {
    requireValidHistory(request.messages, PROVIDER)
    const params = toAnthropicRequest(request)
    try {
      const events = await client.messages.create(params, { signal: request.signal })
      yield* readAnthropicStream(events)
    } catch (error) {
      throw toAppError(error, request.signal, options.apiKey)
    }
  }

  return {
    provider: PROVIDER,
    family: 'anthropic',
    stream,
    generate: (request) => generateFromStream(stream(request)),
  }
}
