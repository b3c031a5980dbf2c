// Parses `claude -p --output-format stream-json --verbose [--include-partial-messages]` (Claude Code 2.1):
// one JSON object per line with `type` and `session_id` (notes §4, "Claude").
import type { AgentEvent, UsageTotals } from '../../core/events.js'
import type { ParserContext, ParserOutcome, StreamParser } from '../types.js'
import { codeForFailure, codeForHttpStatus, errorEvent } from './agent-error-codes.js'
import { CLAUDE_FILE_TOOLS, claudeFileChange } from './claude-file-change.js'
import {
  CLAUDE_DELTA_LINE,
  CLAUDE_IGNORED_LINE,
  CLAUDE_MESSAGE_START_LINE,
  CLAUDE_TEXT_MESSAGE_LINE,
  jsonStringValue,
} from './claude-line-shapes.js'
import {
  isObject,
  type JsonObject,
  numberField,
  objectField,
  parseJsonLine,
  raw,
  stringField,
  outcomeOf,
  streamParser,
} from './parse-helpers.js'
import { agentUsageEvent, costUsd, singleKey, tokenCount, usageTotals } from './usage-totals.js'

/** `system` subtypes that carry nothing for the event log, dropped on purpose. */
const IGNORED_SYSTEM_SUBTYPES: ReadonlySet<string> = new Set([
  // "requesting" progress pings sent with partial messages.
  'status',
  // A running estimate of thinking tokens; real usage arrives with `result`.
  'thinking_tokens',
  // A redraw hint for the TUI (the first line under --bare).
  'ui_invalidate',
  // A sub-agent's lifecycle (Task/Agent tool): its work arrives as lines with `parent_tool_use_id`,
  // its end as the parent call's tool_result.
  'task_started',
  'task_progress',
  'task_updated',
  'task_notification',
])

/** Raw Anthropic stream events whose content reaches us again whole, in the `assistant` lines. */
const IGNORED_STREAM_EVENTS: ReadonlySet<string> = new Set([
  'content_block_start',
  'content_block_stop',
  'message_delta',
  'message_stop',
  'ping',
])

/** Deltas we do not stream: tool input arrives whole in the `assistant` line; signatures are opaque. */
const IGNORED_DELTAS: ReadonlySet<string> = new Set([
  'input_json_delta',
  'signature_delta',
  'citations_delta',
])

/**
 * The start of the `init` line Claude Code prints as each invocation starts (its tools, MCP servers,
 * plugins: kilobytes). Only the session id is read from a stream's first line; later ones are dropped
 * unread, as copilot-stream.ts drops its dropped types: a broken one that ends with `}` is dropped too,
 * rather than shown raw.
 */
const CLAUDE_INIT_LINE_START = '{"type":"system","subtype":"init",'

type Handled = AgentEvent[] | undefined

