// Issue 18 item 1: the clocks of a run (wall clock and idle) and how a tripped one ends the run. Timers
// are vitest's fake ones: each step moves the clock by hand, so nothing here depends on the machine's speed.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { AgentEvent } from '../core/events.js'
import {
  cliTimeoutSeconds,
  createRunActivity,
  type RunLimit,
  runLimitsFor,
  startRunLimits,
} from './run-limits.js'

const limit = (ms: number, text: string, setting: RunLimit['setting']): RunLimit => ({ ms, text, setting })

describe('run-limits', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('applies the documented defaults, the profile, off, and --timeout', () => {
    expect(runLimitsFor(null)).toEqual({
      timeout: limit(3_600_000, '60m', 'timeout'),
      idle: limit(900_000, '15m', 'idleTimeout'),
    })
    expect(runLimitsFor({ timeout: 'off', idleTimeout: '90s' })).toEqual({
      timeout: null,
      idle: limit(90_000, '90s', 'idleTimeout'),
    })
    expect(runLimitsFor({ timeout: '2h' }, '2s').timeout).toEqual(limit(2000, '2s', '--timeout'))
    // OpenClaw's own --timeout is a backstop behind Hangar's clock; none when the limit is off.
    expect(cliTimeoutSeconds(runLimitsFor({ timeout: '2m' }))).toBe(180)
    expect(cliTimeoutSeconds(runLimitsFor({ timeout: 'off' }))).toBe(0)
  })

  it('trips the idle limit only after that long without activity or a request in flight', () => {
    const activity = createRunActivity()
    const tripped: RunLimit[] = []
    const watch = activity.watch('run_1', runLimitsFor({ timeout: 'off', idleTimeout: '10s' }), (hit) =>
      tripped.push(hit),
    )
    vi.advanceTimersByTime(8000)
    watch.touch()
    vi.advanceTimersByTime(8000)
    expect(tripped).toEqual([])
    // A model request through the proxy: however long it takes, the run is not idle.
    const requestEnded = activity.requestStarted('run_1')
    vi.advanceTimersByTime(60_000)
    expect(tripped).toEqual([])
    requestEnded()
    vi.advanceTimersByTime(9000)
    expect(tripped).toEqual([])
    vi.advanceTimersByTime(1000)
    expect(tripped).toEqual([limit(10_000, '10s', 'idleTimeout')])
  })

  it('trips the wall clock however busy the run is, and never after stop()', () => {
    const activity = createRunActivity()
    const tripped: RunLimit[] = []
    activity.watch('run_2', runLimitsFor({ timeout: '30s', idleTimeout: 'off' }), (hit) => tripped.push(hit))
    activity.requestStarted('run_2')
    vi.advanceTimersByTime(30_000)
    expect(tripped).toEqual([limit(30_000, '30s', 'timeout')])

    const stopped: RunLimit[] = []
    const watch = activity.watch('run_3', runLimitsFor({ timeout: '30s' }), (hit) => stopped.push(hit))
    watch.stop()
    vi.advanceTimersByTime(3_600_000)
    expect(stopped).toEqual([])
    // Beyond what one timer can wait (about 24.8 days), the clock is checked again rather than tripping early.
    const long: RunLimit[] = []
    activity.watch('run_6', runLimitsFor({ timeout: '30d', idleTimeout: 'off' }), (hit) => long.push(hit))
    vi.advanceTimersByTime(2 ** 31)
    expect(long).toEqual([])
    vi.advanceTimersByTime(30 * 86_400_000 - 2 ** 31)
    expect(long).toEqual([limit(30 * 86_400_000, '30d', 'timeout')])
    // A request of a run no longer watched is nobody's business.
    expect(() => activity.requestStarted('run_3')()).not.toThrow()
  })

  it('aborts the signal when a limit trips, and ends the stopped run failed with a timeout error', () => {
    const events: AgentEvent[] = []
    const active = { run: { id: 'run_4' } as never, emit: (event: AgentEvent) => events.push(event) }
    const limited = startRunLimits(active, {
      limits: runLimitsFor({ idleTimeout: '2s' }),
      activity: undefined,
      signal: new AbortController().signal,
    })
    expect(limited.signal.aborted).toBe(false)
    vi.advanceTimersByTime(2000)
    expect(limited.signal.aborted).toBe(true)
    const end = limited.settle({ status: 'cancelled', reason: 'cancelled by the user', sessionId: 's' })
    expect(end).toEqual({
      status: 'failed',
      reason: 'no agent output or model traffic for 2s (idleTimeout)',
      sessionId: 's',
    })
    expect(events).toEqual([
      {
        type: 'error',
        code: 'timeout',
        message: 'no agent output or model traffic for 2s (idleTimeout)',
        retryable: true,
      },
    ])
  })

  it('keeps a failed SSH sync-back the reason, and makes the retried finalize end the run failed', async () => {
    const events: AgentEvent[] = []
    const active = { run: { id: 'run_7' } as never, emit: (event: AgentEvent) => events.push(event) }
    const limited = startRunLimits(active, {
      limits: runLimitsFor({ timeout: '5s' }),
      activity: undefined,
      signal: undefined,
    })
    vi.advanceTimersByTime(5000)
    const end = await limited.finish(
      Promise.resolve({
        status: 'failed',
        reason: 'workspace finalize failed: connection dropped',
        workspace: {
          finalize: 'failed',
          reason: 'connection dropped',
          agentStatus: 'cancelled',
          sync: { target: 'box', agentReason: 'cancelled by the user' },
        },
      }),
    )
    expect(end).toEqual({
      status: 'failed',
      reason: 'workspace finalize failed: connection dropped',
      workspace: {
        finalize: 'failed',
        reason: 'connection dropped',
        agentStatus: 'failed',
        sync: { target: 'box', agentReason: 'ran longer than 5s (timeout)' },
      },
    })
    expect(events).toEqual([expect.objectContaining({ code: 'timeout', retryable: true })])
  })

  it("leaves a user's cancel a cancel, and a run that finished in time as it ended", () => {
    const events: AgentEvent[] = []
    const active = { run: { id: 'run_5' } as never, emit: (event: AgentEvent) => events.push(event) }
    const user = new AbortController()
    const limited = startRunLimits(active, {
      limits: runLimitsFor({ timeout: '5s' }),
      activity: undefined,
      signal: user.signal,
    })
    user.abort()
    expect(limited.signal.aborted).toBe(true)
    vi.advanceTimersByTime(10_000)
    expect(limited.settle({ status: 'cancelled', reason: 'cancelled by the user' })).toEqual({
      status: 'cancelled',
      reason: 'cancelled by the user',
    })

    const inTime = startRunLimits(active, {
      limits: runLimitsFor({ timeout: '5s' }),
      activity: undefined,
      signal: undefined,
    })
    expect(inTime.settle({ status: 'succeeded' })).toEqual({ status: 'succeeded' })
    vi.advanceTimersByTime(10_000)
    expect(inTime.signal.aborted).toBe(false)
    expect(events).toEqual([])
  })
})
