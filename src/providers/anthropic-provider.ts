// The Anthropic client of the built-in agent, on the official SDK. The SDK does the HTTP and SSE
// framing; translation lives in to-anthropic-request.ts and read-anthropic-stream.ts. Retries are off:
// the loop decides, from `retryable` on the errors thrown here.
// The SDK is about 300 modules (OpenTelemetry's API with it), a fifth of all a daemon would load at
// start-up: it is loaded on a first request of the built-in agent to Anthropic instead.
import type AnthropicSdk from '@anthropic-ai/sdk'
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

type Sdk = typeof import('@anthropic-ai/sdk')

let loading: Promise<{ sdk: Sdk; Client: typeof AnthropicSdk }> | undefined

function loadSdk() {
  loading ??= import('@anthropic-ai/sdk').then((sdk) => {
    /**
     * Without an explicit key the SDK would look for one in the environment and in profile files on disk;
     * the key must come from our vault or our proxy only, so that search is switched off.
     */
    class IsolatedAnthropic extends sdk.default {
      protected override _shouldResolveDefaultCredentials(): boolean {
        return false
      }
    }
    return { sdk, Client: IsolatedAnthropic }
  })
  return loading
}

/** The SDK would follow a redirect with the key attached; `manual` turns it into a 3xx error instead. */
function withoutRedirects(baseFetch: typeof fetch): typeof fetch {
  return (input, init) => baseFetch(input, { ...init, redirect: 'manual' })
}

function toAppError(
  sdk: Sdk,
  error: unknown,
  signal: AbortSignal | undefined,
  apiKey: string | undefined,
): AppError {
  const { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } = sdk
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
  let client: AnthropicSdk | undefined
  const clientOf = (Client: typeof AnthropicSdk) =>
    (client ??= new Client({
      // `null` (not undefined) keeps the SDK from reading ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN.
      apiKey: options.apiKey ?? null,
      authToken: null,
      baseURL: options.baseURL,
      fetch: withoutRedirects(options.fetch ?? fetch),
      maxRetries: 0,
      logLevel: 'off',
      // A keyless endpoint (our proxy swaps the key in) must say so, or the SDK refuses to send.
      defaultHeaders: {
        ...options.headers,
        ...(options.apiKey === undefined ? { authorization: null } : {}),
      },
    }))

  async function* stream(request: LlmRequest): AsyncGenerator<LlmStreamEvent> {
    requireValidHistory(request.messages, PROVIDER)
    const params = toAnthropicRequest(request)
    const { sdk, Client } = await loadSdk()
    try {
      const events = await clientOf(Client).messages.create(params, { signal: request.signal })
      yield* readAnthropicStream(events)
    } catch (error) {
      throw toAppError(sdk, error, request.signal, options.apiKey)
    }
  }

  return {
    provider: PROVIDER,
    family: 'anthropic',
    stream,
    generate: (request) => generateFromStream(stream(request)),
  }
}