export function createClaudeStreamParser(context: ParserContext): StreamParser {
  let sessionId: string | undefined
  let completed = false
  let failure: ParserOutcome['failure']
  let usage: UsageTotals | undefined
  // The message the partial-message deltas belong to (from `message_start`).
  let streamMessageId = ''
  // Message ids whose text or thinking already went out as deltas: their whole blocks are not repeated.
  const streamedText = new Set<string>()
  const streamedThinking = new Set<string>()
  const toolUses = new Map<string, { name: string; input: JsonObject | undefined }>()

  function onSystem(line: JsonObject): Handled {
    const subtype = stringField(line, 'subtype') ?? ''
    if (subtype === 'init') return []
    if (subtype === 'api_retry') return [apiRetryError(line)]
    return IGNORED_SYSTEM_SUBTYPES.has(subtype) ? [] : undefined
  }

  function onStreamEvent(line: JsonObject): Handled {
    const event = objectField(line, 'event')
    const eventType = stringField(event, 'type')
    if (!event || !eventType) return undefined
    if (eventType === 'message_start') {
      streamMessageId =
        stringField(objectField(event, 'message'), 'id') ?? stringField(line, 'api_message_id') ?? ''
      return []
    }
    if (eventType !== 'content_block_delta') return IGNORED_STREAM_EVENTS.has(eventType) ? [] : undefined
    const delta = objectField(event, 'delta')
    const deltaType = stringField(delta, 'type') ?? ''
    const kind = deltaType === 'text_delta' ? 'text' : deltaType === 'thinking_delta' ? 'thinking' : undefined
    if (!kind) return IGNORED_DELTAS.has(deltaType) ? [] : undefined
    const text = stringField(delta, kind)
    if (text === undefined) return undefined
    return onDelta(kind, text, stringField(line, 'api_message_id'))
  }

  /** A streamed piece of text or thinking, whose whole block is then not repeated. */
  function onDelta(kind: 'text' | 'thinking', text: string, apiMessageId: string | undefined) {
    const messageId = streamMessageId || (apiMessageId ?? '')
    if (kind === 'text') {
      streamedText.add(messageId)
      return text ? [{ type: 'text-delta', text } as const] : []
    }
    streamedThinking.add(messageId)
    return text ? [{ type: 'reasoning-delta', text } as const] : []
  }

  /** A message of one text block, `text` as a JSON string: shown unless its pieces were (as onAssistant). */
  function onTextMessage(messageId: string, model: string, text: string): AgentEvent[] {
    if (model === '<synthetic>' || streamedText.has(messageId) || text === '""') return []
    return [{ type: 'text-delta', text: jsonStringValue(text) }]
  }

  /** A line of a shape claude-line-shapes.ts knows, handled without JSON.parse; undefined for any other. */
  function onKnownShape(text: string): AgentEvent[] | undefined {
    if (CLAUDE_IGNORED_LINE.test(text)) return []
    const delta = CLAUDE_DELTA_LINE.exec(text)
    if (delta) {
      const [, kind, piece, parent, apiMessageId] = delta
      const messageId = apiMessageId === undefined ? undefined : jsonStringValue(apiMessageId)
      return inSubtask(
        onDelta(kind as 'text' | 'thinking', jsonStringValue(piece!), messageId),
        parentOf(parent!),
      )
    }
    const message = CLAUDE_TEXT_MESSAGE_LINE.exec(text)
    if (message) {
      const [, id, model, whole, parent] = message
      return inSubtask(
        onTextMessage(jsonStringValue(id!), jsonStringValue(model!), whole!),
        parentOf(parent!),
      )
    }
    const start = CLAUDE_MESSAGE_START_LINE.exec(text)
    if (start) {
      streamMessageId = jsonStringValue(start[1]!)
      return []
    }
    if (text.startsWith(CLAUDE_INIT_LINE_START) && text.trimEnd().endsWith('}')) return []
    return undefined
  }

  function onAssistant(line: JsonObject, text: string): Handled {
    const message = objectField(line, 'message')
    const content = message?.content
    if (!Array.isArray(content)) return undefined
    // Claude's own stand-in message for an API error; `result` repeats its text and becomes the error.
    if (stringField(message, 'model') === '<synthetic>') return []
    const messageId = stringField(message, 'id') ?? ''
    const events: AgentEvent[] = []
    let understood = true
    for (const block of content) {
      const blockType = isObject(block) ? stringField(block, 'type') : undefined
      if (!isObject(block) || blockType === undefined) {
        understood = false
      } else if (blockType === 'text') {
        const value = stringField(block, 'text')
        if (value && !streamedText.has(messageId)) events.push({ type: 'text-delta', text: value })
      } else if (blockType === 'thinking') {
        const value = stringField(block, 'thinking')
        if (value && !streamedThinking.has(messageId)) events.push({ type: 'reasoning-delta', text: value })
      } else if (blockType === 'tool_use') {
        const id = stringField(block, 'id')
        const name = stringField(block, 'name')
        if (!id || !name) {
          understood = false
          continue
        }
        const input = block.input ?? {}
        toolUses.set(id, { name, input: isObject(input) ? input : undefined })
        events.push({ type: 'tool-call', toolCallId: id, name, input })
      } else if (blockType !== 'redacted_thinking') {
        understood = false
      }
    }
    return understood ? events : [...events, raw(text)]
  }

  function onUser(line: JsonObject, text: string): Handled {
    const content = objectField(line, 'message')?.content
    // A plain string is the prompt replayed back; nothing new.
    if (typeof content === 'string') return []
    if (!Array.isArray(content)) return undefined
    const results = content.filter((block) => isObject(block) && block.type === 'tool_result')
    // `tool_use_result` describes the line's one tool result; with several it is ambiguous.
    const toolUseResult = results.length === 1 ? objectField(line, 'tool_use_result') : undefined
    const events: AgentEvent[] = []
    let understood = true
    for (const block of content) {
      const blockType = isObject(block) ? stringField(block, 'type') : undefined
      if (!isObject(block) || blockType === undefined) {
        understood = false
      } else if (blockType === 'tool_result') {
        const toolCallId = stringField(block, 'tool_use_id')
        if (!toolCallId) {
          understood = false
          continue
        }
        const isError = block.is_error === true
        events.push({ type: 'tool-result', toolCallId, output: toolOutput(block.content), isError })
        const use = toolUses.get(toolCallId)
        if (isError || !use || !CLAUDE_FILE_TOOLS.has(use.name)) continue
        const change = claudeFileChange(context.cwd, use.name, use.input, toolUseResult)
        if (change) events.push(change)
      } else if (blockType !== 'text' && blockType !== 'image') {
        // Text blocks here are interruption notices and prompt echoes.
        understood = false
      }
    }
    return understood ? events : [...events, raw(text)]
  }

  function onResult(line: JsonObject): Handled {
    completed = true
    sessionId = stringField(line, 'session_id') ?? sessionId
    const events: AgentEvent[] = []
    const reported = objectField(line, 'usage')
    if (reported) {
      usage = usageTotals(
        tokenCount(reported.input_tokens),
        tokenCount(reported.output_tokens),
        tokenCount(reported.cache_read_input_tokens),
        tokenCount(reported.cache_creation_input_tokens),
        runCost(line),
      )
      const perModel = objectField(line, 'model_usage_since_last_result') ?? objectField(line, 'modelUsage')
      events.push(agentUsageEvent(usage, singleKey(perModel)))
    }
    const subtype = stringField(line, 'subtype') ?? ''
    if (line.is_error === true || subtype.startsWith('error')) {
      const message = resultMessage(line, subtype)
      const code = codeForFailure(numberField(line, 'api_error_status'), message)
      failure = { code, message }
      events.push(errorEvent(code, message, false))
    }
    return events
  }

  function handle(text: string): AgentEvent[] {
    if (text.trim() === '') return []
    if (sessionId !== undefined) {
      const known = onKnownShape(text)
      if (known) return known
    }
    const line = parseJsonLine(text)
    if (!line) return [raw(text)]
    sessionId ??= stringField(line, 'session_id')
    let events: Handled
    switch (line.type) {
      case 'system':
        events = onSystem(line)
        break
      case 'stream_event':
        events = onStreamEvent(line)
        break
      case 'assistant':
        events = onAssistant(line, text)
        break
      case 'user':
        events = onUser(line, text)
        break
      case 'result':
        events = onResult(line)
        break
    }
    return inSubtask(events ?? [raw(text)], stringField(line, 'parent_tool_use_id'))
  }

  return streamParser(handle, () => outcomeOf({ completed, failure, sessionId, usage }))
}

