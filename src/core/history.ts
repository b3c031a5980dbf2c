// The history invariant every provider request relies on: each tool call of an assistant message is
// answered by exactly one `tool` message with its id before the next user or assistant message, and no
// tool message stands without its call. Anthropic rejects a `tool_use` without its `tool_result`, and
// OpenAI rejects a `tool` message that does not follow its call, so a broken sequence (a crash between a
// call and its result, a rejected proposal with no result, a duplicated write) must never reach them.
// Pure: the providers check before every request, the loop repairs stored state.
import type { AssistantMessage, Message, ToolCall, ToolMessage } from './messages.js'

/** The result text that stands in for a tool call that never got one. */
export const INTERRUPTED_TOOL_RESULT = 'The tool call was interrupted before it returned a result.'

export type HistoryCheck = { ok: true } | { ok: false; problems: string[] }

/** The tool calls of one assistant message, and which of them have a result so far. */
interface OpenTurn {
  assistantIndex: number
  calls: ToolCall[]
  answered: Set<string>
}

function uniqueCalls(message: AssistantMessage): ToolCall[] {
  const seen = new Set<string>()
  return (message.toolCalls ?? []).filter((call) => {
    if (seen.has(call.id)) return false
    seen.add(call.id)
    return true
  })
}

/**
 * The end of the list counts as a boundary too: a request that ends with unanswered calls is as invalid
 * as one that continues past them.
 */
export function checkHistory(messages: Message[]): HistoryCheck {
  const problems: string[] = []
  let turn: OpenTurn | undefined

  const closeTurn = () => {
    if (!turn) return
    for (const call of turn.calls) {
      if (!turn.answered.has(call.id)) {
        problems.push(
          `message ${turn.assistantIndex}: tool call ${call.id} (${call.name}) has no tool result before the next message`,
        )
      }
    }
    turn = undefined
  }

  messages.forEach((message, index) => {
    if (message.role === 'tool') {
      const id = message.toolCallId
      if (!turn) problems.push(`message ${index}: tool result ${id} does not follow an assistant message`)
      else if (!turn.calls.some((call) => call.id === id))
        problems.push(
          `message ${index}: tool result ${id} answers no tool call of message ${turn.assistantIndex}`,
        )
      else if (turn.answered.has(id)) problems.push(`message ${index}: tool call ${id} is answered twice`)
      else turn.answered.add(id)
      return
    }
    closeTurn()
    if (message.role !== 'assistant') return
    const calls = message.toolCalls ?? []
    const unique = uniqueCalls(message)
    if (unique.length !== calls.length) {
      problems.push(`message ${index}: the same tool call id is used twice in one assistant message`)
    }
    turn = { assistantIndex: index, calls: unique, answered: new Set() }
  })
  closeTurn()
  return problems.length === 0 ? { ok: true } : { ok: false, problems }
}

function interruptedResult(call: ToolCall): ToolMessage {
  return {
    role: 'tool',
    toolCallId: call.id,
    toolName: call.name,
    content: INTERRUPTED_TOOL_RESULT,
    isError: true,
  }
}

/**
 * Returns a history that passes `checkHistory`: unanswered calls get a synthetic error result (so the
 * model learns the call did not happen rather than guessing), orphan and duplicate tool messages are
 * dropped, and a call id repeated inside one assistant message keeps only its first call. Messages that
 * need no change are returned as the same objects.
 */
export function repairHistory(messages: Message[]): Message[] {
  const repaired: Message[] = []
  let turn: OpenTurn | undefined

  const closeTurn = () => {
    if (!turn) return
    for (const call of turn.calls) if (!turn.answered.has(call.id)) repaired.push(interruptedResult(call))
    turn = undefined
  }

  messages.forEach((message, index) => {
    if (message.role === 'tool') {
      const id = message.toolCallId
      if (!turn || turn.answered.has(id) || !turn.calls.some((call) => call.id === id)) return
      turn.answered.add(id)
      repaired.push(message)
      return
    }
    closeTurn()
    if (message.role !== 'assistant') {
      repaired.push(message)
      return
    }
    const unique = uniqueCalls(message)
    const calls = message.toolCalls ?? []
    repaired.push(unique.length === calls.length ? message : { ...message, toolCalls: unique })
    turn = { assistantIndex: index, calls: unique, answered: new Set() }
  })
  closeTurn()
  return repaired
}
