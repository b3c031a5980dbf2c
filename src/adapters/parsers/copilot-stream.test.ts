import { describe, expect, it } from 'vitest'
import type { AgentEvent } from '../../core/events.js'
import { createCopilotStreamParser } from './copilot-stream.js'

const CWD = '/work/repo'

function feed(lines: Array<string | object>) {
  const parser = createCopilotStreamParser({ cwd: CWD })
  const events: AgentEvent[] = lines.flatMap((line) =>
    parser.line(typeof line === 'string' ? line : JSON.stringify(line)),
  )
  const finished = parser.finish()
  return { events: [...events, ...finished.events], outcome: finished.outcome }
}

let counter = 0
const event = (type: string, data: object) => ({
  type,
  data,
  id: `id-${(counter += 1)}`,
  parentId: null,
  timestamp: '2026-09-20T10:00:00.000Z',
})
// The real `result` line has its fields at the top level, not under `data`.
const result = (exitCode: number) => ({
  type: 'result',
  timestamp: '2026-09-20T10:00:00.000Z',
  sessionId: 'cop-1',
  exitCode,
  usage: { premiumRequests: 1 },
})
const complete = (toolCallId: string, data: object) =>
  event('tool.execution_complete', { toolCallId, ...data })

describe('copilot-stream', () => {
  it('reports the tool call, its result, the file edits and the final text when Copilot writes a file', () => {
    const { events, outcome } = feed([
      event('session.tools_updated', { model: 'gpt-5.4' }),
      event('assistant.turn_start', { turnId: '0' }),
      event('tool.execution_start', {
        toolCallId: 'call_1',
        toolName: 'create',
        arguments: { path: `${CWD}/a.txt`, file_text: 'x' },
      }),
      complete('call_1', {
        success: true,
        result: { content: 'Created a.txt', detailedContent: '--- /dev/null\n+++ b/a.txt\n' },
        fileEdits: [{ path: `${CWD}/a.txt`, kind: 'create' }],
      }),
      event('assistant.message', { messageId: 'm2', content: 'done', toolRequests: [] }),
      result(0),
    ])
    expect(events).toEqual([
      {
        type: 'tool-call',
        toolCallId: 'call_1',
        name: 'create',
        input: { path: `${CWD}/a.txt`, file_text: 'x' },
      },
      { type: 'tool-result', toolCallId: 'call_1', output: 'Created a.txt', isError: false },
      { type: 'file-change', path: 'a.txt', kind: 'create', diff: '--- /dev/null\n+++ b/a.txt\n' },
      { type: 'text-delta', text: 'done' },
    ])
    expect(outcome).toEqual({ completed: true, sessionId: 'cop-1' })
  })

  it('reports a denied tool as an error result named from the tool request, with no file change', () => {
    const { events } = feed([
      event('assistant.message', {
        messageId: 'm1',
        content: '',
        toolRequests: [{ toolCallId: 'call_2', name: 'bash', arguments: { command: 'ls' } }],
      }),
      complete('call_2', {
        success: false,
        error: { message: 'Permission denied', code: 'denied' },
        fileEdits: [],
      }),
    ])
    expect(events).toEqual([
      { type: 'tool-call', toolCallId: 'call_2', name: 'bash', input: { command: 'ls' } },
      { type: 'tool-result', toolCallId: 'call_2', output: 'Permission denied', isError: true },
    ])
  })

  it('streams text and reasoning deltas once, without repeating them from the whole message', () => {
    const { events } = feed([
      event('assistant.reasoning_delta', { reasoningId: 'r1', deltaContent: 'th' }),
      event('assistant.reasoning_delta', { reasoningId: 'r1', deltaContent: 'ink' }),
      event('assistant.reasoning', { reasoningId: 'r1', content: 'think' }),
      event('assistant.message_delta', { messageId: 'm1', deltaContent: 'hel' }),
      event('assistant.message_delta', { messageId: 'm1', deltaContent: 'lo' }),
      event('assistant.message', {
        messageId: 'm1',
        content: 'hello',
        reasoningText: 'think',
        toolRequests: [],
      }),
      event('assistant.message', {
        messageId: 'm2',
        content: 'whole',
        reasoningText: 'fresh',
        toolRequests: [],
      }),
    ])
    expect(events).toEqual([
      { type: 'reasoning-delta', text: 'th' },
      { type: 'reasoning-delta', text: 'ink' },
      { type: 'text-delta', text: 'hel' },
      { type: 'text-delta', text: 'lo' },
      { type: 'reasoning-delta', text: 'fresh' },
      { type: 'text-delta', text: 'whole' },
    ])
  })

  it('reports assistant.usage as usage totals', () => {
    const { events, outcome } = feed([
      event('assistant.usage', {
        model: 'gpt-5.4',
        inputTokens: 10,
        outputTokens: 5,
        cacheReadTokens: 2,
        cacheWriteTokens: 0,
        cost: 1,
      }),
      result(0),
    ])
    const usage = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 2, cacheWriteTokens: 0, costUsd: 1 }
    expect(events).toEqual([{ type: 'usage', source: 'agent', model: 'gpt-5.4', ...usage }])
    expect(outcome).toEqual({ completed: true, sessionId: 'cop-1', usage })
  })

  it('reports a failure with the session error when authentication fails and the exit code is 1', () => {
    const message = 'Authentication failed: 401 Unauthorized'
    const { events, outcome } = feed([
      event('model.call_failure', { errorMessage: 'status 401', failureKind: 'http' }),
      event('session.error', { errorType: 'authentication', message, statusCode: 401 }),
      result(1),
    ])
    expect(events).toEqual([
      { type: 'error', code: 'unauthorized', message: 'status 401', retryable: true },
      { type: 'error', code: 'unauthorized', message, retryable: false },
    ])
    expect(outcome).toEqual({
      completed: true,
      sessionId: 'cop-1',
      failure: { code: 'unauthorized', message },
    })
  })

  it('reports a failure for a non-zero exit code without a session error', () => {
    const { outcome } = feed([result(2)])
    expect(outcome.failure).toEqual({ code: 'agent_error', message: 'Copilot exited with code 2' })
  })

  it('is not completed when the result follows an abort, even with exit code 0', () => {
    const { events, outcome } = feed([
      event('agent.interrupted', { activity: 'model_call', cancelPhase: 'pre_first_token' }),
      event('abort', { reason: 'user_abort' }),
      event('session.info', { infoType: 'cancellation', message: 'cancelled' }),
      event('assistant.idle', { aborted: true }),
      result(0),
    ])
    expect(events).toEqual([])
    expect(outcome).toEqual({ completed: false, sessionId: 'cop-1' })
  })

  it('is not completed after agent.interrupted alone, as in a cancel during a model call', () => {
    const { outcome } = feed([event('agent.interrupted', { activity: 'model_call' }), result(0)])
    expect(outcome.completed).toBe(false)
  })

  it('is not completed when the stream stops before the result', () => {
    expect(feed([event('assistant.turn_start', { turnId: '0' })]).outcome).toEqual({ completed: false })
  })

  it('drops a line of a dropped type unread, and shows one cut off on its way raw', () => {
    const skills = JSON.stringify(
      event('session.skills_loaded', { skills: [{ name: 'a', tags: ['x', { y: [1] }] }] }),
    )
    const cut = skills.slice(0, 50)
    // Taken by its type alone: a broken one that still ends with `}` goes as the type says.
    const brokenInside = skills.replace('"skills":[', '"skills":[,')
    // Type not first: read in full, and dropped all the same.
    const typeLast = JSON.stringify({ data: {}, type: 'model.call_start' })
    const { events } = feed([skills, `${skills}\r`, cut, brokenInside, typeLast])
    expect(events).toEqual([{ type: 'raw', stream: 'stdout', value: cut }])
  })

  it('drops the background-task noise and keeps unknown types and cut-off lines as raw', () => {
    const unknown = JSON.stringify(event('session.weather', { sunny: true }))
    const cut = JSON.stringify(result(0)).slice(0, 33)
    const { events } = feed([event('session.background_tasks_changed', {}), unknown, cut, ' '])
    expect(events).toEqual([
      { type: 'raw', stream: 'stdout', value: unknown },
      { type: 'raw', stream: 'stdout', value: cut },
    ])
  })
})
