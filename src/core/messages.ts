// The normalized, provider-agnostic message model (see notes/builtin-agent.md). Stored as JSON text in
// `messages.content`; providers translate to and from it. Raw provider payloads are never stored.

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'refusal' | 'pause' | 'error' | 'other'

export interface TextPart {
  type: 'text'
  text: string
}

export interface ImagePart {
  type: 'image'
  mediaType: string
  /** Base64 data, without a data: prefix. */
  data: string
}

/** Thinking, replayed only to the provider and model family that produced it. */
export interface ReasoningPart {
  type: 'reasoning'
  /** e.g. `anthropic` or `openai`; the part is dropped when replaying to another family. */
  provider: string
  text: string
  signature?: string
  /** Opaque redacted/encrypted content some providers return instead of text. */
  redacted?: string
}

export type ContentPart = TextPart | ImagePart | ReasoningPart

export interface ToolCall {
  /** The provider's own id, kept as is; ids are mapped only when replaying to a stricter provider. */
  id: string
  name: string
  input: unknown
}

export interface MessageUsage {
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
}

export interface UserMessage {
  role: 'user'
  content: ContentPart[]
}

export interface AssistantMessage {
  role: 'assistant'
  content: ContentPart[]
  toolCalls?: ToolCall[]
  stopReason: StopReason
  usage?: MessageUsage
}

export interface ToolMessage {
  role: 'tool'
  toolCallId: string
  toolName: string
  content: string | ContentPart[]
  isError?: boolean
}

export type Message = UserMessage | AssistantMessage | ToolMessage
export type MessageRole = Message['role']
