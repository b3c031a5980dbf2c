// Normalized messages → Anthropic Messages API parameters. Each rule here is a 400 someone shipped:
// tool results of one turn split over several user messages, results after text, empty text blocks,
// foreign tool-call ids (`call.1:x`), ids reused across turns, and thinking replayed without its signature.
import type Anthropic from '@anthropic-ai/sdk'
import type { ContentPart, ImagePart, ToolMessage } from '../core/messages.js'
import { AppError } from '../core/errors.js'
import { EMPTY_TOOL_RESULT, toConversationTurns } from './conversation-turns.js'
import type { LlmRequest } from './types.js'

type MessageParam = Anthropic.MessageParam
type ContentBlockParam = Anthropic.ContentBlockParam
type ImageBlockParam = Anthropic.ImageBlockParam
type TextBlockParam = Anthropic.TextBlockParam

export const DEFAULT_MAX_TOKENS = 8192

const ANTHROPIC_TOOL_ID = /^[a-zA-Z0-9_-]+$/
const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const
type AnthropicImageType = (typeof IMAGE_TYPES)[number]

/** FNV-1a, enough to keep two different foreign ids from colliding after their characters are replaced. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index)
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0).toString(36)
}

/** The id Anthropic accepts for a stored id: unchanged when valid, otherwise cleaned plus a hash. */
export function anthropicToolId(id: string): string {
  if (ANTHROPIC_TOOL_ID.test(id) && id.length <= 64) return id
  const cleaned = id.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 48)
  return `${cleaned === '' ? 'call' : cleaned}_${shortHash(id)}`
}

function isAnthropicImageType(mediaType: string): mediaType is AnthropicImageType {
  return (IMAGE_TYPES as readonly string[]).includes(mediaType)
}

function imageBlock(part: ImagePart): ImageBlockParam {
  if (!isAnthropicImageType(part.mediaType)) {
    throw new AppError('invalid_request', `Anthropic does not accept images of type ${part.mediaType}`, {
      details: { mediaType: part.mediaType, accepted: IMAGE_TYPES },
    })
  }
  return { type: 'image', source: { type: 'base64', media_type: part.mediaType, data: part.data } }
}

/** Anthropic rejects empty and whitespace-only text blocks, so those parts are left out. */
function textBlock(text: string): TextBlockParam[] {
  return text.trim() === '' ? [] : [{ type: 'text', text }]
}

/** Reasoning is replayed only when Anthropic made it and it still carries what Anthropic verifies. */
function reasoningBlock(part: ContentPart): ContentBlockParam[] {
  if (part.type !== 'reasoning' || part.provider !== 'anthropic') return []
  if (part.redacted !== undefined) return [{ type: 'redacted_thinking', data: part.redacted }]
  if (part.signature === undefined || part.signature === '') return []
  return [{ type: 'thinking', thinking: part.text, signature: part.signature }]
}

function userBlocks(parts: ContentPart[]): ContentBlockParam[] {
  return parts.flatMap((part): ContentBlockParam[] => {
    if (part.type === 'text') return textBlock(part.text)
    if (part.type === 'image') return [imageBlock(part)]
    return []
  })
}

function toolResultContent(result: ToolMessage): string | Array<TextBlockParam | ImageBlockParam> {
  if (typeof result.content === 'string') {
    return result.content.trim() === '' ? EMPTY_TOOL_RESULT : result.content
  }
  const blocks = result.content.flatMap((part): Array<TextBlockParam | ImageBlockParam> => {
    if (part.type === 'text') return textBlock(part.text)
    if (part.type === 'image') return [imageBlock(part)]
    return []
  })
  return blocks.length === 0 ? EMPTY_TOOL_RESULT : blocks
}

/**
 * Maps stored tool-call ids per assistant turn. Anthropic wants ids it can parse and unique in the whole
 * request, while OpenAI-compatible servers (Ollama, our own `call_<n>`) reuse ids from turn to turn; a
 * suffix keeps a repeated id apart, and since it only depends on the history the mapping is the same on
 * every request.
 */
class ToolIdMapper {
  readonly #used = new Set<string>()

  turn(ids: string[]): Map<string, string> {
    const mapping = new Map<string, string>()
    for (const id of ids) {
      const base = anthropicToolId(id)
      let mapped = base
      for (let suffix = 2; this.#used.has(mapped); suffix += 1) mapped = `${base}_${suffix}`
      this.#used.add(mapped)
      mapping.set(id, mapped)
    }
    return mapping
  }
}

/** Same-role neighbours are merged: a user message after tool results joins their user message. */
function append(messages: MessageParam[], role: 'user' | 'assistant', blocks: ContentBlockParam[]): void {
  if (blocks.length === 0) return
  const last = messages.at(-1)
  if (last?.role === role && Array.isArray(last.content)) last.content.push(...blocks)
  else messages.push({ role, content: blocks })
}

export function toAnthropicMessages(request: Pick<LlmRequest, 'messages'>): MessageParam[] {
  const messages: MessageParam[] = []
  const ids = new ToolIdMapper()
  for (const turn of toConversationTurns(request.messages)) {
    if (turn.role === 'user') {
      append(messages, 'user', userBlocks(turn.message.content))
      continue
    }
    const calls = turn.message.toolCalls ?? []
    const mapping = ids.turn(calls.map((call) => call.id))
    const mapped = (id: string) => mapping.get(id) ?? anthropicToolId(id)
    const content: ContentBlockParam[] = turn.message.content.flatMap((part): ContentBlockParam[] =>
      part.type === 'text' ? textBlock(part.text) : reasoningBlock(part),
    )
    for (const call of calls) {
      content.push({ type: 'tool_use', id: mapped(call.id), name: call.name, input: call.input ?? {} })
    }
    append(messages, 'assistant', content)
    // One user message for every result of the turn, in call order; any user text follows it.
    append(
      messages,
      'user',
      turn.results.map((result) => ({
        type: 'tool_result' as const,
        tool_use_id: mapped(result.toolCallId),
        content: toolResultContent(result),
        ...(result.isError ? { is_error: true } : {}),
      })),
    )
  }
  return messages
}

export function toAnthropicRequest(request: LlmRequest): Anthropic.MessageCreateParamsStreaming {
  const params: Anthropic.MessageCreateParamsStreaming = {
    model: request.model,
    max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS,
    messages: toAnthropicMessages(request),
    stream: true,
  }
  if (request.system !== undefined && request.system.trim() !== '') params.system = request.system
  if (request.tools.length > 0) {
    params.tools = request.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: { ...tool.inputSchema, type: 'object' as const },
    }))
  }
  return params
}
