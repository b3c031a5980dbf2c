// Issue 20 item 2: after Claude Code's turn the built-in agent got both user messages merged into one turn
// and none of Claude Code's reply, so it redid the first task. Its history now has the other agent's reply
// as an assistant turn after the message it answered (who, its text, the files it changed), bounded like
// every handoff, and never two user messages in a row.
import { describe, expect, it } from 'vitest'
import { checkHistory } from '../core/history.js'
import type { Message } from '../core/messages.js'
import { toAnthropicRequest } from '../providers/to-anthropic-request.js'
import type { HandoffTurn } from './handoff.js'
import { builtinHistory, foreignReplies, type HistoryEntry, NO_REPLY_TEXT } from './handoff-history.js'

const user = (text: string, runId: string | null): HistoryEntry => ({
  message: { role: 'user', content: [{ type: 'text', text }] },
  runId,
})
const assistant = (text: string, runId: string): HistoryEntry => ({
  message: { role: 'assistant', content: [{ type: 'text', text }], stopReason: 'end_turn' },
  runId,
})

function claudeTurn(runId: string, overrides: Partial<HandoffTurn> = {}): HandoffTurn {
  return {
    runId,
    agent: 'claude-code',
    adapter: 'claude-code',
    prompt: 'Write notes.txt',
    status: 'succeeded',
    reason: null,
    finalText: 'I wrote notes.txt.',
    files: [{ path: 'notes.txt', kind: 'create', added: 1, removed: 0 }],
    proposals: [],
    ...overrides,
  }
}

const textOf = (message: Message) =>
  message.role === 'tool'
    ? ''
    : message.content.map((part) => (part.type === 'text' ? part.text : '')).join('')

describe('handoff-history', () => {
  it("puts another agent's reply after the message it answered, with who did it and the files it changed", () => {
    const { replies, event } = foreignReplies([claudeTurn('run_1')], { budgetChars: 10_000 })
    const history = builtinHistory(
      [user('Write notes.txt', 'run_1'), user('Now add a second line', 'run_2')],
      replies,
    )
    expect(history.map((message) => message.role)).toEqual(['user', 'assistant', 'user'])
    expect(textOf(history[0]!)).toBe('Write notes.txt')
    const reply = textOf(history[1]!)
    expect(reply).toContain('Another agent, claude-code, took this turn')
    expect(reply).toContain('claude-code replied: I wrote notes.txt.')
    expect(reply).toContain('- notes.txt (create, +1 -0)')
    expect(textOf(history[2]!)).toBe('Now add a second line')
    expect(checkHistory(history)).toEqual({ ok: true })
    expect(event).toMatchObject({ type: 'handoff', mode: 'history', runs: ['run_1'], omitted: 0 })

    // The request the model gets keeps the two user messages apart.
    const request = toAnthropicRequest({ model: 'm', system: 's', messages: history, tools: [] })
    expect(request.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user'])
  })

  it("keeps its own turns as stored and reports only the other agents' turns after its last run", () => {
    const turns = [claudeTurn('run_1'), claudeTurn('run_3', { finalText: 'Second.' })]
    const { replies, event } = foreignReplies(turns, { budgetChars: 10_000, unseenAfter: 'run_2' })
    const history = builtinHistory(
      [
        user('one', 'run_1'),
        user('two', 'run_2'),
        assistant('builtin answer', 'run_2'),
        user('three', 'run_3'),
        user('four', 'run_4'),
      ],
      replies,
    )
    expect(history.map((message) => [message.role, textOf(message).split('\n').at(-1)])).toEqual([
      ['user', 'one'],
      ['assistant', '- notes.txt (create, +1 -0)'],
      ['user', 'two'],
      ['assistant', 'builtin answer'],
      ['user', 'three'],
      ['assistant', '- notes.txt (create, +1 -0)'],
      ['user', 'four'],
    ])
    expect(event?.runs).toEqual(['run_3'])
  })

  it('never leaves two user messages adjacent, even when nothing answered the first', () => {
    // A message stored before messages named their run, and a run that failed before any reply.
    const history = builtinHistory(
      [user('lost', null), user('failed', 'run_2'), user('now', 'run_3')],
      new Map(),
    )
    expect(history.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user'])
    expect(textOf(history[1]!)).toBe(NO_REPLY_TEXT)
    expect(checkHistory(history)).toEqual({ ok: true })
  })

  it('finds the run of a user message stored before messages named their run, by its text and time', () => {
    const { replies } = foreignReplies([claudeTurn('run_1', { prompt: 'same' })], { budgetChars: 10_000 })
    const legacy = (text: string, createdAt: string): HistoryEntry => ({ ...user(text, null), createdAt })
    const runs = [
      { id: 'run_0', prompt: 'same', createdAt: '2026-01-01T00:00:00.000Z' },
      { id: 'run_1', prompt: 'same', createdAt: '2026-01-01T00:00:02.000Z' },
    ]
    const history = builtinHistory(
      // The first message started run_0 (the built-in agent's: no reply here), the second run_1 (Claude's).
      [
        legacy('same', '2026-01-01T00:00:00.000Z'),
        legacy('same', '2026-01-01T00:00:01.000Z'),
        user('now', 'run_2'),
      ],
      replies,
      runs,
    )
    expect(history.map((message) => textOf(message).split('\n')[0])).toEqual([
      'same',
      NO_REPLY_TEXT,
      'same',
      '(Another agent, claude-code, took this turn in the same workspace.)',
      'now',
    ])
  })

  it('cuts the oldest replies short first, then leaves them out, to fit its budget', () => {
    const turns = ['run_1', 'run_2', 'run_3'].map((runId) =>
      claudeTurn(runId, { finalText: `${runId} `.repeat(1_000) }),
    )
    const { replies, event } = foreignReplies(turns, { budgetChars: 7_000 })
    expect(replies.get('run_1')).toContain('its reply is left out to fit the context window')
    expect(replies.get('run_2')).toContain('[cut short]')
    expect(replies.get('run_3')).toContain(`${'run_3 '.repeat(999)}run_3`)
    expect(event).toMatchObject({ summarised: 1, omitted: 1, budgetChars: 7_000 })
  })
})
