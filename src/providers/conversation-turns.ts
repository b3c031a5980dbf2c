// A checked history regrouped by assistant turn, the shape both wire formats need: Anthropic puts every
// result of a turn in one user message, OpenAI puts one `tool` message per call right after the call.
// Either way the results go in the order of the calls, not in the order the tools happened to finish.
import type { AssistantMessage, Message, ToolMessage, UserMessage } from '../core/messages.js'

export type ConversationTurn =
  | { role: 'user'; message: UserMessage }
  /** `results` holds one tool message per call, in call order. */
  | { role: 'assistant'; message: AssistantMessage; results: ToolMessage[] }

/** Expects a history that passed `checkHistory`; tool messages attach to the assistant before them. */
export function toConversationTurns(messages: Message[]): ConversationTurn[] {
  const turns: ConversationTurn[] = []
  for (const message of messages) {
    if (message.role === 'user') turns.push({ role: 'user', message })
    else if (message.role === 'assistant') turns.push({ role: 'assistant', message, results: [] })
    else {
      const last = turns.at(-1)
      if (last?.role === 'assistant') last.results.push(message)
    }
  }
  for (const turn of turns) {
    if (turn.role !== 'assistant') continue
    const order = (turn.message.toolCalls ?? []).map((call) => call.id)
    turn.results.sort((left, right) => order.indexOf(left.toolCallId) - order.indexOf(right.toolCallId))
  }
  return turns
}

/** The text of a tool result, for formats that only take text; empty means the tool printed nothing. */
export const EMPTY_TOOL_RESULT = '(no output)'
