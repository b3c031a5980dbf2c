// Run limits: a run that outlives its profile's `timeout` (wall clock) or stays quiet longer than its
// `idleTimeout` is stopped, so a hung agent cannot hold its profile's concurrency slot forever. "Quiet"
// means no agent output (a stdout or stderr line of a CLI, an event of the built-in agent) and no model
// request of the run in flight through the proxy: an agent waiting on a slow model is not idle.
//
// A tripped limit aborts the same signal a user's cancel aborts, so the process group goes the same way
// (supervisor cancel, remote cancel on an SSH target); the run then ends `failed` with an `error` event
// `{ code: "timeout", retryable: true }` whose message names the limit, instead of `cancelled`.
import type { LaunchPlan } from '../adapters/types.js'
import type { SpawnHandlers, Supervisor } from '../adapters/supervisor.js'
import type { ProfileConfig } from '../core/config.js'
import { LIMIT_DURATION_EXPECTED, limitDurationMs } from '../core/duration.js'
import { AppError } from '../core/errors.js'
import type { ActiveRun, RunEnd } from './run-service.js'

/** The documented defaults (README, "Run limits"). */
export const DEFAULT_RUN_TIMEOUT = '60m'
export const DEFAULT_IDLE_TIMEOUT = '15m'

/** One limit: its length, how the user wrote it, and which setting it came from (named when it trips). */
export interface RunLimit {
  ms: number
  text: string
  setting: 'timeout' | 'idleTimeout' | '--timeout'
}

export interface RunLimits {
  /** Wall clock; null = off. */
  timeout: RunLimit | null
  /** No output and no model request in flight; null = off. */
  idle: RunLimit | null
}

function limitOf(text: string, setting: RunLimit['setting']): RunLimit | null {
  const ms = limitDurationMs(text)
  // The profile schema and `hangar run` refuse anything else before a run gets here.
  if (ms === undefined)
    throw new AppError('invalid_request', `${setting} "${text}" is not a duration`, {
      hint: LIMIT_DURATION_EXPECTED,
    })
  return ms === null ? null : { ms, text: text.trim(), setting }
}

/**
 * The limits of a run of `profile` (null: a bare adapter id, the defaults). `timeoutOverride` is
 * `hangar run --timeout`, already validated.
 */
export function runLimitsFor(
  profile: Pick<ProfileConfig, 'timeout' | 'idleTimeout'> | null | undefined,
  timeoutOverride?: string,
): RunLimits {
  const timeout =
    timeoutOverride !== undefined
      ? limitOf(timeoutOverride, '--timeout')
      : limitOf(profile?.timeout ?? DEFAULT_RUN_TIMEOUT, 'timeout')
  return { timeout, idle: limitOf(profile?.idleTimeout ?? DEFAULT_IDLE_TIMEOUT, 'idleTimeout') }
}

/**
 * The `--timeout` a CLI that needs its own bound is given (OpenClaw has no turn limit): Hangar's wall
 * clock plus a minute, so Hangar's limit trips first and names itself; 0 (none) when the limit is off.
 */
export function cliTimeoutSeconds(limits: RunLimits): number {
  return limits.timeout ? Math.ceil(limits.timeout.ms / 1000) + 60 : 0
}

export function limitMessage(limit: RunLimit): string {
  return limit.setting === 'idleTimeout'
    ? `no agent output or model traffic for ${limit.text} (idleTimeout)`
    : `ran longer than ${limit.text} (${limit.setting})`
}

/** setTimeout fires at once beyond this delay; a longer limit (`30d`) is checked again when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1

/** A timer that does not keep the process alive (a run's own process and I/O do). */
function later(callback: () => void, ms: number): NodeJS.Timeout {
  return setTimeout(callback, Math.min(ms, MAX_TIMER_MS)).unref()
}

interface Watched {
  /** Model requests (and built-in tools) of the run under way: the run is busy, not idle. */
  inFlight: number
  lastActivity: number
  touch(): void
  /** Marks the run busy until the returned function is called (once). */
  busy(): () => void
}

/**
 * Which runs of this process are being watched, so the model proxy can say "a request of run X is in
 * flight" without knowing anything of limits. One per runtime (main.ts).
 */
