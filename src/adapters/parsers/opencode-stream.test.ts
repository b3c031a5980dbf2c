import { describe, expect, it } from 'vitest'
import type { AgentEvent } from '../../core/events.js'
import { createOpencodeStreamParser } from './opencode-stream.js'

const CWD = '/work/repo'
const SESSION = 'ses_1'

function feed(lines: Array<string | object>) {
  const parser = createOpencodeStreamParser({ cwd: CWD })
  const events: AgentEvent[] = lines.flatMap((line) =>
    parser.line(typeof line === 'string' ? line : JSON.stringify(line)),
  )
  const finished = parser.finish()
  return { events: [...events, ...finished.events], outcome: finished.outcome }
}

const line = (type: string, part: object) => ({ type, timestamp: 1758362400000, sessionID: SESSION, part })
const stepStart = line('step_start', { type: 'step-start', snapshot: 'abc' })
const stepFinish = (
  reason: string,
  tokens = { input: 10, output: 5, reasoning: 2, cache: { read: 3, write: 1 } },
) => line('step_finish', { type: 'step-finish', reason, tokens, cost: 0.5, snapshot: 'def' })
const tool = (callID: string, name: string, state: object) =>
  line('tool_use', { type: 'tool', callID, tool: name, state })

describe('opencode-stream', () => {
  it('reports the write call with its result, the file change and the text when OpenCode writes a file', () => {
    const { events, outcome } = feed([
      stepStart,
      tool('call_1', 'write', {
        status: 'completed',
        input: { filePath: `${CWD}/a.txt`, content: 'x' },
        output: '',
        metadata: { filepath: `${CWD}/a.txt`, exists: false },
      }),
      stepFinish('tool-calls'),
      stepStart,
      line('text', { type: 'text', text: 'Created a.txt.' }),
      stepFinish('stop'),
    ])
    expect(events.filter((event) => event.type !== 'usage')).toEqual([
      {
        type: 'tool-call',
        toolCallId: 'call_1',
        name: 'write',
        input: { filePath: `${CWD}/a.txt`, content: 'x' },
      },
      { type: 'tool-result', toolCallId: 'call_1', output: '', isError: false },
      { type: 'file-change', path: 'a.txt', kind: 'create' },
      { type: 'text-delta', text: 'Created a.txt.' },
    ])
    expect(outcome.completed).toBe(true)
  })

  it('reports an edit as a modification with its diff and a failed tool as an error result', () => {
    const { events } = feed([
      tool('call_1', 'edit', {
        status: 'completed',
        input: { filePath: `${CWD}/b.txt`, oldString: 'a', newString: 'b' },
        output: 'ok',
        metadata: { diff: '--- b.txt\n+++ b.txt\n' },
      }),
      tool('call_2', 'write', { status: 'error', input: { filePath: `${CWD}/c.txt` }, error: 'EACCES' }),
    ])
    expect(events).toContainEqual({
      type: 'file-change',
      path: 'b.txt',
      kind: 'modify',
      diff: '--- b.txt\n+++ b.txt\n',
    })
    expect(events).toContainEqual({
      type: 'tool-result',
      toolCallId: 'call_2',
      output: 'EACCES',
      isError: true,
    })
    expect(events.filter((event) => event.type === 'file-change')).toHaveLength(1)
  })

  it('emits reasoning whole, as OpenCode sends finished parts', () => {
    const { events } = feed([line('reasoning', { type: 'reasoning', text: 'let me think' })])
    expect(events).toEqual([{ type: 'reasoning-delta', text: 'let me think' }])
  })

  it('reports usage per step with reasoning counted as output, totals and the session id', () => {
    const { events, outcome } = feed([stepStart, stepFinish('tool-calls'), stepStart, stepFinish('stop')])
    const step = { inputTokens: 10, outputTokens: 7, cacheReadTokens: 3, cacheWriteTokens: 1, costUsd: 0.5 }
    expect(events).toEqual([
      { type: 'usage', source: 'agent', ...step },
      { type: 'usage', source: 'agent', ...step },
    ])
    expect(outcome).toEqual({
      completed: true,
      sessionId: SESSION,
      usage: { inputTokens: 20, outputTokens: 14, cacheReadTokens: 6, cacheWriteTokens: 2, costUsd: 1 },
    })
  })

  it('reports a failure when an error event arrives (an API 401)', () => {
    const { events, outcome } = feed([
      stepStart,
      {
        type: 'error',
        timestamp: 1,
        sessionID: SESSION,
        error: { name: 'APIError', data: { message: 'Unauthorized', statusCode: 401, isRetryable: false } },
      },
    ])
    expect(events).toEqual([
      { type: 'error', code: 'unauthorized', message: 'Unauthorized', retryable: false },
    ])
    expect(outcome).toEqual({
      completed: true,
      sessionId: SESSION,
      failure: { code: 'unauthorized', message: 'Unauthorized' },
    })
  })

  it('is not completed when the stream stops after a tool-calls step (a cancel)', () => {
    const { outcome } = feed([stepStart, stepFinish('tool-calls')])
    expect(outcome.completed).toBe(false)
  })

  it('is not completed when a new step starts after a stop', () => {
    const { outcome } = feed([stepStart, stepFinish('stop'), stepStart])
    expect(outcome.completed).toBe(false)
  })

  it('keeps unknown types and cut-off lines as raw', () => {
    const cut = JSON.stringify(stepStart).slice(0, 50)
    const { events } = feed([cut, '{"type":"snapshot"}', ''])
    expect(events).toEqual([
      { type: 'raw', stream: 'stdout', value: cut },
      { type: 'raw', stream: 'stdout', value: '{"type":"snapshot"}' },
    ])
  })
})
