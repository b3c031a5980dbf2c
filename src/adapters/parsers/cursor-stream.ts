// Parses `cursor-agent -p --output-format stream-json [--stream-partial-output]`. UNVERIFIED here: the
// CLI cannot run on our machines. The shapes follow Cursor's output-format reference and lines captured
// from a real CLI (2026.08) by a public project: `system/init`, `user`, `assistant`, `thinking`
// (`delta`/`completed`), `tool_call` (`started`/`completed`, `call_id`, `tool_call.<name>ToolCall.{args,
// result}`) and a final `result {subtype, is_error, result, session_id, duration_ms, usage?}`.
import type { AgentEvent, FileChangeEvent, UsageTotals } from '../../core/events.js'
import type { ParserContext, ParserOutcome, StreamParser } from '../types.js'
import { codeForFailure, errorEvent } from './agent-error-codes.js'
import {
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
import { agentUsageEvent, costUsd, tokenCount, usageTotals } from './usage-totals.js'

/** Events that carry nothing for the event log, dropped on purpose, as `type` or `type/subtype`. */
const IGNORED_EVENTS: ReadonlySet<string> = new Set([
  // The prompt echoed back.
  'user',
  // The end of a thinking block; its text came as deltas.
  'thinking/completed',
  // A lost connection is back (its loss was reported as a retryable error).
  'connection/reconnected',
  // A question the CLI asks and answers itself in print mode.
  'interaction_query',
])

/** Result outcomes (the one key under `result`) that are not failures. */
const SUCCESS_OUTCOMES: ReadonlySet<string> = new Set([
  'success',
  'complete',
  'registered',
  'startSuccess',
  'saveSuccess',
  'discardSuccess',
  // Still running or waiting on approval: not failed (yet).
  'approved',
  'async',
  'stillRunning',
])

/** Tool keys whose success changes a file, with the kind of change. */
const FILE_TOOLS: ReadonlyMap<string, FileChangeEvent['kind']> = new Map([
  ['writeToolCall', 'create'],
  ['editToolCall', 'modify'],
  ['deleteToolCall', 'delete'],
])

type Handled = AgentEvent[] | undefined

export function createCursorStreamParser(context: ParserContext): StreamParser {
  let sessionId: string | undefined
  let model: string | undefined
  let completed = false
  let failure: ParserOutcome['failure']
  let usage: UsageTotals | undefined
  // Text that arrived as partial-output deltas: whole messages repeating it are not emitted again,
  // and a whole message that extends what streamed since the last tool call adds only its tail.
  let streamedText = ''
  let streamedSinceTool = ''
  const calledIds = new Set<string>()

  function onAssistant(line: JsonObject): Handled {
    const content = objectField(line, 'message')?.content
    if (!Array.isArray(content)) return undefined
    const text = content
      .map((part) =>
        isObject(part) && part.type === 'text' && typeof part.text === 'string' ? part.text : '',
      )
      .join('')
    if (text === '') return []
    // With --stream-partial-output each chunk comes with `timestamp_ms`; a line with `model_call_id`
    // re-sends text already streamed, and one without `timestamp_ms` is the whole message.
    const isDelta = typeof line.timestamp_ms === 'number' && line.model_call_id === undefined
    if (isDelta) {
      streamedText += text
      streamedSinceTool += text
      return [{ type: 'text-delta', text }]
    }
    if (streamedText.includes(text)) return []
    if (streamedSinceTool !== '' && text.startsWith(streamedSinceTool)) {
      const rest = text.slice(streamedSinceTool.length)
      streamedSinceTool = text
      streamedText += rest
      return rest ? [{ type: 'text-delta', text: rest }] : []
    }
    return [{ type: 'text-delta', text }]
  }

  function onToolCall(line: JsonObject): Handled {
    const subtype = stringField(line, 'subtype')
    const toolCall = objectField(line, 'tool_call')
    const tool = toolCall ? toolEntry(toolCall) : undefined
    if (!tool || (subtype !== 'started' && subtype !== 'completed')) return undefined
    const id = stringField(line, 'call_id') || stringField(objectField(tool.body, 'args'), 'toolCallId')
    if (!id) return undefined
    streamedSinceTool = ''
    const events: AgentEvent[] = []
    if (!calledIds.has(id)) {
      calledIds.add(id)
      events.push({ type: 'tool-call', toolCallId: id, name: tool.name, input: tool.input })
    }
    if (subtype === 'started') return events
    // The result has one outcome key (`success`, `failure`, `rejected`, …) next to plain metadata.
    const result = objectField(tool.body, 'result')
    const outcome = result
      ? Object.keys(result).find((key) => isObject(result[key]) || result[key] === true)
      : undefined
    const payload = outcome ? objectField(result, outcome) : undefined
    const exitCode = numberField(payload, 'exitCode')
    const isError = !outcome || !SUCCESS_OUTCOMES.has(outcome) || (exitCode !== undefined && exitCode !== 0)
    events.push({
      type: 'tool-result',
      toolCallId: id,
      output: outcome ? { [outcome]: payload ?? true } : (result ?? null),
      isError,
    })
    const kind = FILE_TOOLS.get(tool.key)
    const filePath = stringField(payload, 'path') ?? stringField(objectField(tool.body, 'args'), 'path')
    if (!isError && outcome === 'success' && kind && filePath) {
      // Edit results carry the file's previous content; a write that does (non-empty) overwrote a file.
      const before = stringField(payload, 'beforeFullFileContent')
      const change: FileChangeEvent = {
        type: 'file-change',
        path: workspaceRelative(context.cwd, filePath),
        kind: kind === 'create' && before ? 'modify' : kind,
      }
      const diff = stringField(payload, 'diffString')
      if (diff) change.diff = diff
      events.push(change)
    }
    return events
  }

  function onResult(line: JsonObject): Handled {
    completed = true
    sessionId = stringField(line, 'session_id') ?? sessionId
    const events: AgentEvent[] = []
    const reported = objectField(line, 'usage')
    if (reported) {
      usage = usageTotals(
        tokenCount(reported.inputTokens),
        tokenCount(reported.outputTokens),
        tokenCount(reported.cacheReadTokens),
        tokenCount(reported.cacheWriteTokens),
        costUsd(line.total_cost_usd),
      )
      events.push(agentUsageEvent(usage, model))
    }
    if (line.is_error === true || (stringField(line, 'subtype') ?? 'success') !== 'success') {
      const message =
        stringField(line, 'result') || stringField(line, 'error') || 'Cursor Agent reported a failed turn'
      const code = codeForFailure(undefined, message)
      failure = { code, message }
      events.push(errorEvent(code, message, false))
    }
    return events
  }

  function onLine(type: string, subtype: string | undefined, line: JsonObject): Handled {
    switch (type) {
      case 'system':
        if (subtype !== 'init') return undefined
        model = stringField(line, 'model') ?? model
        return []
      case 'assistant':
        return onAssistant(line)
      case 'thinking': {
        const text = subtype === 'delta' ? stringField(line, 'text') : undefined
        if (text === undefined) return undefined
        return text ? [{ type: 'reasoning-delta', text }] : []
      }
      case 'tool_call':
        return onToolCall(line)
      case 'result':
        return onResult(line)
      case 'connection':
      case 'retry':
        if (type === 'connection' && subtype !== 'reconnecting') return undefined
        return [errorEvent('upstream_error', retryMessage(type, line), true)]
    }
    return undefined
  }

  function handle(text: string): AgentEvent[] {
    if (text.trim() === '') return []
    const line = parseJsonLine(text)
    const type = stringField(line, 'type')
    if (!line || !type) return [raw(text)]
    sessionId ??= stringField(line, 'session_id')
    const subtype = stringField(line, 'subtype')
    if (IGNORED_EVENTS.has(type) || IGNORED_EVENTS.has(`${type}/${subtype}`)) return []
    return onLine(type, subtype, line) ?? [raw(text)]
  }

  return streamParser(handle, () => outcomeOf({ completed, failure, sessionId, usage }))
}

/** The `<name>ToolCall` entry (or a generic `function` call) of a `tool_call` object. */
function toolEntry(
  toolCall: JsonObject,
): { key: string; name: string; input: unknown; body: JsonObject } | undefined {
  for (const [key, body] of Object.entries(toolCall)) {
    if (!isObject(body)) continue
    if (key.endsWith('ToolCall') && key.length > 'ToolCall'.length) {
      return { key, name: key.slice(0, -'ToolCall'.length), input: body.args ?? {}, body }
    }
    if (key === 'function') {
      const name = stringField(body, 'name')
      if (name) return { key, name, input: parseArguments(body.arguments), body }
    }
  }
  return undefined
}

function parseArguments(value: unknown): unknown {
  if (typeof value !== 'string') return value ?? {}
  try {
    return JSON.parse(value) as unknown
  } catch {
    return value
  }
}

function retryMessage(type: string, line: JsonObject): string {
  const attempt = numberField(line, 'attempt')
  const what = type === 'connection' ? 'Cursor Agent is reconnecting' : 'Cursor Agent retries the request'
  return attempt === undefined ? what : `${what} (attempt ${attempt})`
}
