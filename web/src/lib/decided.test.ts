import { describe, expect, it } from 'vitest'
import { continuationOf, isDecidedRun, shownStatus } from './decided'
import type { Run } from './types'

const run = (id: string, fields: Partial<Run> = {}): Run =>
  ({ id, status: 'succeeded', agentStatus: null, continues: null, ...fields }) as Run

describe('decided runs', () => {
  it('shows a run whose proposals were all decided as decided, over the replayed run-end', () => {
    const decided = run('run_1', { agentStatus: 'awaiting_confirmation' })
    expect(isDecidedRun(decided)).toBe(true)
    expect(shownStatus(decided, 'awaiting_confirmation')).toBe('decided')
  })

  it('shows any other run by its live status, else its stored one', () => {
    const waiting = run('run_1', { status: 'awaiting_confirmation' })
    expect(isDecidedRun(waiting)).toBe(false)
    expect(shownStatus(waiting)).toBe('awaiting_confirmation')
    expect(shownStatus(run('run_2'), 'running')).toBe('running')
    // A failed finalize keeps what the agent reached in agentStatus too: not a decision.
    expect(isDecidedRun(run('run_3', { status: 'failed', agentStatus: 'awaiting_confirmation' }))).toBe(false)
  })

  it('finds the run that continued it', () => {
    const runs = [run('run_1'), run('run_2', { continues: 'run_1' }), run('run_3')]
    expect(continuationOf(run('run_1'), runs)?.id).toBe('run_2')
    expect(continuationOf(run('run_3'), runs)).toBeUndefined()
  })
})
