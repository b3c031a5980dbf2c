import { describe, expect, it } from 'vitest'
import type { AgentEvent } from '../../core/events.js'
import { createCursorStreamParser } from './cursor-stream.js'

const CWD = '/work/repo'
const SESSION = 'cur-1'

function feed(lines: Array<string | object>) {
  const parser = createCursorStreamParser({ cwd: CWD })
  const events: AgentEvent[] = lines.flatMap((line) =>
    parser.line(typeof line === 'string' ? line : JSON.stringify(line)),
  )
  const finished = parser.finish()
  return { events: [...events, ...finished.events], outcome: finished.outcome }
}

const init = {
  type: 'system',
  subtype: 'init',
  apiKeySource: 'login',
  cwd: CWD,
  session_id: SESSION,
  model: 'Auto',
  permissionMode: 'default',
}
const say = (text: string, extra: object = {}) => ({
  type: 'assistant',
  message: { role: 'assistant', content: [{ type: 'text', text }] },
  session_id: SESSION,
  ...extra,
})
const toolCall = (subtype: string, callId: string, call: object) => ({
  type: 'tool_call',
  subtype,
  call_id: callId,
  tool_call: call,
  session_id: SESSION,
})
const writeArgs = { path: `${CWD}/a.txt`, fileText: 'x\n' }
const result = {
  type: 'result',
  subtype: 'success',
  duration_ms: 100,
  is_error: false,
  result: 'done',
  session_id: SESSION,
  usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 3, cacheWriteTokens: 1 },
}

describe('cursor-stream', () => {
  it('reports the write call, its result, the file change and the text when Cursor writes a file', () => {
    const { events, outcome } = feed([
      init,
      {
        type: 'user',
        message: { role: 'user', content: [{ type: 'text', text: 'write a.txt' }] },
        session_id: SESSION,
      },
      toolCall('started', 'call-1', { writeToolCall: { args: writeArgs } }),
      toolCall('completed', 'call-1', {
        writeToolCall: {
          args: writeArgs,
          result: { success: { path: `${CWD}/a.txt`, linesCreated: 1, fileSize: 2 } },
        },
      }),
      say('done'),
      result,
    ])
    expect(events.slice(0, 4)).toEqual([
      { type: 'tool-call', toolCallId: 'call-1', name: 'write', input: writeArgs },
      {
        type: 'tool-result',
        toolCallId: 'call-1',
        output: { success: { path: `${CWD}/a.txt`, linesCreated: 1, fileSize: 2 } },
        isError: false,
      },
      { type: 'file-change', path: 'a.txt', kind: 'create' },
      { type: 'text-delta', text: 'done' },
    ])
    expect(outcome.completed).toBe(true)
  })

  it('reports an edit with its diff, a rejected shell call as an error and a failed command as an error', () => {
    const edit = { path: `${CWD}/b.txt`, linesAdded: 1, linesRemoved: 0, diffString: '--- a\n+++ b\n' }
    const { events } = feed([
      toolCall('completed', 'call-2', {
        editToolCall: { args: { path: `${CWD}/b.txt` }, result: { success: edit } },
      }),
      toolCall('completed', 'call-3', {
        shellToolCall: { args: { command: 'ls' }, result: { rejected: { command: 'ls', reason: '' } } },
      }),
      toolCall('completed', 'call-4', {
        shellToolCall: {
          args: { command: 'false' },
          result: { success: { exitCode: 1, stdout: '', stderr: '' } },
        },
      }),
    ])
    expect(events).toContainEqual({
      type: 'file-change',
      path: 'b.txt',
      kind: 'modify',
      diff: '--- a\n+++ b\n',
    })
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'tool-result', toolCallId: 'call-3', isError: true }),
    )
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'tool-result', toolCallId: 'call-4', isError: true }),
    )
    expect(
      events
        .filter((event) => event.type === 'tool-call')
        .map((event) => event.type === 'tool-call' && event.name),
    ).toEqual(['edit', 'shell', 'shell'])
  })

  it('emits thinking deltas as reasoning', () => {
    const { events } = feed([
      { type: 'thinking', subtype: 'delta', text: 'hmm', session_id: SESSION, timestamp_ms: 1 },
      { type: 'thinking', subtype: 'completed', session_id: SESSION, timestamp_ms: 2 },
    ])
    expect(events).toEqual([{ type: 'reasoning-delta', text: 'hmm' }])
  })

  it('streams partial output once, skipping the flushed and the whole copies of the same text', () => {
    const { events } = feed([
      say('Hel', { timestamp_ms: 1 }),
      say('lo', { timestamp_ms: 2 }),
      say('Hello', { model_call_id: 'mc-1', timestamp_ms: 3 }),
      toolCall('started', 'call-1', { readToolCall: { args: { path: 'a' } } }),
      say('Bye', { timestamp_ms: 4 }),
      say('HelloBye'),
    ])
    expect(events.filter((event) => event.type === 'text-delta')).toEqual([
      { type: 'text-delta', text: 'Hel' },
      { type: 'text-delta', text: 'lo' },
      { type: 'text-delta', text: 'Bye' },
    ])
  })

  it('emits whole messages when there is no partial output', () => {
    const { events } = feed([say('one'), say('one')])
    expect(events).toEqual([
      { type: 'text-delta', text: 'one' },
      { type: 'text-delta', text: 'one' },
    ])
  })

  it('reports usage and the session id from the result', () => {
    const { events, outcome } = feed([init, result])
    const usage = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 3, cacheWriteTokens: 1 }
    expect(events).toEqual([{ type: 'usage', source: 'agent', model: 'Auto', ...usage }])
    expect(outcome).toEqual({ completed: true, sessionId: SESSION, usage })
  })

  it('reports a failure when the result is an error', () => {
    const message = 'API Error: 401 Unauthorized'
    const { events, outcome } = feed([
      init,
      { type: 'result', subtype: 'error', is_error: true, result: message, session_id: SESSION },
    ])
    expect(events).toEqual([{ type: 'error', code: 'unauthorized', message, retryable: false }])
    expect(outcome).toEqual({
      completed: true,
      sessionId: SESSION,
      failure: { code: 'unauthorized', message },
    })
  })

  it('is not completed when the stream stops before the result', () => {
    expect(feed([init, say('working')]).outcome).toEqual({ completed: false, sessionId: SESSION })
  })

  it('reports reconnects as retryable errors and keeps unknown types and cut-off lines as raw', () => {
    const cut = JSON.stringify(result).slice(0, 20)
    const { events } = feed([
      { type: 'connection', subtype: 'reconnecting', attempt: 2, session_id: SESSION },
      { type: 'connection', subtype: 'reconnected', session_id: SESSION },
      '{"type":"something_new"}',
      cut,
    ])
    expect(events).toEqual([
      {
        type: 'error',
        code: 'upstream_error',
        message: 'Cursor Agent is reconnecting (attempt 2)',
        retryable: true,
      },
      { type: 'raw', stream: 'stdout', value: '{"type":"something_new"}' },
      { type: 'raw', stream: 'stdout', value: cut },
    ])
  })
})