/** The parent tool call's id a shape matched: a JSON string, or `null` for the main agent's lines. */
function parentOf(literal: string): string | undefined {
  return literal === 'null' ? undefined : jsonStringValue(literal)
}

/** A sub-agent's line carries the id of the Task/Agent tool call that started it: its events say so. */
function inSubtask(events: AgentEvent[], parentId: string | undefined): AgentEvent[] {
  if (!parentId) return events
  return events.map((event) => {
    switch (event.type) {
      case 'text-delta':
      case 'reasoning-delta':
      case 'tool-call':
      case 'tool-result':
      case 'file-change':
        return { ...event, parentId }
      default:
        return event
    }
  })
}

/** A tool result's content: text blocks joined into one string, anything else kept as JSON. */
function toolOutput(content: unknown): unknown {
  if (content === undefined || content === null) return ''
  if (!Array.isArray(content)) return content
  const texts = content.map((block) => (isObject(block) && block.type === 'text' ? block.text : undefined))
  return texts.every((value) => typeof value === 'string') ? texts.join('\n') : content
}

function apiRetryError(line: JsonObject): AgentEvent {
  const status = numberField(line, 'error_status')
  const reason =
    typeof line.error === 'string' ? line.error : stringField(objectField(line, 'error'), 'message')
  const attempt = numberField(line, 'attempt')
  const maxRetries = numberField(line, 'max_retries')
  const delay = numberField(line, 'retry_delay_ms')
  let message = `API request failed${status === undefined ? '' : ` with status ${status}`}`
  if (reason) message += ` (${reason})`
  if (attempt !== undefined)
    message += `; retry ${attempt}${maxRetries === undefined ? '' : `/${maxRetries}`}`
  if (delay !== undefined) message += ` in ${delay} ms`
  return errorEvent(codeForHttpStatus(status) ?? 'upstream_error', message, true)
}

/**
 * The cost of this run. On a resumed session `total_cost_usd` (like `modelUsage`) adds up the whole
 * session, while `usage` counts this run only; `model_usage_since_last_result` has this run's cost.
 */
function runCost(line: JsonObject): number | undefined {
  const sinceLast = objectField(line, 'model_usage_since_last_result')
  const costs = Object.values(sinceLast ?? {}).map((model) =>
    isObject(model) ? costUsd(model.costUSD) : undefined,
  )
  if (costs.length > 0 && costs.every((cost) => cost !== undefined)) {
    return costs.reduce((sum, cost) => sum + cost, 0)
  }
  return costUsd(line.total_cost_usd)
}

function resultMessage(line: JsonObject, subtype: string): string {
  const result = stringField(line, 'result')
  if (result) return result
  const errors = Array.isArray(line.errors) ? line.errors.filter((item) => typeof item === 'string') : []
  if (errors.length > 0) return errors.join('\n')
  return `Claude Code ended the turn with ${subtype || 'an error'}`
}
