// Start-up recovery of SSH work: runs this node executed that ended without their sync-back (the daemon
// died mid-run, or another node marked them interrupted when this one's lease ran out) still have their
// agent's changes on the host only. The daemon brings them back by itself — at start-up, and again
// later while the host cannot be reached — through the same finalize as `hangar runs finalize`. A
// failure leaves the run retryable: pending (tried again, less and less often) when it may pass by
// itself, failed (for the user) when it cannot, e.g. the local workspace changed meanwhile.
import type { Logger } from '../core/logger.js'
import type { Store } from '../store/store.js'
import type { RunFinalizer } from './finalize-run.js'

export interface FinalizeRecoveryOptions {
  store: Pick<Store, 'runQueue'>
  finalizeRun: RunFinalizer
  /** This node: only its runs' local workspaces are here. */
  node: string
  log: Logger
  /** The first wait after a failed attempt (doubling each time, up to `maxRetryMs`). */
  retryMs?: number
  maxRetryMs?: number
  now?: () => number
}

export function createFinalizeRecovery(options: FinalizeRecoveryOptions) {
  const { store, log } = options
  const now = options.now ?? Date.now
  const retryMs = options.retryMs ?? 60_000
  const maxRetryMs = options.maxRetryMs ?? 15 * 60_000
  const backoff = new Map<string, { failures: number; nextAt: number }>()
  let timer: NodeJS.Timeout | undefined
  let sweeping: Promise<number> | undefined

  async function sweepOnce(): Promise<number> {
    let finalized = 0
    for (const run of await store.runQueue.pendingFinalizeOn(options.node)) {
      const state = backoff.get(run.id)
      if (state && state.nextAt > now()) continue
      try {
        await options.finalizeRun(run.userId, run.id, 'system:recovery')
        backoff.delete(run.id)
        finalized++
        log.info("brought an interrupted run's changes back from its SSH target", { runId: run.id })
      } catch (error) {
        const failures = (state?.failures ?? 0) + 1
        backoff.set(run.id, {
          failures,
          nextAt: now() + Math.min(retryMs * 2 ** (failures - 1), maxRetryMs),
        })
        log.warn("could not bring an interrupted run's changes back yet", { runId: run.id, error })
      }
    }
    return finalized
  }

  /** One pass over the pending runs (a pass under way is joined); how many were brought back. */
  function sweep(): Promise<number> {
    sweeping ??= sweepOnce()
      .catch((error: unknown) => {
        log.error('finalize recovery failed', { error })
        return 0
      })
      .finally(() => (sweeping = undefined))
    return sweeping
  }

  return {
    sweep,
    /** Sweeps now (without waiting: a host may take long to answer) and then every `intervalMs`. */
    start(intervalMs = 30_000): void {
      void sweep()
      timer = setInterval(() => void sweep(), intervalMs)
      timer.unref()
    },
    async stop(): Promise<void> {
      if (timer) clearInterval(timer)
      await sweeping
    },
  }
}

export type FinalizeRecovery = ReturnType<typeof createFinalizeRecovery>
