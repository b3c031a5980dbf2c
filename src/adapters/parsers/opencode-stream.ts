// Parses `opencode run --format json` (OpenCode 1.18): every line is `{type, timestamp, sessionID, part | error}`
// (notes §4, "OpenCode"). Parts arrive finished: text and reasoning whole, a tool call together with its
// result. There is no final event: a `step_finish` with reason `stop` that no new step follows ends the run.
import type { AgentEvent, FileChangeEvent, UsageTotals } from '../../core/events.js'
import type { ParserContext, ParserOutcome, StreamParser } from '../types.js'
import { type AgentErrorCode, codeForFailure, errorEvent } from './agent-error-codes.js'
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
import { addUsage, agentUsageEvent, costUsd, tokenCount, usageTotals } from './usage-totals.js'

/** Tools whose success means a file in the workspace changed. */
const FILE_TOOLS: ReadonlySet<string> = new Set(['write', 'edit'])

/** Tool states that are not finished yet (OpenCode normally sends only finished ones). */
const PENDING_TOOL_STATES: ReadonlySet<string> = new Set(['pending', 'running'])

type Handled = AgentEvent[] | undefined

export function createOpencodeStreamParser(context: ParserContext): StreamParser {
  let sessionId: string | undefined
  let completed = false
  let failure: ParserOutcome['failure']
  let usage: UsageTotals | undefined
  const calledIds = new Set<string>()

  function onToolUse(part: JsonObject | undefined): Handled {
    const id = stringField(part, 'callID')
    const name = stringField(part, 'tool')
    const state = objectField(part, 'state')
    const status = stringField(state, 'status')
    if (!id || !name || !state || !status) return undefined
    const input = state.input ?? {}
    const events: AgentEvent[] = []
    if (!calledIds.has(id)) {
      calledIds.add(id)
      events.push({ type: 'tool-call', toolCallId: id, name, input })
    }
    if (PENDING_TOOL_STATES.has(status)) return events
    if (status !== 'completed' && status !== 'error') return undefined
    const isError = status === 'error'
    const output = isError ? (state.error ?? '') : (state.output ?? '')
    events.push({ type: 'tool-result', toolCallId: id, output, isError })
    const change = isError || !FILE_TOOLS.has(name) ? undefined : fileChange(name, state, input)
    if (change) events.push(change)
    return events
  }

  function fileChange(name: string, state: JsonObject, input: unknown): FileChangeEvent | undefined {
    const metadata = objectField(state, 'metadata')
    const filePath =
      stringField(metadata, 'filepath') ??
      stringField(objectField(metadata, 'filediff'), 'file') ??
      (isObject(input) ? stringField(input, 'filePath') : undefined)
    if (!filePath) return undefined
    // `write` says whether the file was there before; `edit` only changes existing files.
    const kind = name === 'write' && metadata?.exists !== true ? 'create' : 'modify'
    const diff = stringField(metadata, 'diff')
    return {
      type: 'file-change',
      path: workspaceRelative(context.cwd, filePath),
      kind,
      ...(diff ? { diff } : {}),
    }
  }

  function onStepFinish(part: JsonObject | undefined): Handled {
    if (!part) return undefined
    if (stringField(part, 'reason') === 'stop') completed = true
    const tokens = objectField(part, 'tokens')
    const cost = costUsd(part.cost)
    if (!tokens && cost === undefined) return []
    const cache = objectField(tokens, 'cache')
    // OpenCode already keeps cache reads and writes out of `input`; reasoning is billed as output.
    const stepUsage = usageTotals(
      tokenCount(tokens?.input),
      tokenCount(tokens?.output) + tokenCount(tokens?.reasoning),
      tokenCount(cache?.read),
      tokenCount(cache?.write),
      cost,
    )
    usage = addUsage(usage, stepUsage)
    return [agentUsageEvent(stepUsage)]
  }

  function onError(line: JsonObject): Handled {
    completed = true
    const error = objectField(line, 'error')
    const data = objectField(error, 'data')
    const name = stringField(error, 'name') ?? 'Error'
    const message = stringField(data, 'message') ?? stringField(error, 'message') ?? name
    const code: AgentErrorCode =
      name === 'ProviderAuthError'
        ? 'unauthorized'
        : name === 'MessageAbortedError'
          ? 'cancelled'
          : codeForFailure(numberField(data, 'statusCode'), message)
    failure = { code, message }
    return [errorEvent(code, message, false)]
  }

  function handle(text: string): AgentEvent[] {
    if (text.trim() === '') return []
    const line = parseJsonLine(text)
    if (!line) return [raw(text)]
    sessionId ??= stringField(line, 'sessionID')
    const part = objectField(line, 'part')
    let events: Handled
    switch (line.type) {
      case 'step_start':
        // A new step after a `stop` means the run went on.
        completed = false
        events = []
        break
      case 'text':
      case 'reasoning': {
        const value = stringField(part, 'text')
        if (value !== undefined) {
          events =
            value === ''
              ? []
              : [{ type: line.type === 'text' ? 'text-delta' : 'reasoning-delta', text: value }]
        }
        break
      }
      case 'tool_use':
        events = onToolUse(part)
        break
      case 'step_finish':
        events = onStepFinish(part)
        break
      case 'error':
        events = onError(line)
        break
    }
    return events ?? [raw(text)]
  }

  return streamParser(handle, () => outcomeOf({ completed, failure, sessionId, usage }))
}
