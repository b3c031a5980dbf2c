// Parses `copilot -p --output-format json` (Copilot CLI 1.0): every line is `{type, data, id, parentId,
// timestamp, ephemeral?}` and the last one is `result` (notes §4, "Copilot"). A cancelled run still ends
// with `result {exitCode: 0}`, after `abort` and `assistant.idle {aborted: true}`: that is not a completion.
import type { AgentEvent, FileChangeEvent, UsageTotals } from '../../core/events.js'
import type { ParserContext, ParserOutcome, StreamParser } from '../types.js'
import { type AgentErrorCode, codeForFailure, codeForHttpStatus, errorEvent } from './agent-error-codes.js'
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
import { addUsage, agentUsageEvent, costUsd, tokenCount, usageTotals } from './usage-totals.js'

/** Event types that carry nothing for the event log, dropped on purpose. */
const IGNORED_TYPES: ReadonlySet<string> = new Set([
  // Session bookkeeping, sent many times per run.
  'session.start',
  'session.skills_loaded',
  'session.mcp_servers_loaded',
  'session.tools_updated',
  'session.background_tasks_changed',
  // The prompt echoed back.
  'user.message',
  // Turn and model-call boundaries; their content arrives in the events between them.
  'assistant.turn_start',
  'assistant.turn_end',
  'assistant.message_start',
  'model.call_start',
  'model.call_finished',
  'model.call_final_result',
  // Streamed tool input and partial output; the call and its result arrive whole.
  'assistant.tool_call_delta',
  'tool.execution_partial_result',
])

/**
 * The start of a line of a dropped type, as Copilot prints every line: `type` first. Such a line is dropped
 * unread. Reading it cost more than everything else a stream costs: these lines (the skills list, the
 * prompt echoed back, streamed tool input) are over half of a turn's bytes, and JSON.parse was two-thirds
 * of parse + persist. What changes is only what becomes of a broken line of a dropped type, one that ends
 * with `}` but is not JSON: it is dropped too, rather than shown raw, which would show nothing of use.
 */
const DROPPED_LINE_START = new RegExp(
  `^\\{"type":"(?:${[...IGNORED_TYPES].map((type) => type.replaceAll('.', '\\.')).join('|')})",`,
)

type Handled = AgentEvent[] | undefined

