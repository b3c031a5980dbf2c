// OpenAI Chat Completions stream chunks → normalized stream events, tolerant of what compatible servers
// really send: tool deltas keyed by `index` except that Ollama reuses index 0 for parallel calls (a new
// `id` there opens a new call), calls without an id, reasoning as `reasoning_content` or `reasoning`,
// `finish_reason: "stop"` on a tool turn (Ollama), an `error` chunk inside an HTTP 200 stream
// (OpenRouter), and streams that end without a finish (a dropped connection, never a success).
import type { AssistantMessage, ContentPart, MessageUsage, StopReason, ToolCall } from '../core/messages.js'
import {
  arrayField,
  isRecord,
  numberField,
  parseToolArguments,
  recordField,
  stringField,
} from './json-fields.js'
import {
  isRetryableStatus,
  malformedStreamError,
  streamError,
  truncatedStreamError,
} from './provider-errors.js'
import type { SseEvent } from './sse-reader.js'
import type { LlmStreamEvent } from './types.js'

const FINISH_REASONS: Record<string, StopReason> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  length: 'max_tokens',
  content_filter: 'refusal',
}

interface PendingCall {
  id: string
  /** False when we made the id up; a later delta that brings the real one continues this call. */
  providerId: boolean
  name: string
  arguments: string
}

/** Whether the tool turn is over comes from the calls themselves; Ollama answers `stop` to a tool turn. */
export function openAIStopReason(finishReason: string | undefined, hasToolCalls: boolean): StopReason {
  const mapped = finishReason === undefined ? 'end_turn' : (FINISH_REASONS[finishReason] ?? 'other')
  if (hasToolCalls) return mapped === 'end_turn' || mapped === 'other' ? 'tool_use' : mapped
  return mapped === 'tool_use' ? 'other' : mapped
}

/** Prompt tokens include cached ones; the cache is a separate bucket here, so it is subtracted. */
export function openAIUsage(usage: Record<string, unknown>): MessageUsage {
  const details = recordField(usage, 'prompt_tokens_details')
  const prompt = numberField(usage, 'prompt_tokens') ?? 0
  // DeepSeek reports its cache hits at the top level instead.
  const cacheRead =
    numberField(details, 'cached_tokens') ?? numberField(usage, 'prompt_cache_hit_tokens') ?? 0
  // OpenRouter reports cache writes (Anthropic models behind it) inside the prompt count too.
  const cacheWrite = numberField(details, 'cache_write_tokens') ?? 0
  return {
    inputTokens: Math.max(0, prompt - cacheRead - cacheWrite),
    outputTokens: numberField(usage, 'completion_tokens') ?? 0,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
  }
}

/** OpenRouter's in-band error: `{error: {code, message}}`; a numeric code is an HTTP status. */
function chunkError(provider: string, error: unknown): Error {
  const message = typeof error === 'string' ? error : (stringField(error, 'message') ?? 'unknown error')
  const code = numberField(error, 'code')
  const kind = stringField(error, 'code') ?? stringField(error, 'type')
  const retryable = code !== undefined ? isRetryableStatus(code) : kind === 'server_error'
  return streamError(provider, message, retryable)
}

/** An SSE `event: error` (vLLM, some proxies): JSON with an `error` object, or plain text. */
function errorEventBody(data: string): unknown {
  try {
    const parsed: unknown = JSON.parse(data)
    return recordField(parsed, 'error') ?? parsed
  } catch {
    return data
  }
}

class ToolCallAccumulator {
  readonly calls: PendingCall[] = []
  readonly #byIndex = new Map<number, PendingCall>()
  readonly #ids = new Set<string>()

  add(delta: unknown): void {
    const call = this.#callFor(delta)
    const functionDelta = recordField(delta, 'function')
    const name = stringField(functionDelta, 'name')
    if (name !== undefined && name !== '' && call.name === '') call.name = name
    const fragment: unknown = isRecord(functionDelta) ? functionDelta.arguments : undefined
    if (typeof fragment === 'string') call.arguments += fragment
    // A few servers send the arguments as an object instead of a JSON string.
    else if (isRecord(fragment)) call.arguments += JSON.stringify(fragment)
  }

