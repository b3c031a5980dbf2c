// Parses `gemini -p --output-format stream-json` (Gemini CLI 0.61): `init`, `message`, `tool_use`,
// `tool_result`, `error` and a final `result` (notes §4, "Gemini"). It sends no thinking events. A run
// cancelled by a signal exits 0 without `result`, so only `result` makes the run complete.
import type { AgentEvent, FileChangeEvent, UsageTotals } from '../../core/events.js'
import type { ParserContext, ParserOutcome, StreamParser } from '../types.js'
import { codeForFailure, errorEvent } from './agent-error-codes.js'
import {
  isObject,
  type JsonObject,
  objectField,
  parseJsonLine,
  raw,
  stringField,
  workspaceRelative,
  outcomeOf,
  streamParser,
} from './parse-helpers.js'
import { agentUsageEvent, singleKey, tokenCount, usageTotals } from './usage-totals.js'

/** Tools whose success means a file in the workspace changed (`replace` edits, `write_file` writes whole). */
const FILE_TOOLS: ReadonlySet<string> = new Set(['write_file', 'replace', 'edit'])

type Handled = AgentEvent[] | undefined

export function createGeminiStreamParser(context: ParserContext): StreamParser {
  let sessionId: string | undefined
  let model: string | undefined
  let completed = false
  let failure: ParserOutcome['failure']
  let usage: UsageTotals | undefined
  // Assistant text streamed as deltas since the last tool call: a whole message repeating it is skipped.
  let streamedText = ''
  const toolUses = new Map<string, { name: string; parameters: JsonObject | undefined }>()

  function onMessage(line: JsonObject): Handled {
    const role = stringField(line, 'role')
    const content = stringField(line, 'content')
    if (content === undefined || (role !== 'user' && role !== 'assistant')) return undefined
    // The user's prompt echoed back.
    if (role === 'user' || content === '') return []
    if (line.delta === true) {
      streamedText += content
      return [{ type: 'text-delta', text: content }]
    }
    if (streamedText !== '' && streamedText.endsWith(content)) return []
    return [{ type: 'text-delta', text: content }]
  }

  function onToolUse(line: JsonObject): Handled {
    const id = stringField(line, 'tool_id')
    const name = stringField(line, 'tool_name')
    if (!id || !name) return undefined
    streamedText = ''
    const parameters = line.parameters ?? {}
    toolUses.set(id, { name, parameters: isObject(parameters) ? parameters : undefined })
    return [{ type: 'tool-call', toolCallId: id, name, input: parameters }]
  }

  function onToolResult(line: JsonObject): Handled {
    const id = stringField(line, 'tool_id')
    const status = stringField(line, 'status')
    if (!id || (status !== 'success' && status !== 'error')) return undefined
    const isError = status === 'error'
    const output = line.output ?? stringField(objectField(line, 'error'), 'message') ?? ''
    const events: AgentEvent[] = [{ type: 'tool-result', toolCallId: id, output, isError }]
    const use = toolUses.get(id)
    const filePath = stringField(use?.parameters, 'file_path')
    if (!isError && use && FILE_TOOLS.has(use.name) && filePath) {
      events.push({
        type: 'file-change',
        path: workspaceRelative(context.cwd, filePath),
        kind: writeKind(use, output),
      })
    }
    return events
  }

  function onResult(line: JsonObject): Handled {
    completed = true
    const events: AgentEvent[] = []
    const stats = objectField(line, 'stats')
    if (stats) {
      // input_tokens count the cached prompt tokens too; `input` (when sent) is the uncached part.
      const cached = tokenCount(stats.cached)
      const uncached =
        typeof stats.input === 'number' ? tokenCount(stats.input) : tokenCount(stats.input_tokens) - cached
      usage = usageTotals(uncached, tokenCount(stats.output_tokens), cached, 0)
      events.push(agentUsageEvent(usage, singleKey(objectField(stats, 'models')) ?? model))
    }
    if (stringField(line, 'status') === 'error') {
      const error = objectField(line, 'error')
      const message = stringField(error, 'message') ?? 'Gemini CLI reported a failed turn'
      const code = codeForFailure(undefined, message)
      failure = { code, message }
      events.push(errorEvent(code, message, false))
    }
    return events
  }

  function handle(text: string): AgentEvent[] {
    if (text.trim() === '') return []
    const line = parseJsonLine(text)
    if (!line) return [raw(text)]
    let events: Handled
    switch (line.type) {
      case 'init': {
        sessionId = stringField(line, 'session_id') ?? sessionId
        const named = stringField(line, 'model')
        // `auto` names Gemini's model router, not a model; the result's stats name the models used.
        if (named && named !== 'auto') model = named
        events = []
        break
      }
      case 'message':
        events = onMessage(line)
        break
      case 'tool_use':
        events = onToolUse(line)
        break
      case 'tool_result':
        events = onToolResult(line)
        break
      case 'error': {
        // Loop detected, invalid stream, quota…: the turn may still go on; `result` says how it ended.
        const message = stringField(line, 'message')
        const severity = stringField(line, 'severity')
        if (message !== undefined) {
          const code = severity === 'warning' ? 'agent_warning' : codeForFailure(undefined, message)
          events = [errorEvent(code, message, false)]
        }
        break
      }
      case 'result':
        events = onResult(line)
        break
    }
    return events ?? [raw(text)]
  }

  return streamParser(handle, () => outcomeOf({ completed, failure, sessionId, usage }))
}

/**
 * `replace` edits an existing file. `write_file` does not say whether the file existed; its display
 * text does ("Successfully overwrote file" vs "created"), so that is the best hint there is.
 */
function writeKind(use: { name: string }, output: unknown): FileChangeEvent['kind'] {
  if (use.name !== 'write_file') return 'modify'
  return typeof output === 'string' && /overwr/i.test(output) ? 'modify' : 'create'
}