export function createCopilotStreamParser(context: ParserContext): StreamParser {
  // Copilot names its session only in the final `result`; a launch that chose it (`--session-id`) knows it
  // from the start.
  let sessionId: string | undefined = context.sessionId
  let completed = false
  let aborted = false
  let sessionError: ParserOutcome['failure']
  let failure: ParserOutcome['failure']
  let usage: UsageTotals | undefined
  const streamedMessages = new Set<string>()
  const streamedReasoning = new Set<string>()
  // Whether reasoning went out since the last whole message: its `reasoningText` repeats it.
  let reasoningSinceMessage = false
  const toolRequests = new Map<string, { name: string; input: unknown }>()
  const calledIds = new Set<string>()

  function toolCall(id: string, name: string | undefined, input: unknown): AgentEvent[] {
    if (calledIds.has(id)) return []
    calledIds.add(id)
    const request = toolRequests.get(id)
    return [
      {
        type: 'tool-call',
        toolCallId: id,
        name: name ?? request?.name ?? 'unknown',
        input: input ?? request?.input ?? {},
      },
    ]
  }

  function onMessage(data: JsonObject): Handled {
    const events: AgentEvent[] = []
    const reasoning = stringField(data, 'reasoningText')
    if (reasoning && !reasoningSinceMessage) events.push({ type: 'reasoning-delta', text: reasoning })
    reasoningSinceMessage = false
    const messageId = stringField(data, 'messageId')
    const content = stringField(data, 'content')
    if (content && !(messageId && streamedMessages.has(messageId)))
      events.push({ type: 'text-delta', text: content })
    for (const request of arrayField(data, 'toolRequests')) {
      const id = isObject(request) ? stringField(request, 'toolCallId') : undefined
      const name = isObject(request) ? stringField(request, 'name') : undefined
      if (isObject(request) && id && name) toolRequests.set(id, { name, input: request.arguments ?? {} })
    }
    return events
  }

  function onToolComplete(data: JsonObject): Handled {
    const id = stringField(data, 'toolCallId')
    if (!id) return undefined
    const success = data.success === true
    const result = objectField(data, 'result')
    const error = objectField(data, 'error')
    const output = success
      ? (result?.content ?? '')
      : (stringField(error, 'message') ?? result?.content ?? '')
    const events = toolCall(id, undefined, undefined)
    events.push({ type: 'tool-result', toolCallId: id, output, isError: !success })
    if (!success) return events
    const edits = arrayField(data, 'fileEdits').filter(isObject)
    // The diff in `detailedContent` covers the call's edits; it is only unambiguous for a single file.
    const diff = edits.length === 1 ? stringField(result, 'detailedContent') : undefined
    for (const edit of edits) {
      const filePath = stringField(edit, 'path')
      if (!filePath) continue
      const change: FileChangeEvent = {
        type: 'file-change',
        path: workspaceRelative(context.cwd, filePath),
        kind: editKind(stringField(edit, 'kind')),
      }
      if (diff) change.diff = diff
      events.push(change)
    }
    return events
  }

  function onSessionError(data: JsonObject): Handled {
    const message = stringField(data, 'message') ?? 'Copilot reported a session error'
    const errorType = stringField(data, 'errorType')
    const code: AgentErrorCode =
      codeForHttpStatus(numberField(data, 'statusCode')) ??
      (errorType === 'authentication' ? 'unauthorized' : codeForFailure(undefined, message))
    sessionError = { code, message }
    return [errorEvent(code, message, false)]
  }

  function onResult(line: JsonObject, data: JsonObject | undefined): Handled {
    sessionId = stringField(data, 'sessionId') ?? stringField(line, 'sessionId') ?? sessionId
    completed = !aborted
    const exitCode = numberField(data, 'exitCode') ?? numberField(line, 'exitCode')
    if (exitCode === undefined || exitCode === 0) return []
    // A session.error the CLI recovered from (exit 0) does not fail the run; a non-zero exit does.
    if (sessionError) {
      failure = sessionError
      return []
    }
    const message = `Copilot exited with code ${exitCode}`
    failure = { code: 'agent_error', message }
    return [errorEvent('agent_error', message, false)]
  }

  function onUsage(data: JsonObject): Handled {
    const turnUsage = usageTotals(
      tokenCount(data.inputTokens),
      tokenCount(data.outputTokens),
      tokenCount(data.cacheReadTokens),
      tokenCount(data.cacheWriteTokens),
      costUsd(data.cost),
    )
    usage = addUsage(usage, turnUsage)
    return [agentUsageEvent(turnUsage, stringField(data, 'model'))]
  }

  function onEvent(type: string, line: JsonObject, data: JsonObject | undefined): Handled {
    if (type === 'result') return onResult(line, data)
    if (!data) return undefined
    switch (type) {
      case 'assistant.message_delta': {
        const text = stringField(data, 'deltaContent')
        const messageId = stringField(data, 'messageId')
        if (text === undefined) return undefined
        if (messageId) streamedMessages.add(messageId)
        return text ? [{ type: 'text-delta', text }] : []
      }
      case 'assistant.reasoning_delta':
      case 'assistant.reasoning': {
        const text = stringField(data, type === 'assistant.reasoning' ? 'content' : 'deltaContent')
        const reasoningId = stringField(data, 'reasoningId')
        if (text === undefined) return undefined
        if (type === 'assistant.reasoning' && reasoningId && streamedReasoning.has(reasoningId)) return []
        if (reasoningId) streamedReasoning.add(reasoningId)
        if (!text) return []
        reasoningSinceMessage = true
        return [{ type: 'reasoning-delta', text }]
      }
      case 'assistant.message':
        return onMessage(data)
      case 'tool.execution_start': {
        const id = stringField(data, 'toolCallId')
        return id ? toolCall(id, stringField(data, 'toolName'), data.arguments) : undefined
      }
      case 'tool.execution_complete':
        return onToolComplete(data)
      case 'assistant.usage':
        return onUsage(data)
      case 'session.error':
        return onSessionError(data)
      case 'model.call_failure': {
        // One failed model call; Copilot retries or gives up with session.error.
        const message = stringField(data, 'errorMessage') ?? 'A model call failed'
        return [errorEvent(codeForFailure(numberField(data, 'statusCode'), message), message, true)]
      }
      case 'assistant.turn_retry':
        return [
          errorEvent(
            'upstream_error',
            `Copilot retries the turn: ${stringField(data, 'reason') ?? 'no reason given'}`,
            true,
          ),
        ]
      case 'abort':
      case 'agent.interrupted':
        aborted = true
        return []
      case 'assistant.idle':
        if (data.aborted === true) aborted = true
        return []
      case 'session.info':
        // Informational lines: file_created is reported again as a tool's fileEdits, model_retry as
        // assistant.turn_retry.
        if (stringField(data, 'infoType') === 'cancellation') aborted = true
        return []
    }
    return IGNORED_TYPES.has(type) ? [] : undefined
  }

  function handle(text: string): AgentEvent[] {
    if (text.trim() === '') return []
    // A line cut off on its way (a CLI killed mid-write) does not end with `}`: it goes on, and shows raw.
    if (DROPPED_LINE_START.test(text) && text.trimEnd().endsWith('}')) return []
    const line = parseJsonLine(text)
    const type = stringField(line, 'type')
    if (!line || !type) return [raw(text)]
    return onEvent(type, line, objectField(line, 'data')) ?? [raw(text)]
  }

  return streamParser(handle, () =>
    // A session error the CLI recovered from counts only when the turn never finished.
    outcomeOf({ completed, failure: failure ?? (completed ? undefined : sessionError), sessionId, usage }),
  )
}

function editKind(kind: string | undefined): FileChangeEvent['kind'] {
  if (kind === 'create' || kind === 'add') return 'create'
  if (kind === 'delete' || kind === 'remove') return 'delete'
  return 'modify'
}
