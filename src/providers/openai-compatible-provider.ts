// The OpenAI-compatible client (OpenAI, OpenRouter, Ollama, vLLM, LM Studio, Gemini's compatibility
// endpoint…): Chat Completions over plain fetch and our SSE reader, so each server's quirks are handled
// in one place we control (read-openai-chat-stream.ts) rather than behind an SDK that throws on them.
import { isAppError, type AppError } from '../core/errors.js'
import { generateFromStream } from './generate-from-stream.js'
import { arrayField, isRecord, recordField, stringField } from './json-fields.js'
import {
  abortedError,
  connectionError,
  httpError,
  malformedStreamError,
  redirectError,
  requireValidHistory,
  truncatedStreamError,
} from './provider-errors.js'
import { readOpenAIChatStream } from './read-openai-chat-stream.js'
import { readSse, type SseEvent } from './sse-reader.js'
import { toOpenAIChatRequest } from './to-openai-chat-request.js'
import type { LlmClient, LlmRequest, LlmStreamEvent, ProviderOptions } from './types.js'

/** What the error body says, in the shapes OpenAI, OpenRouter, vLLM and FastAPI servers use. */
function providerMessage(text: string): string | undefined {
  try {
    const body: unknown = JSON.parse(text)
    const error = isRecord(body) ? body.error : undefined
    if (typeof error === 'string') return error
    return stringField(error, 'message') ?? stringField(body, 'message') ?? stringField(body, 'detail')
  } catch {}
  const trimmed = text.trim()
  // An HTML error page from a gateway says nothing useful in one line.
  return trimmed === '' || trimmed.startsWith('<') ? undefined : trimmed
}

/**
 * A server that ignores `stream: true` answers one JSON completion; it is turned into a single chunk
 * (message → delta, tool calls indexed by position) so the same reader handles it.
 */
function completionAsChunk(completion: unknown): unknown {
  if (!isRecord(completion) || (completion.error !== undefined && completion.error !== null))
    return completion
  const choices = arrayField(completion, 'choices').map((choice) => {
    const message = recordField(choice, 'message')
    if (!isRecord(choice) || !message) return choice
    const toolCalls = arrayField(message, 'tool_calls').map((call, index) =>
      isRecord(call) ? { index, ...call } : call,
    )
    return { ...choice, delta: { ...message, tool_calls: toolCalls } }
  })
  return { ...completion, choices }
}

async function* single(event: SseEvent): AsyncGenerator<SseEvent> {
  yield event
}

export function createOpenAICompatibleProvider(options: ProviderOptions & { name: string }): LlmClient {
  const provider = options.name
  const baseFetch = options.fetch ?? fetch
  const endpoint = `${options.baseURL.replace(/\/+$/, '')}/chat/completions`

  const headers = (): Record<string, string> => ({
    ...options.headers,
    'content-type': 'application/json',
    accept: 'text/event-stream',
    ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
  })

  const toAppError = (error: unknown, signal: AbortSignal | undefined): AppError => {
    if (signal?.aborted) return abortedError(provider, signal)
    if (isAppError(error)) return error
    return connectionError(provider, error)
  }

  async function post(request: LlmRequest): Promise<Response> {
    const body = JSON.stringify(toOpenAIChatRequest(request, { provider }))
    try {
      // `manual`: following a redirect would hand the Authorization header to another host.
      return await baseFetch(endpoint, {
        method: 'POST',
        headers: headers(),
        body,
        redirect: 'manual',
        signal: request.signal,
      })
    } catch (error) {
      throw toAppError(error, request.signal)
    }
  }

  async function events(response: Response): Promise<AsyncIterable<SseEvent>> {
    const contentType = response.headers.get('content-type') ?? ''
    if (contentType.includes('application/json')) {
      let completion: unknown
      try {
        completion = JSON.parse(await response.text())
      } catch (error) {
        if (isAppError(error) || !(error instanceof SyntaxError)) throw error
        throw malformedStreamError(provider, error)
      }
      return single({ event: undefined, data: JSON.stringify(completionAsChunk(completion)) })
    }
    if (!response.body) throw truncatedStreamError(provider)
    return readSse(response.body)
  }

  async function* stream(request: LlmRequest): AsyncGenerator<LlmStreamEvent> {
    requireValidHistory(request.messages, provider)
    const response = await post(request)
    if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400)) {
      await response.body?.cancel().catch(() => undefined)
      throw redirectError(provider, response.status)
    }
    if (!response.ok) {
      const text = await response.text().catch(() => '')
      throw httpError({
        provider,
        status: response.status,
        providerMessage: providerMessage(text),
        retryAfter: response.headers.get('retry-after'),
        apiKey: options.apiKey,
      })
    }
    try {
      yield* readOpenAIChatStream(await events(response), { provider })
    } catch (error) {
      throw toAppError(error, request.signal)
    }
  }

  return {
    provider,
    family: 'openai',
    stream,
    generate: (request) => generateFromStream(stream(request)),
  }
}