export function createRunActivity(options: { now?: () => number } = {}) {
  const now = options.now ?? Date.now
  const watched = new Map<string, Watched>()

  return {
    /** The proxy's hook: a model request of `runId` started; call the result when it ended. */
    requestStarted(runId: string): () => void {
      return watched.get(runId)?.busy() ?? (() => {})
    },

    /**
     * Starts the clocks of a run; `onTrip` is called once, with the limit that tripped. `stop()` when the
     * run's agent is done (or the user cancelled: a limit must not trip over a cancel).
     */
    watch(runId: string, limits: RunLimits, onTrip: (limit: RunLimit) => void) {
      const run: Watched = {
        inFlight: 0,
        lastActivity: now(),
        touch: () => {
          run.lastActivity = now()
        },
        busy: () => {
          run.inFlight++
          let ended = false
          return () => {
            if (ended) return
            ended = true
            run.inFlight--
            run.touch()
          }
        },
      }
      watched.set(runId, run)
      let wallClock: NodeJS.Timeout | undefined
      let idleCheck: NodeJS.Timeout | undefined
      let done = false
      const stop = () => {
        done = true
        clearTimeout(wallClock)
        clearTimeout(idleCheck)
        if (watched.get(runId) === run) watched.delete(runId)
      }
      const trip = (limit: RunLimit) => {
        if (done) return
        stop()
        onTrip(limit)
      }
      const { timeout, idle } = limits
      if (timeout) {
        const deadline = now() + timeout.ms
        const checkWallClock = () => {
          if (done) return
          const left = deadline - now()
          if (left <= 0) return trip(timeout)
          wallClock = later(checkWallClock, left)
        }
        wallClock = later(checkWallClock, timeout.ms)
      }
      if (idle) {
        // Checked when the quiet period could have run out, not on every line: output can be dense.
        const checkIdle = () => {
          if (done) return
          const quietFor = now() - run.lastActivity
          if (run.inFlight === 0 && quietFor >= idle.ms) return trip(idle)
          idleCheck = later(checkIdle, run.inFlight > 0 ? idle.ms : idle.ms - quietFor)
        }
        idleCheck = later(checkIdle, idle.ms)
      }
      return { touch: run.touch, busy: run.busy, stop }
    },
  }
}

export type RunActivity = ReturnType<typeof createRunActivity>

/** A run under its limits: the signal to obey, how to report activity, and how to end. */
export interface LimitedRun {
  /** Aborted by the caller's signal (a user's cancel) or by a tripped limit. */
  signal: AbortSignal
  /** Agent output happened (an event, a line). */
  touch(): void
  /** The run is busy (a built-in tool running) until the returned function is called. */
  busy(): () => void
  /** `supervisor`, reporting every stdout and stderr line of the CLI it starts as activity. */
  reporting(supervisor: Supervisor): Supervisor
  /**
   * Stops the clocks and gives the run's end: a run stopped by a tripped limit (it ended `cancelled`) ends
   * `failed`, after the timeout `error` event naming the limit.
   */
  settle(end: RunEnd): RunEnd
  /** `settle` for the run's promised end; a run that throws stops the clocks and throws on. */
  finish(running: Promise<RunEnd>): Promise<RunEnd>
}

/** Starts the clocks of a run. When a limit trips, `signal` is aborted: the same path as a cancel. */
export function startRunLimits(
  active: Pick<ActiveRun, 'run' | 'emit'>,
  context: { limits: RunLimits; activity: RunActivity | undefined; signal: AbortSignal | undefined },
): LimitedRun {
  const activity = context.activity ?? createRunActivity()
  const limitController = new AbortController()
  let tripped: RunLimit | undefined
  const watch = activity.watch(active.run.id, context.limits, (limit) => {
    tripped = limit
    limitController.abort()
  })
  // A user's cancel wins: the clocks stop, and the run ends `cancelled` as it would without limits.
  const onUserAbort = () => watch.stop()
  if (context.signal?.aborted) watch.stop()
  else context.signal?.addEventListener('abort', onUserAbort, { once: true })
  const limited: LimitedRun = {
    signal: context.signal
      ? AbortSignal.any([context.signal, limitController.signal])
      : limitController.signal,
    touch: watch.touch,
    busy: watch.busy,
    reporting: (supervisor) => reportingSupervisor(supervisor, watch.touch),
    settle(end) {
      watch.stop()
      context.signal?.removeEventListener('abort', onUserAbort)
      const stopped = end.status === 'cancelled' || end.workspace?.agentStatus === 'cancelled'
      if (!tripped || !stopped) return end
      const message = limitMessage(tripped)
      active.emit({ type: 'error', code: 'timeout', message, retryable: true })
      return timedOut(end, message)
    },
    finish: (running) =>
      running.then(limited.settle, (error: unknown) => {
        limited.settle({ status: 'failed' })
        throw error
      }),
  }
  return limited
}

/**
 * A cancelled end, told as the failure it is. When the SSH sync-back failed after it, the run stays failed
 * for that reason, and the status a retried finalize gives it becomes `failed` with the limit's message.
 */
function timedOut(end: RunEnd, message: string): RunEnd {
  if (end.status !== 'cancelled' && end.workspace) {
    const sync = end.workspace.sync
    return {
      ...end,
      workspace: {
        ...end.workspace,
        agentStatus: 'failed',
        ...(typeof sync === 'object' && sync !== null && { sync: { ...sync, agentReason: message } }),
      },
    }
  }
  return { ...end, status: 'failed', reason: message }
}

/** Wraps the supervisor so every line the CLI prints counts as activity. */
function reportingSupervisor(supervisor: Supervisor, touch: () => void): Supervisor {
  return {
    ...supervisor,
    start: (plan: LaunchPlan, cwd: string, handlers: SpawnHandlers) =>
      supervisor.start(plan, cwd, {
        onLine: (line) => {
          touch()
          handlers.onLine(line)
        },
        onStderr: (chunk) => {
          touch()
          handlers.onStderr?.(chunk)
        },
      }),
  }
}