  #callFor(delta: unknown): PendingCall {
    const rawId = stringField(delta, 'id')
    const id = rawId === undefined || rawId === '' ? undefined : rawId
    const index = numberField(delta, 'index')
    const current = index === undefined ? this.calls.at(-1) : this.#byIndex.get(index)
    if (current && (id === undefined || id === current.id)) return current
    if (current && !current.providerId && current.arguments === '' && id !== undefined) {
      current.id = id
      current.providerId = true
      this.#ids.add(id)
      return current
    }
    const call: PendingCall = {
      id: id ?? this.#syntheticId(),
      providerId: id !== undefined,
      name: '',
      arguments: '',
    }
    this.#ids.add(call.id)
    this.calls.push(call)
    if (index !== undefined) this.#byIndex.set(index, call)
    return call
  }

  /** `call_<n>`: stable for a given response, so replays and tests see the same ids. */
  #syntheticId(): string {
    let position = this.calls.length
    while (this.#ids.has(`call_${position}`)) position += 1
    return `call_${position}`
  }
}

export async function* readOpenAIChatStream(
  events: AsyncIterable<SseEvent>,
  options: { provider: string },
): AsyncGenerator<LlmStreamEvent> {
  const { provider } = options
  const calls = new ToolCallAccumulator()
  let text = ''
  let reasoning = ''
  let refused = false
  let finishReason: string | undefined
  let done = false
  let usage: MessageUsage | undefined

  for await (const event of events) {
    if (event.data === '[DONE]') {
      done = true
      break
    }
    if (event.event === 'error') throw chunkError(provider, errorEventBody(event.data))
    let chunk: unknown
    try {
      chunk = JSON.parse(event.data)
    } catch (error) {
      throw malformedStreamError(provider, error)
    }
    if (!isRecord(chunk)) continue
    if (chunk.error !== undefined && chunk.error !== null) throw chunkError(provider, chunk.error)
    const chunkUsage = recordField(chunk, 'usage')
    if (chunkUsage) usage = openAIUsage(chunkUsage)
    const choice = arrayField(chunk, 'choices')[0]
    const delta = recordField(choice, 'delta')
    const content = stringField(delta, 'content')
    if (content) {
      text += content
      yield { type: 'text-delta', text: content }
    }
    const refusal = stringField(delta, 'refusal')
    if (refusal) {
      refused = true
      text += refusal
      yield { type: 'text-delta', text: refusal }
    }
    // Some servers send both fields with the same text; one is enough.
    const thought = stringField(delta, 'reasoning_content') || stringField(delta, 'reasoning')
    if (thought) {
      reasoning += thought
      yield { type: 'reasoning-delta', text: thought }
    }
    for (const toolDelta of arrayField(delta, 'tool_calls')) calls.add(toolDelta)
    finishReason = stringField(choice, 'finish_reason') ?? finishReason
  }

  if (finishReason === undefined && !done) throw truncatedStreamError(provider)
  const toolCalls: ToolCall[] = calls.calls.map((call) => ({
    id: call.id,
    name: call.name,
    input: parseToolArguments(call.arguments),
  }))
  for (const call of toolCalls) yield { type: 'tool-call', id: call.id, name: call.name, input: call.input }

  const content: ContentPart[] = []
  if (reasoning !== '') content.push({ type: 'reasoning', provider, text: reasoning })
  if (text !== '') content.push({ type: 'text', text })
  const message: AssistantMessage = {
    role: 'assistant',
    content,
    stopReason: refused ? 'refusal' : openAIStopReason(finishReason, toolCalls.length > 0),
  }
  if (toolCalls.length > 0) message.toolCalls = toolCalls
  if (usage) {
    message.usage = usage
    yield { type: 'usage', usage }
  }
  yield { type: 'finish', message }
}
