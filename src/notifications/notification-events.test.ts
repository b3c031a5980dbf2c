// Which stored run events become which notifications, and the one key per cause that keeps a second
// observer (or a replay) from queueing a second delivery.
import { describe, expect, it } from 'vitest'
import type { EventEnvelope } from '../core/events.js'
import { causesOf, mayCause } from './notification-events.js'

const envelope = (seq: number, fields: Record<string, unknown>) =>
  ({ v: 1, runId: 'run_1', seq, ts: '2026-01-01T00:00:00.000Z', ...fields }) as unknown as EventEnvelope

describe('notification events', () => {
  it('maps approvals, run ends, budgets and landings to events', () => {
    const batch = [
      envelope(1, { type: 'text-delta', text: 'hi' }),
      envelope(2, {
        type: 'approval-required',
        actionId: 'act_1',
        tool: 'write_file',
        summary: 'Create a.txt',
        classification: 'safe_create',
        expiresAt: 'x',
      }),
      envelope(3, { type: 'error', code: 'budget_exceeded', message: 'used up', retryable: false }),
      envelope(4, { type: 'error', code: 'timeout', message: 'too slow', retryable: true }),
      envelope(5, { type: 'run-end', status: 'failed', reason: 'timeout: 30m' }),
      envelope(6, { type: 'workspace-landed' }),
    ]
    expect(mayCause(batch)).toBe(true)
    expect(causesOf(batch)).toEqual([
      {
        event: 'approval.requested',
        sourceKey: 'action:act_1',
        runId: 'run_1',
        actionId: 'act_1',
        detail: 'Create a.txt',
      },
      { event: 'budget.reached', sourceKey: 'run:run_1:budget', runId: 'run_1', reason: 'used up' },
      { event: 'run.failed', sourceKey: 'run:run_1:end', runId: 'run_1', reason: 'timeout: 30m' },
      { event: 'workspace.landed', sourceKey: 'run:run_1:landed:6', runId: 'run_1' },
    ])
  })

  it('tells of succeeded and interrupted runs, not of cancelled or awaiting ones', () => {
    const end = (status: string) =>
      causesOf([envelope(9, { type: 'run-end', status })]).map((cause) => cause.event)
    expect(end('succeeded')).toEqual(['run.finished'])
    expect(end('interrupted')).toEqual(['run.failed'])
    expect(end('cancelled')).toEqual([])
    // Its approval-required events already told; the run-end adds nothing.
    expect(end('awaiting_confirmation')).toEqual([])
    expect(mayCause([envelope(1, { type: 'text-delta', text: 'x' })])).toBe(false)
  })
})
