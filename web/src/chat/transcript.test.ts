import { describe, expect, it } from 'vitest'
import type { AgentEvent, EventEnvelope } from '../../../src/core/events'
import { applyEvent, type Transcript } from './transcript'

let seq = 0
const envelope = (event: AgentEvent, runId = 'run_A'): EventEnvelope => ({
  ...event,
  v: 1,
  runId,
  seq: ++seq,
  ts: '2026-11-22T00:00:00.000Z',
})
const fold = (envelopes: EventEnvelope[], start: Transcript = {}) => envelopes.reduce(applyEvent, start)

describe('transcript', () => {
  it('grows one text item from adjacent deltas, keeps reasoning apart, and pairs tool results with calls', () => {
    seq = 0
    const transcript = fold([
      envelope({ type: 'run-start', agent: 'builtin', adapter: 'builtin', cwd: '/w', proxied: true }),
      envelope({ type: 'reasoning-delta', text: 'think' }),
      envelope({ type: 'text-delta', text: 'Hel' }),
      envelope({ type: 'text-delta', text: 'lo' }),
      envelope({ type: 'tool-call', toolCallId: 't1', name: 'read_file', input: { path: 'a' } }),
      envelope({ type: 'text-delta', text: 'after' }),
      envelope({ type: 'tool-result', toolCallId: 't1', output: 'content', isError: false }),
      envelope({ type: 'raw', stream: 'stderr', value: 'x' }),
      envelope({ type: 'raw', stream: 'stderr', value: 'y' }),
    ])
    expect(transcript.run_A!.items).toEqual([
      { kind: 'reasoning', text: 'think' },
      { kind: 'text', text: 'Hello' },
      {
        kind: 'tool',
        toolCallId: 't1',
        name: 'read_file',
        input: { path: 'a' },
        output: 'content',
        isError: false,
      },
      { kind: 'text', text: 'after' },
      { kind: 'raw', stream: 'stderr', lines: ['x', 'y'] },
    ])
  })

  it("shows the workspace setup's command and output before the agent's items", () => {
    seq = 0
    const transcript = fold([
      envelope({ type: 'workspace-setup-start', command: 'npm ci', target: 'buildbox' }),
      envelope({ type: 'workspace-setup-delta', stream: 'stdout', text: 'added 12 packages\n' }),
      envelope({ type: 'workspace-setup-end', status: 'succeeded', exitCode: 0 }),
      envelope({ type: 'run-start', agent: 'claude-code', adapter: 'claude-code', cwd: '/w', proxied: true }),
      envelope({ type: 'text-delta', text: 'ready' }),
    ])
    expect(transcript.run_A!.items).toEqual([
      { kind: 'raw', stream: 'stdout', lines: ['workspace setup on buildbox: npm ci', 'added 12 packages'] },
      { kind: 'text', text: 'ready' },
    ])
  })

  it('folds a sub-agent’s events under the tool call that started it, at any depth', () => {
    seq = 0
    const sub = 'toolu_task'
    const transcript = fold([
      envelope({ type: 'tool-call', toolCallId: sub, name: 'Agent', input: { prompt: 'p' } }),
      envelope({ type: 'text-delta', text: 'sub ', parentId: sub }),
      envelope({ type: 'text-delta', text: 'work', parentId: sub }),
      envelope({ type: 'tool-call', toolCallId: 'deep', name: 'Agent', input: {}, parentId: sub }),
      envelope({ type: 'tool-call', toolCallId: 'w', name: 'Write', input: {}, parentId: 'deep' }),
      envelope({ type: 'tool-result', toolCallId: 'w', output: 'ok', isError: false, parentId: 'deep' }),
      envelope({ type: 'file-change', path: 'a.txt', kind: 'create', parentId: sub }),
      envelope({ type: 'tool-result', toolCallId: sub, output: 'report', isError: false }),
      envelope({ type: 'text-delta', text: 'main' }),
      envelope({ type: 'text-delta', text: 'orphan', parentId: 'unknown' }),
    ])
    expect(transcript.run_A!.items).toEqual([
      {
        kind: 'tool',
        toolCallId: sub,
        name: 'Agent',
        input: { prompt: 'p' },
        output: 'report',
        isError: false,
        children: [
          { kind: 'text', text: 'sub work' },
          {
            kind: 'tool',
            toolCallId: 'deep',
            name: 'Agent',
            input: {},
            children: [
              { kind: 'tool', toolCallId: 'w', name: 'Write', input: {}, output: 'ok', isError: false },
            ],
          },
          { kind: 'file', path: 'a.txt', change: 'create' },
        ],
      },
      { kind: 'text', text: 'mainorphan' },
    ])
  })

  it('ignores an event it already has (a replay after a reconnect)', () => {
    seq = 0
    const first = envelope({ type: 'text-delta', text: 'once' })
    const once = fold([first])
    expect(applyEvent(once, first)).toBe(once)
  })

  it('counts proxy usage over the agent’s own report, and takes run-end totals last', () => {
    seq = 0
    const usage = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 }
    const transcript = fold([
      envelope({ type: 'usage', source: 'agent', ...usage }),
      envelope({ type: 'usage', source: 'proxy', ...usage, costUsd: 0.5 }),
      envelope({ type: 'usage', source: 'agent', ...usage }),
      envelope({ type: 'usage', source: 'proxy', ...usage, costUsd: 0.25 }),
    ])
    expect(transcript.run_A!.usage).toEqual({ ...usage, inputTokens: 20, outputTokens: 10, costUsd: 0.75 })
    const ended = applyEvent(
      transcript,
      envelope({ type: 'run-end', status: 'succeeded', usage: { ...usage, costUsd: 1 } }),
    )
    expect(ended.run_A!.usage).toEqual({ ...usage, costUsd: 1 })
    expect(ended.run_A!.end?.status).toBe('succeeded')
  })
})
