// The provider contract of the built-in agent: one streaming client per API family, speaking the
// normalized message model (core/messages.ts) in and out. Translation quirks live behind it.
import type { AssistantMessage, Message, MessageUsage } from '../core/messages.js'

/** A tool as the model sees it: name, description and a JSON Schema object for its input. */
export interface LlmTool {
  name: string
  description: string
  inputSchema: Record<string, unknown>
}

export interface LlmRequest {
  model: string
  system?: string
  messages: Message[]
  tools: LlmTool[]
  maxTokens?: number
  signal?: AbortSignal
}

export type LlmStreamEvent =
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  /** A complete tool call, once its arguments have fully arrived. */
  | { type: 'tool-call'; id: string; name: string; input: unknown }
  | { type: 'usage'; usage: MessageUsage }
  /** Always last on success: the whole normalized assistant message (text, reasoning, tool calls, stop reason). */
  | { type: 'finish'; message: AssistantMessage }

/** Which translation the client does; reasoning parts are replayed only to the family that made them. */
export type ProviderFamily = 'anthropic' | 'openai'

export interface LlmClient {
  /** The provider name (`anthropic`, `openai`, `openrouter`, `ollama`, or a custom name). */
  readonly provider: string
  readonly family: ProviderFamily
  /**
   * Streams one model turn. Errors (HTTP errors, an `error` chunk at HTTP 200, EOF before a finish) are
   * thrown as AppError `upstream_error` with `retryable` derived from the status or the failure kind.
   */
  stream(request: LlmRequest): AsyncIterable<LlmStreamEvent>
  /** One model turn, not streamed (side requests such as titles). */
  generate(request: LlmRequest): Promise<AssistantMessage>
}

export interface ProviderOptions {
  baseURL: string
  /** Absent for keyless local endpoints (Ollama, vLLM, LM Studio). */
  apiKey?: string
  fetch?: typeof fetch
  /** Extra headers, e.g. OpenRouter's attribution headers. */
  headers?: Record<string, string>
}
