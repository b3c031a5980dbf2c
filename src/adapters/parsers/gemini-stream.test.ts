import { describe, expect, it } from 'vitest'
import type { AgentEvent } from '../../core/events.js'
import { createGeminiStreamParser } from './gemini-stream.js'

const CWD = '/work/repo'
const TIME = '2026-09-20T10:00:00.000Z'

function feed(lines: Array<string | object>) {
  const parser = createGeminiStreamParser({ cwd: CWD })
  const events: AgentEvent[] = lines.flatMap((line) =>
    parser.line(typeof line === 'string' ? line : JSON.stringify(line)),
  )
  const finished = parser.finish()
  return { events: [...events, ...finished.events], outcome: finished.outcome }
}

const init = { type: 'init', timestamp: TIME, session_id: 'gem-1', model: 'gemini-3.8-flash' }
const say = (content: string, delta = true) => ({
  type: 'message',
  timestamp: TIME,
  role: 'assistant',
  content,
  ...(delta ? { delta } : {}),
})
const writeFile = (id: string, file: string) => ({
  type: 'tool_use',
  timestamp: TIME,
  tool_name: 'write_file',
  tool_id: id,
  parameters: { file_path: `${CWD}/${file}`, content: 'x' },
})
const ok = (id: string, output?: string) => ({
  type: 'tool_result',
  timestamp: TIME,
  tool_id: id,
  status: 'success',
  ...(output ? { output } : {}),
})
const result = {
  type: 'result',
  timestamp: TIME,
  status: 'success',
  stats: {
    total_tokens: 130,
    input_tokens: 100,
    output_tokens: 30,
    cached: 40,
    duration_ms: 10,
    tool_calls: 1,
  },
}

describe('gemini-stream', () => {
  it('reports the write_file call, its result, the file change and the text when Gemini writes a file', () => {
    const { events, outcome } = feed([
      init,
      { type: 'message', timestamp: TIME, role: 'user', content: 'write a.txt' },
      writeFile('t1', 'a.txt'),
      ok('t1'),
      say('done'),
      result,
    ])
    expect(events.slice(0, 4)).toEqual([
      {
        type: 'tool-call',
        toolCallId: 't1',
        name: 'write_file',
        input: { file_path: `${CWD}/a.txt`, content: 'x' },
      },
      { type: 'tool-result', toolCallId: 't1', output: '', isError: false },
      { type: 'file-change', path: 'a.txt', kind: 'create' },
      { type: 'text-delta', text: 'done' },
    ])
    expect(outcome.completed).toBe(true)
  })

  it('reports replace and an overwriting write_file as modifications and a failed write as no change', () => {
    const { events } = feed([
      {
        type: 'tool_use',
        timestamp: TIME,
        tool_name: 'replace',
        tool_id: 't1',
        parameters: { file_path: `${CWD}/a.txt` },
      },
      ok('t1'),
      writeFile('t2', 'b.txt'),
      ok('t2', 'Successfully overwrote file: b.txt'),
      writeFile('t3', 'c.txt'),
      {
        type: 'tool_result',
        timestamp: TIME,
        tool_id: 't3',
        status: 'error',
        error: { type: 'io', message: 'EACCES' },
      },
    ])
    expect(events.filter((event) => event.type === 'file-change')).toEqual([
      { type: 'file-change', path: 'a.txt', kind: 'modify' },
      { type: 'file-change', path: 'b.txt', kind: 'modify' },
    ])
    expect(events).toContainEqual({ type: 'tool-result', toolCallId: 't3', output: 'EACCES', isError: true })
  })

  it('streams delta messages and does not repeat them when a whole message follows', () => {
    const { events } = feed([
      say('hel'),
      say('lo'),
      say('hello', false),
      writeFile('t1', 'a'),
      say('new whole', false),
    ])
    expect(events.filter((event) => event.type === 'text-delta')).toEqual([
      { type: 'text-delta', text: 'hel' },
      { type: 'text-delta', text: 'lo' },
      { type: 'text-delta', text: 'new whole' },
    ])
  })

  it('reports uncached input, cache reads, the model and the session id from the result', () => {
    const { events, outcome } = feed([init, result])
    const usage = { inputTokens: 60, outputTokens: 30, cacheReadTokens: 40, cacheWriteTokens: 0 }
    expect(events).toEqual([{ type: 'usage', source: 'agent', model: 'gemini-3.8-flash', ...usage }])
    expect(outcome).toEqual({ completed: true, sessionId: 'gem-1', usage })
  })

  it('reports a failure when the result has status error (an API 401)', () => {
    // As recorded: the status is only inside the quoted Google error body.
    const message =
      '[API Error: {"error":{"code":401,"message":"API key not valid","status":"UNAUTHENTICATED"}}]'
    const { events, outcome } = feed([
      init,
      {
        type: 'result',
        timestamp: TIME,
        status: 'error',
        error: { type: 'unknown', message },
      },
    ])
    expect(events).toEqual([{ type: 'error', code: 'unauthorized', message, retryable: false }])
    expect(outcome).toEqual({
      completed: true,
      sessionId: 'gem-1',
      failure: { code: 'unauthorized', message },
    })
  })

  it('reports stream warnings as non-retryable errors without ending the run', () => {
    const { events, outcome } = feed([
      { type: 'error', timestamp: TIME, severity: 'warning', message: 'Loop detected' },
    ])
    expect(events).toEqual([
      { type: 'error', code: 'agent_warning', message: 'Loop detected', retryable: false },
    ])
    expect(outcome.completed).toBe(false)
  })

  it('is not completed when Gemini exits without a result (SIGTERM exits 0)', () => {
    const { outcome } = feed([init, writeFile('t1', 'a.txt'), ok('t1')])
    expect(outcome).toEqual({ completed: false, sessionId: 'gem-1' })
  })

  it('keeps unknown types and cut-off lines as raw', () => {
    const cut = JSON.stringify(result).slice(0, 25)
    const { events } = feed(['{"type":"thought","text":"x"}', cut, '\t'])
    expect(events).toEqual([
      { type: 'raw', stream: 'stdout', value: '{"type":"thought","text":"x"}' },
      { type: 'raw', stream: 'stdout', value: cut },
    ])
  })
})
