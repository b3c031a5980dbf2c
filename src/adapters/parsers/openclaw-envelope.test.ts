import { describe, expect, it } from 'vitest'
import type { AgentEvent } from '../../core/events.js'
import { createOpenclawEnvelopeParser } from './openclaw-envelope.js'

function feed(lines: string[]) {
  const parser = createOpenclawEnvelopeParser({ cwd: '/work/repo' })
  const events: AgentEvent[] = lines.flatMap((line) => parser.line(line))
  const finished = parser.finish()
  return { events: [...events, ...finished.events], outcome: finished.outcome }
}

const execEnvelope = {
  ok: true,
  status: 'ok',
  final: 'done',
  payloads: [{ text: 'done', mediaUrl: null }],
  usage: { input: 200, output: 40, cacheRead: 10, cacheWrite: 5, total: 255, cost: { total: 0.01 } },
  toolSummary: { calls: 1, tools: ['write'], failures: 0 },
  model: 'claude-mock',
  provider: 'mock',
  sessionId: 'oc-1',
}
const usage = { inputTokens: 200, outputTokens: 40, cacheReadTokens: 10, cacheWriteTokens: 5, costUsd: 0.01 }
const localEnvelope = {
  payloads: [{ text: 'Wrote two.txt.', mediaUrl: null }],
  meta: {
    durationMs: 8000,
    agentMeta: {
      sessionId: 'oc-2',
      model: 'claude-mock',
      usage: { input: 1, output: 2, cacheRead: 3, cacheWrite: 4 },
      costUsd: 0.5,
    },
    aborted: false,
    stopReason: 'stop',
    finalAssistantVisibleText: 'Wrote two.txt.',
  },
}

describe('openclaw-envelope', () => {
  it('reports the final text, usage and session of a one-line agent exec envelope', () => {
    const { events, outcome } = feed([JSON.stringify(execEnvelope)])
    expect(events).toEqual([
      { type: 'text-delta', text: 'done' },
      { type: 'usage', source: 'agent', model: 'claude-mock', ...usage },
    ])
    expect(outcome).toEqual({ completed: true, sessionId: 'oc-1', usage })
  })

  it('buffers a pretty-printed envelope until it parses, emitting nothing before', () => {
    const parser = createOpenclawEnvelopeParser({ cwd: '/work/repo' })
    const lines = JSON.stringify(execEnvelope, null, 2).split('\n')
    const early = lines.slice(0, -1).flatMap((line) => parser.line(line))
    expect(early).toEqual([])
    expect(parser.line(lines.at(-1) ?? '')).toHaveLength(2)
    expect(parser.finish().outcome.completed).toBe(true)
  })

  it('reads the agent --local envelope used to resume', () => {
    const { events, outcome } = feed(JSON.stringify(localEnvelope, null, 2).split('\n'))
    const localUsage = {
      inputTokens: 1,
      outputTokens: 2,
      cacheReadTokens: 3,
      cacheWriteTokens: 4,
      costUsd: 0.5,
    }
    expect(events).toEqual([
      { type: 'text-delta', text: 'Wrote two.txt.' },
      { type: 'usage', source: 'agent', model: 'claude-mock', ...localUsage },
    ])
    expect(outcome).toEqual({ completed: true, sessionId: 'oc-2', usage: localUsage })
  })

  it('is not completed when the --local envelope says the turn was aborted', () => {
    const aborted = { ...localEnvelope, meta: { ...localEnvelope.meta, aborted: true } }
    expect(feed([JSON.stringify(aborted)]).outcome.completed).toBe(false)
  })

  it('reports a failure for an ok:false envelope (a 401) and a timeout code for a timeout', () => {
    const failed = {
      ...execEnvelope,
      ok: false,
      status: 'error',
      payloads: [],
      error: { message: 'HTTP 401: invalid x-api-key', kind: 'error_payload' },
    }
    const { events, outcome } = feed([JSON.stringify(failed)])
    expect(events).toContainEqual({
      type: 'error',
      code: 'unauthorized',
      message: 'HTTP 401: invalid x-api-key',
      retryable: false,
    })
    expect(outcome.failure).toEqual({ code: 'unauthorized', message: 'HTTP 401: invalid x-api-key' })
    expect(outcome.completed).toBe(true)

    const timedOut = {
      ...execEnvelope,
      ok: false,
      status: 'timeout',
      payloads: [{ text: 'timed out', isError: true }],
      error: { message: 'Run timed out', kind: 'timeout' },
    }
    const timeout = feed([JSON.stringify(timedOut)])
    expect(timeout.outcome.failure).toEqual({ code: 'timeout', message: 'Run timed out' })
    expect(timeout.events.filter((event) => event.type === 'text-delta')).toEqual([
      { type: 'text-delta', text: 'done' },
    ])
  })

  it('reports the CLI error envelope as a failure', () => {
    const { outcome } = feed([
      '{"ok":false,"error":{"type":"cli_error","message":"failed to acquire gateway state ownership"}}',
    ])
    expect(outcome).toEqual({
      completed: true,
      failure: { code: 'agent_error', message: 'failed to acquire gateway state ownership' },
    })
  })

  it('is not completed and reports nothing when a cancelled run printed nothing', () => {
    expect(feed([])).toEqual({ events: [], outcome: { completed: false } })
  })

  it('keeps stray diagnostics as raw and still finds the envelope among them', () => {
    const pretty = JSON.stringify(execEnvelope, null, 2).split('\n')
    const { events, outcome } = feed(['[agent/embedded] starting', '{"level":"debug"', ...pretty, 'ended'])
    expect(events).toEqual([
      { type: 'raw', stream: 'stdout', value: '[agent/embedded] starting' },
      { type: 'raw', stream: 'stdout', value: '{"level":"debug"' },
      { type: 'text-delta', text: 'done' },
      { type: 'usage', source: 'agent', model: 'claude-mock', ...usage },
      { type: 'raw', stream: 'stdout', value: 'ended' },
    ])
    expect(outcome).toEqual({ completed: true, sessionId: 'oc-1', usage })
  })

  it('returns a cut-off envelope as raw lines at finish, not completed', () => {
    const lines = JSON.stringify(execEnvelope, null, 2).split('\n').slice(0, 5)
    const { events, outcome } = feed(lines)
    expect(events).toEqual(lines.map((value) => ({ type: 'raw', stream: 'stdout', value })))
    expect(outcome).toEqual({ completed: false })
  })

  it('keeps JSON that is not an envelope as raw', () => {
    expect(feed(['{"level":"info","msg":"hello"}']).events).toEqual([
      { type: 'raw', stream: 'stdout', value: '{"level":"info","msg":"hello"}' },
    ])
  })
})
