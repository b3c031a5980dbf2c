// Parses `codex exec --json` (Codex CLI 0.169): `thread.started`, `turn.*` and `item.*` lines whose items
// arrive whole, so messages and reasoning are never streamed as deltas (notes §4, "Codex").
import type { AgentEvent, FileChangeEvent, UsageTotals } from '../../core/events.js'
import type { ParserContext, ParserOutcome, StreamParser } from '../types.js'
import { codeForFailure, errorEvent } from './agent-error-codes.js'
import {
  arrayField,
  isObject,
  type JsonObject,
  numberField,
  objectField,
  parseJsonLine,
  raw,
  stringField,
  workspaceRelative,
  outcomeOf,
  streamParser,
} from './parse-helpers.js'
import { addUsage, agentUsageEvent, tokenCount, usageTotals } from './usage-totals.js'

/** Top-level types that carry nothing for the event log, dropped on purpose. */
const IGNORED_TYPES: ReadonlySet<string> = new Set([
  // The turn begins; the run layer already said so.
  'turn.started',
])

/** Item types that stand for a tool: `item.started` is the call, `item.completed` the result. */
const TOOL_ITEM_TYPES: ReadonlySet<string> = new Set([
  'command_execution',
  'file_change',
  'mcp_tool_call',
  'web_search',
  'todo_list',
])

/** Item types that only matter once completed (their `item.started`/`item.updated` are dropped). */
const WHOLE_ITEM_TYPES: ReadonlySet<string> = new Set(['reasoning', 'agent_message', 'error'])

/** Codex's own wording for a retry it is about to make, e.g. "Reconnecting... 1/5 (…)". */
const RECONNECT_NOTICE = /^Reconnecting\b/

type Handled = AgentEvent[] | undefined

export function createCodexStreamParser(context: ParserContext): StreamParser {
  let sessionId: string | undefined
  let completed = false
  let failure: ParserOutcome['failure']
  let usage: UsageTotals | undefined
  // The last top-level error that was not a reconnect: Codex repeats it as `turn.failed`.
  let lastError: string | undefined
  const calledIds = new Set<string>()

  function toolCall(item: JsonObject, id: string, itemType: string): AgentEvent[] {
    if (calledIds.has(id)) return []
    calledIds.add(id)
    return [{ type: 'tool-call', toolCallId: id, ...toolNameAndInput(item, itemType) }]
  }

  function onItem(phase: string, item: JsonObject | undefined): Handled {
    const id = stringField(item, 'id')
    const itemType = stringField(item, 'type')
    if (!item || !id || !itemType) return undefined
    const known = TOOL_ITEM_TYPES.has(itemType) || WHOLE_ITEM_TYPES.has(itemType)
    if (!known) return undefined
    if (phase === 'item.updated') return []
    if (phase === 'item.started') return TOOL_ITEM_TYPES.has(itemType) ? toolCall(item, id, itemType) : []
    if (itemType === 'reasoning' || itemType === 'agent_message') {
      const text = stringField(item, 'text')
      if (text === undefined) return undefined
      if (!text) return []
      return [{ type: itemType === 'reasoning' ? 'reasoning-delta' : 'text-delta', text }]
    }
    if (itemType === 'error') {
      // An error item is a notice inside a turn that goes on; a failed turn ends with `turn.failed`.
      return [errorEvent('agent_warning', stringField(item, 'message') ?? 'Codex reported an error', false)]
    }
    const status = stringField(item, 'status')
    const events = toolCall(item, id, itemType)
    events.push({ type: 'tool-result', toolCallId: id, ...toolResult(item, itemType, status) })
    if (itemType === 'file_change' && status === 'completed') events.push(...fileChanges(item))
    return events
  }

  function fileChanges(item: JsonObject): FileChangeEvent[] {
    return arrayField(item, 'changes').flatMap((change): FileChangeEvent[] => {
      const filePath = isObject(change) ? stringField(change, 'path') : undefined
      if (!isObject(change) || !filePath) return []
      return [
        {
          type: 'file-change',
          path: workspaceRelative(context.cwd, filePath),
          kind: changeKind(change.kind),
        },
      ]
    })
  }

  function onTurnCompleted(line: JsonObject): Handled {
    completed = true
    const reported = objectField(line, 'usage')
    if (!reported) return []
    // Codex's input_tokens include the cached ones (OpenAI's convention): take them out.
    const cacheRead = tokenCount(reported.cached_input_tokens)
    const cacheWrite = tokenCount(reported.cache_write_input_tokens)
    const turnUsage = usageTotals(
      tokenCount(reported.input_tokens) - cacheRead - cacheWrite,
      tokenCount(reported.output_tokens),
      cacheRead,
      cacheWrite,
    )
    usage = addUsage(usage, turnUsage)
    return [agentUsageEvent(turnUsage)]
  }

  function onTurnFailed(line: JsonObject): Handled {
    completed = true
    const error = objectField(line, 'error')
    const message =
      stringField(error, 'message') ?? stringField(line, 'message') ?? 'Codex reported a failed turn'
    const code = codeForFailure(numberField(error, 'status'), message)
    failure = { code, message }
    return message === lastError ? [] : [errorEvent(code, message, false)]
  }

  function onError(line: JsonObject): Handled {
    const message = stringField(line, 'message')
    if (message === undefined) return undefined
    // "Reconnecting... 1/5 (…)" announces a retry Codex makes by itself; another error line is the
    // final one, which `turn.failed` repeats.
    const retrying = RECONNECT_NOTICE.test(message)
    lastError = retrying ? undefined : message
    return [errorEvent(codeForFailure(undefined, message), message, retrying)]
  }

  function handle(text: string): AgentEvent[] {
    if (text.trim() === '') return []
    const line = parseJsonLine(text)
    const type = stringField(line, 'type')
    if (!line || !type) return [raw(text)]
    let events: Handled
    if (type === 'thread.started') {
      sessionId = stringField(line, 'thread_id') ?? sessionId
      events = []
    } else if (type.startsWith('item.')) {
      events = onItem(type, objectField(line, 'item'))
    } else if (type === 'turn.completed') {
      events = onTurnCompleted(line)
    } else if (type === 'turn.failed') {
      events = onTurnFailed(line)
    } else if (type === 'error') {
      events = onError(line)
    } else if (IGNORED_TYPES.has(type)) {
      events = []
    }
    return events ?? [raw(text)]
  }

  return streamParser(handle, () => outcomeOf({ completed, failure, sessionId, usage }))
}

