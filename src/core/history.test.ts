import { describe, expect, it } from 'vitest'
import { checkHistory, INTERRUPTED_TOOL_RESULT, repairHistory } from './history.js'
import type { AssistantMessage, Message, ToolMessage, UserMessage } from './messages.js'

const user = (text: string): UserMessage => ({ role: 'user', content: [{ type: 'text', text }] })
const calling = (...ids: string[]): AssistantMessage => ({
  role: 'assistant',
  content: [],
  toolCalls: ids.map((id) => ({ id, name: 'read_file', input: { path: id } })),
  stopReason: 'tool_use',
})
const answer = (id: string, content = 'ok'): ToolMessage => ({
  role: 'tool',
  toolCallId: id,
  toolName: 'read_file',
  content,
})
const reply: AssistantMessage = {
  role: 'assistant',
  content: [{ type: 'text', text: 'done' }],
  stopReason: 'end_turn',
}

describe('history', () => {
  it('accepts a history where every call is answered once before the next message', () => {
    const messages: Message[] = [user('go'), calling('a', 'b'), answer('b'), answer('a'), reply, user('more')]
    expect(checkHistory(messages)).toEqual({ ok: true })
    expect(repairHistory(messages)).toEqual(messages)
  })

  it('reports an unanswered call when the next user message comes first', () => {
    const result = checkHistory([user('go'), calling('a', 'b'), answer('a'), user('next')])
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.problems).toEqual([expect.stringContaining('tool call b (read_file)')])
  })

  it('reports unanswered calls at the end of the history', () => {
    expect(checkHistory([user('go'), calling('a')]).ok).toBe(false)
  })

  it('reports an orphan tool message and a tool message after a user message', () => {
    const result = checkHistory([answer('x'), user('go'), reply, answer('y')])
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.problems).toHaveLength(2)
  })

  it('reports a result that answers a call of an earlier turn', () => {
    const messages: Message[] = [
      user('go'),
      calling('a'),
      answer('a'),
      calling('b'),
      answer('a'),
      answer('b'),
    ]
    expect(checkHistory(messages).ok).toBe(false)
  })

  it('reports a call answered twice and a call id used twice in one message', () => {
    expect(checkHistory([user('go'), calling('a'), answer('a'), answer('a')]).ok).toBe(false)
    expect(checkHistory([user('go'), calling('a', 'a'), answer('a')]).ok).toBe(false)
  })

  it('inserts a synthetic error result for each unanswered call when repairing', () => {
    const repaired = repairHistory([user('go'), calling('a', 'b'), answer('a'), user('next'), calling('c')])
    expect(repaired).toEqual([
      user('go'),
      calling('a', 'b'),
      answer('a'),
      {
        role: 'tool',
        toolCallId: 'b',
        toolName: 'read_file',
        content: INTERRUPTED_TOOL_RESULT,
        isError: true,
      },
      user('next'),
      calling('c'),
      {
        role: 'tool',
        toolCallId: 'c',
        toolName: 'read_file',
        content: INTERRUPTED_TOOL_RESULT,
        isError: true,
      },
    ])
    expect(checkHistory(repaired)).toEqual({ ok: true })
  })

  it('drops orphan and duplicate tool messages when repairing', () => {
    const repaired = repairHistory([
      answer('x'),
      user('go'),
      calling('a'),
      answer('a', 'first'),
      answer('a', 'second'),
      answer('zzz'),
      reply,
    ])
    expect(repaired).toEqual([user('go'), calling('a'), answer('a', 'first'), reply])
    expect(checkHistory(repaired)).toEqual({ ok: true })
  })

  it('keeps the first of two calls with the same id in one message when repairing', () => {
    const repaired = repairHistory([user('go'), calling('a', 'a'), answer('a')])
    expect(repaired[1]).toMatchObject({ toolCalls: [{ id: 'a' }] })
    expect(checkHistory(repaired)).toEqual({ ok: true })
  })

  it('returns the same message objects when nothing needs repair', () => {
    const messages: Message[] = [user('go'), calling('a'), answer('a')]
    const repaired = repairHistory(messages)
    repaired.forEach((message, index) => expect(message).toBe(messages[index]))
  })
})
