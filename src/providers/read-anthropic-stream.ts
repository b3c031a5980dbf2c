// Anthropic stream events → normalized stream events and the final assistant message. Tool arguments
// arrive as `input_json_delta` fragments that only parse once the block stops; usage comes in two halves
// (input and cache counts in `message_start`, cumulative output in `message_delta`); and only
// `message_stop` proves the turn is complete — a stream that just ends is a dropped connection.
import type Anthropic from '@anthropic-ai/sdk'
import type { AssistantMessage, ContentPart, MessageUsage, StopReason, ToolCall } from '../core/messages.js'
import { isRecord, parseToolArguments } from './json-fields.js'
import { streamError, truncatedStreamError } from './provider-errors.js'
import type { LlmStreamEvent } from './types.js'

type Block =
  | { kind: 'text'; text: string }
  | { kind: 'thinking'; text: string; signature: string }
  | { kind: 'redacted'; data: string }
  | { kind: 'tool'; id: string; name: string; json: string; startInput: unknown }
  /** Server-side blocks we never ask for; kept only so indexes line up. */
  | { kind: 'other' }

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: 'end_turn',
  stop_sequence: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  // The answer was cut short just the same; it must be shown as truncated, not passed off as complete.
  model_context_window_exceeded: 'max_tokens',
  refusal: 'refusal',
  pause_turn: 'pause',
}

export function anthropicStopReason(reason: string | null | undefined, hasToolCalls: boolean): StopReason {
  const mapped = reason ? (STOP_REASONS[reason] ?? 'other') : 'other'
  return hasToolCalls && mapped === 'end_turn' ? 'tool_use' : mapped
}

function startBlock(block: Anthropic.RawContentBlockStartEvent['content_block']): Block {
  switch (block.type) {
    case 'text':
      return { kind: 'text', text: block.text }
    case 'thinking':
      return { kind: 'thinking', text: block.thinking, signature: block.signature }
    case 'redacted_thinking':
      return { kind: 'redacted', data: block.data }
    case 'tool_use':
      return { kind: 'tool', id: block.id, name: block.name, json: '', startInput: block.input }
    default:
      return { kind: 'other' }
  }
}

function toolInput(block: Extract<Block, { kind: 'tool' }>): unknown {
  // A start block that already carries its input (no deltas follow) is complete as it is.
  if (block.json === '' && isRecord(block.startInput) && Object.keys(block.startInput).length > 0) {
    return block.startInput
  }
  return parseToolArguments(block.json)
}

function count(value: number | null | undefined, fallback: number): number {
  return typeof value === 'number' ? value : fallback
}

function finalContent(blocks: Map<number, Block>): { content: ContentPart[]; toolCalls: ToolCall[] } {
  const content: ContentPart[] = []
  const toolCalls: ToolCall[] = []
  for (const [, block] of [...blocks].sort(([left], [right]) => left - right)) {
    if (block.kind === 'text' && block.text !== '') content.push({ type: 'text', text: block.text })
    else if (block.kind === 'thinking') {
      const signature = block.signature === '' ? {} : { signature: block.signature }
      content.push({ type: 'reasoning', provider: 'anthropic', text: block.text, ...signature })
    } else if (block.kind === 'redacted') {
      content.push({ type: 'reasoning', provider: 'anthropic', text: '', redacted: block.data })
    } else if (block.kind === 'tool') {
      toolCalls.push({ id: block.id, name: block.name, input: toolInput(block) })
    }
  }
  return { content, toolCalls }
}

export async function* readAnthropicStream(
  events: AsyncIterable<Anthropic.RawMessageStreamEvent>,
): AsyncGenerator<LlmStreamEvent> {
  const blocks = new Map<number, Block>()
  const usage: MessageUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }
  let stopReason: string | null | undefined
  let stopped = false

  for await (const event of events) {
    // Types the SDK does not know yet (and `error`, when events come from elsewhere) are checked as text.
    const type: string = event.type
    if (type === 'error') {
      const error = isRecord(event) && isRecord(event.error) ? event.error : {}
      const kind = typeof error.type === 'string' ? error.type : 'error'
      const message = typeof error.message === 'string' ? error.message : kind
      throw streamError('anthropic', message, kind === 'overloaded_error' || kind === 'api_error')
    }
    switch (event.type) {
      case 'message_start': {
        const start = event.message.usage
        usage.inputTokens = count(start.input_tokens, 0)
        usage.outputTokens = count(start.output_tokens, 0)
        usage.cacheReadTokens = count(start.cache_read_input_tokens, 0)
        usage.cacheWriteTokens = count(start.cache_creation_input_tokens, 0)
        break
      }
      case 'content_block_start':
        blocks.set(event.index, startBlock(event.content_block))
        break
      case 'content_block_delta': {
        const block = blocks.get(event.index)
        const delta = event.delta
        if (delta.type === 'text_delta' && block?.kind === 'text') {
          block.text += delta.text
          if (delta.text !== '') yield { type: 'text-delta', text: delta.text }
        } else if (delta.type === 'thinking_delta' && block?.kind === 'thinking') {
          block.text += delta.thinking
          if (delta.thinking !== '') yield { type: 'reasoning-delta', text: delta.thinking }
        } else if (delta.type === 'signature_delta' && block?.kind === 'thinking') {
          block.signature += delta.signature
        } else if (delta.type === 'input_json_delta' && block?.kind === 'tool') {
          block.json += delta.partial_json
        }
        break
      }
      case 'content_block_stop': {
        const block = blocks.get(event.index)
        if (block?.kind === 'tool') {
          yield { type: 'tool-call', id: block.id, name: block.name, input: toolInput(block) }
        }
        break
      }
      case 'message_delta': {
        // Counts in message_delta are cumulative; a null means "unchanged since message_start".
        stopReason = event.delta.stop_reason ?? stopReason
        usage.outputTokens = count(event.usage.output_tokens, usage.outputTokens)
        usage.inputTokens = count(event.usage.input_tokens, usage.inputTokens)
        usage.cacheReadTokens = count(event.usage.cache_read_input_tokens, usage.cacheReadTokens)
        usage.cacheWriteTokens = count(event.usage.cache_creation_input_tokens, usage.cacheWriteTokens)
        break
      }
      case 'message_stop':
        stopped = true
        break
    }
  }

  if (!stopped) throw truncatedStreamError('anthropic')
  const { content, toolCalls } = finalContent(blocks)
  const message: AssistantMessage = {
    role: 'assistant',
    content,
    stopReason: anthropicStopReason(stopReason, toolCalls.length > 0),
    usage: { ...usage },
  }
  if (toolCalls.length > 0) message.toolCalls = toolCalls
  yield { type: 'usage', usage: { ...usage } }
  yield { type: 'finish', message }
}
