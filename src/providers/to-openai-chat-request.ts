// Normalized messages → an OpenAI Chat Completions request body, in the subset OpenAI, OpenRouter,
// Ollama, vLLM, LM Studio and Gemini's compatibility endpoint all accept: one `tool` message per call
// right after its assistant message, `content: null` for a tool-only turn, arguments as a JSON string,
// plain string content unless an image needs the array form, and no reasoning (nothing to replay).
import type { AssistantMessage, ContentPart, ToolMessage, UserMessage } from '../core/messages.js'
import { EMPTY_TOOL_RESULT, toConversationTurns } from './conversation-turns.js'
import type { LlmRequest } from './types.js'

export type ChatContentPart =
  { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } }

export interface ChatToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ChatContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string }

export interface ChatTool {
  type: 'function'
  function: { name: string; description: string; parameters: Record<string, unknown> }
}

export interface ChatCompletionBody {
  model: string
  messages: ChatMessage[]
  stream: true
  stream_options: { include_usage: true }
  tools?: ChatTool[]
  max_tokens?: number
  max_completion_tokens?: number
}

function textOf(parts: ContentPart[]): string {
  return parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('')
}

function userMessage(message: UserMessage): ChatMessage {
  const hasImage = message.content.some((part) => part.type === 'image')
  // Several servers (older vLLM chat templates, DeepSeek) accept only string content.
  if (!hasImage) return { role: 'user', content: textOf(message.content) }
  const content = message.content.flatMap((part): ChatContentPart[] => {
    if (part.type === 'text') return part.text === '' ? [] : [{ type: 'text', text: part.text }]
    if (part.type === 'image') {
      return [{ type: 'image_url', image_url: { url: `data:${part.mediaType};base64,${part.data}` } }]
    }
    return []
  })
  return { role: 'user', content }
}

function assistantMessage(message: AssistantMessage): ChatMessage {
  const text = textOf(message.content)
  const calls = message.toolCalls ?? []
  if (calls.length === 0) return { role: 'assistant', content: text }
  return {
    role: 'assistant',
    // OpenAI wants null, not "", when the turn is only tool calls; some servers reject "" outright.
    content: text === '' ? null : text,
    tool_calls: calls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: JSON.stringify(call.input ?? {}) },
    })),
  }
}

/** Chat `tool` messages carry text only, so an image in a result is named rather than sent. */
function toolMessage(result: ToolMessage): ChatMessage {
  const text =
    typeof result.content === 'string'
      ? result.content
      : result.content
          .flatMap((part) => {
            if (part.type === 'text') return [part.text]
            if (part.type === 'image') return [`(image omitted: ${part.mediaType})`]
            return []
          })
          .join('\n')
  return {
    role: 'tool',
    tool_call_id: result.toolCallId,
    content: text.trim() === '' ? EMPTY_TOOL_RESULT : text,
  }
}

export function toOpenAIChatMessages(request: Pick<LlmRequest, 'system' | 'messages'>): ChatMessage[] {
  const messages: ChatMessage[] = []
  if (request.system !== undefined && request.system !== '')
    messages.push({ role: 'system', content: request.system })
  for (const turn of toConversationTurns(request.messages)) {
    if (turn.role === 'user') {
      messages.push(userMessage(turn.message))
      continue
    }
    messages.push(assistantMessage(turn.message))
    for (const result of turn.results) messages.push(toolMessage(result))
  }
  return messages
}

export function toOpenAIChatRequest(request: LlmRequest, options: { provider: string }): ChatCompletionBody {
  const body: ChatCompletionBody = {
    model: request.model,
    messages: toOpenAIChatMessages(request),
    stream: true,
    stream_options: { include_usage: true },
  }
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
    }))
  }
  if (request.maxTokens !== undefined) {
    // OpenAI's reasoning models refuse `max_tokens`; most other servers only know `max_tokens`.
    if (options.provider === 'openai') body.max_completion_tokens = request.maxTokens
    else body.max_tokens = request.maxTokens
  }
  return body
}
