import { describe, expect, it } from 'vitest'
import type { AgentEvent } from '../../core/events.js'
import { createCodexStreamParser } from './codex-stream.js'

const CWD = '/work/repo'

function feed(lines: Array<string | object>) {
  const parser = createCodexStreamParser({ cwd: CWD })
  const events: AgentEvent[] = lines.flatMap((line) =>
    parser.line(typeof line === 'string' ? line : JSON.stringify(line)),
  )
  const finished = parser.finish()
  return { events: [...events, ...finished.events], outcome: finished.outcome }
}

const started = { type: 'thread.started', thread_id: 'thread-1' }
const fileChange = (status: string) => ({
  id: 'item_1',
  type: 'file_change',
  changes: [
    { path: `${CWD}/new.txt`, kind: 'add' },
    { path: `${CWD}/old.txt`, kind: 'update' },
    { path: `${CWD}/gone.txt`, kind: 'delete' },
  ],
  status,
})
const completedTurn = {
  type: 'turn.completed',
  usage: {
    input_tokens: 100,
    cached_input_tokens: 60,
    cache_write_input_tokens: 10,
    output_tokens: 7,
    reasoning_output_tokens: 3,
  },
}

describe('codex-stream', () => {
  it('reports the apply_patch call, its result, the file changes and the message when Codex writes files', () => {
    const { events, outcome } = feed([
      started,
      { type: 'turn.started' },
      { type: 'item.started', item: fileChange('in_progress') },
      { type: 'item.completed', item: fileChange('completed') },
      { type: 'item.completed', item: { id: 'item_2', type: 'agent_message', text: 'Done.' } },
      completedTurn,
    ])
    expect(events.slice(0, 6)).toEqual([
      {
        type: 'tool-call',
        toolCallId: 'item_1',
        name: 'file_change',
        input: { changes: fileChange('').changes },
      },
      { type: 'tool-result', toolCallId: 'item_1', output: fileChange('').changes, isError: false },
      { type: 'file-change', path: 'new.txt', kind: 'create' },
      { type: 'file-change', path: 'old.txt', kind: 'modify' },
      { type: 'file-change', path: 'gone.txt', kind: 'delete' },
      { type: 'text-delta', text: 'Done.' },
    ])
    expect(outcome.completed).toBe(true)
  })

  it('emits a tool call once even when only item.completed arrives, and a failed command as an error result', () => {
    const { events } = feed([
      {
        type: 'item.started',
        item: { id: 'item_3', type: 'command_execution', command: 'false', status: 'in_progress' },
      },
      {
        type: 'item.updated',
        item: { id: 'item_3', type: 'command_execution', command: 'false', status: 'in_progress' },
      },
      {
        type: 'item.completed',
        item: {
          id: 'item_3',
          type: 'command_execution',
          command: 'false',
          aggregated_output: 'boom',
          exit_code: 1,
          status: 'failed',
        },
      },
      {
        type: 'item.completed',
        item: {
          id: 'item_4',
          type: 'file_change',
          changes: [{ path: `${CWD}/x`, kind: 'add' }],
          status: 'failed',
        },
      },
    ])
    expect(events).toEqual([
      { type: 'tool-call', toolCallId: 'item_3', name: 'command_execution', input: { command: 'false' } },
      { type: 'tool-result', toolCallId: 'item_3', output: 'boom', isError: true },
      {
        type: 'tool-call',
        toolCallId: 'item_4',
        name: 'file_change',
        input: { changes: [{ path: `${CWD}/x`, kind: 'add' }] },
      },
      {
        type: 'tool-result',
        toolCallId: 'item_4',
        output: [{ path: `${CWD}/x`, kind: 'add' }],
        isError: true,
      },
    ])
  })

  it('emits reasoning items whole, as there are no deltas', () => {
    const { events } = feed([
      { type: 'item.completed', item: { id: 'item_0', type: 'reasoning', text: 'thinking' } },
    ])
    expect(events).toEqual([{ type: 'reasoning-delta', text: 'thinking' }])
  })

  it('takes cached and cache-write tokens out of the input tokens and reports the thread id as session', () => {
    const { events, outcome } = feed([started, completedTurn])
    const usage = { inputTokens: 30, outputTokens: 7, cacheReadTokens: 60, cacheWriteTokens: 10 }
    expect(events).toEqual([{ type: 'usage', source: 'agent', ...usage }])
    expect(outcome).toEqual({ completed: true, sessionId: 'thread-1', usage })
  })

  it('reports reconnects as retryable errors and turn.failed as the failure when the key is refused', () => {
    const { events, outcome } = feed([
      started,
      { type: 'error', message: 'Reconnecting... 1/5 (unexpected status 401 Unauthorized: bad key)' },
      { type: 'turn.failed', error: { message: 'unexpected status 401 Unauthorized: bad key' } },
    ])
    expect(events).toEqual([
      {
        type: 'error',
        code: 'unauthorized',
        message: 'Reconnecting... 1/5 (unexpected status 401 Unauthorized: bad key)',
        retryable: true,
      },
      {
        type: 'error',
        code: 'unauthorized',
        message: 'unexpected status 401 Unauthorized: bad key',
        retryable: false,
      },
    ])
    expect(outcome).toEqual({
      completed: true,
      sessionId: 'thread-1',
      failure: { code: 'unauthorized', message: 'unexpected status 401 Unauthorized: bad key' },
    })
  })

  it('marks only reconnect notices retryable and does not repeat the final error for turn.failed', () => {
    const final = 'unexpected status 401 Unauthorized: bad key'
    const { events } = feed([
      { type: 'error', message: `Reconnecting... 5/5 (${final})` },
      { type: 'error', message: final },
      { type: 'turn.failed', error: { message: final } },
    ])
    expect(events).toEqual([
      { type: 'error', code: 'unauthorized', message: `Reconnecting... 5/5 (${final})`, retryable: true },
      { type: 'error', code: 'unauthorized', message: final, retryable: false },
    ])
  })

  it('is not completed when the stream stops after a file change (a cancel)', () => {
    const { outcome } = feed([started, { type: 'item.completed', item: fileChange('completed') }])
    expect(outcome).toEqual({ completed: false, sessionId: 'thread-1' })
  })

  it('keeps unknown item types, unknown lines and cut-off lines as raw', () => {
    const unknownItem = JSON.stringify({ type: 'item.completed', item: { id: 'item_9', type: 'hologram' } })
    const cut = JSON.stringify(completedTurn).slice(0, 30)
    const { events, outcome } = feed([unknownItem, '', cut, '{"type":"turn.exploded"}'])
    expect(events).toEqual([
      { type: 'raw', stream: 'stdout', value: unknownItem },
      { type: 'raw', stream: 'stdout', value: cut },
      { type: 'raw', stream: 'stdout', value: '{"type":"turn.exploded"}' },
    ])
    expect(outcome.completed).toBe(false)
  })
})