function toolNameAndInput(item: JsonObject, itemType: string): { name: string; input: unknown } {
  switch (itemType) {
    case 'command_execution':
      return { name: itemType, input: { command: item.command ?? null } }
    case 'file_change':
      return { name: itemType, input: { changes: arrayField(item, 'changes') } }
    case 'mcp_tool_call': {
      const server = stringField(item, 'server')
      const tool = stringField(item, 'tool') ?? itemType
      return { name: server ? `${server}.${tool}` : tool, input: item.arguments ?? {} }
    }
    case 'web_search':
      return { name: itemType, input: { query: item.query ?? null } }
    default:
      return { name: itemType, input: { items: arrayField(item, 'items') } }
  }
}

function toolResult(
  item: JsonObject,
  itemType: string,
  status: string | undefined,
): { output: unknown; isError: boolean } {
  const failed = status === 'failed' || status === 'declined'
  switch (itemType) {
    case 'command_execution': {
      const exitCode = numberField(item, 'exit_code')
      return {
        output: stringField(item, 'aggregated_output') ?? '',
        isError: failed || (exitCode !== undefined && exitCode !== 0),
      }
    }
    case 'file_change':
      return { output: arrayField(item, 'changes'), isError: status !== 'completed' }
    case 'mcp_tool_call': {
      const error = objectField(item, 'error')
      return {
        output: item.result ?? stringField(error, 'message') ?? null,
        isError: failed || error !== undefined,
      }
    }
    case 'web_search':
      return { output: item.query ?? null, isError: failed }
    default:
      return { output: arrayField(item, 'items'), isError: failed }
  }
}

function changeKind(kind: unknown): FileChangeEvent['kind'] {
  const name = isObject(kind) ? kind.type : kind
  if (name === 'add') return 'create'
  if (name === 'delete') return 'delete'
  return 'modify'
}
