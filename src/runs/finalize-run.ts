// Bringing a run's changes back from its SSH target after the run ended without them: a failed finalize
// retried (`hangar runs finalize ID`, POST /api/runs/:id/finalize), or a pending one whose process died
// before its sync-back (start-up recovery, or the same command). The changes are still on the host, so
// this brings them back; a run whose owner is provably dead is ended (`interrupted`) first, and its
// agent's leftovers on the host are stopped so nothing writes there during the sync-back. On success
// the run takes the status its agent reached, a `finalize-end` event says so (the event log and
// GET /api/runs/:id agree), and the runs that depend on it are released; on failure nothing local
// changed and the run stays retryable.
import { existsSync } from 'node:fs'
import { reapProcessGroup } from '../adapters/supervisor.js'
import { AppError } from '../core/errors.js'
import type { TerminalRunStatus } from '../core/events.js'
import type { Run } from '../store/repositories/runs-repository.js'
import type { Store } from '../store/store.js'
import type { SshTargets } from '../workspaces/ssh/ssh-targets.js'
import { syncBack, type ShippedWorkspace } from '../workspaces/ssh/workspace-sync.js'
import { createRemoteLaunch } from './remote-launch.js'
import { ownerGone } from './run-ownership.js'
import type { RunService } from './run-service.js'

const ACTIVE = new Set(['queued', 'preparing', 'running', 'finalizing'])

type SyncRecord = ShippedWorkspace & { agentReason?: string | null }

export function createRunFinalizer(options: {
  store: Store
  targets: SshTargets
  runs: Pick<RunService, 'owner' | 'interrupt' | 'appendEvents'>
  /** Wakes the scheduler: dependents held by this run may start now. */
  onFinalized?: () => void
}) {
  const { runs } = options
  // One finalize per run at a time in this process; a second caller shares the first one's outcome.
  const inProgress = new Map<string, Promise<Run>>()

  /** A run still marked active whose owner died: ended here, so its changes can come back. */
  async function takeOver(userId: string, run: Run): Promise<Run> {
    if (!ownerGone(run, runs.owner)) {
      throw new AppError(
        'conflict',
        `run ${run.id} is ${run.status}: its changes come back when it ends (its process is alive)`,
        { retryable: true, details: { status: run.status } },
      )
    }
    if (run.agentPgid !== null) await reapProcessGroup(run.agentPgid)
    await runs.interrupt(userId, run.id, 'the process that ran it stopped before it finished')
    return (await options.store.forUser(userId).runs.get(run.id))!
  }

  async function finalize(userId: string, runId: string, actor: string): Promise<Run> {
    const scope = options.store.forUser(userId)
    let run = await scope.runs.get(runId)
    if (!run) throw new AppError('not_found', `no run ${runId}`, { hint: 'see hangar runs list' })
    if (ACTIVE.has(run.status) && run.workspaceFinalize === 'pending') run = await takeOver(userId, run)
    const pending = run.workspaceFinalize === 'pending'
    if ((!pending && run.workspaceFinalize !== 'failed') || !run.workspaceSync) {
      throw new AppError(
        'conflict',
        `run ${runId} has no workspace finalize to retry (finalize: ${run.workspaceFinalize ?? 'not needed'})`,
        { details: { status: run.status, workspaceFinalize: run.workspaceFinalize } },
      )
    }
    const shipped = run.workspaceSync as SyncRecord
    try {
      if (!existsSync(shipped.localDir)) {
        throw new AppError(
          'conflict',
          `the local workspace ${shipped.localDir} is gone; nothing can be applied`,
          {
            hint: `the run's changes are still on target ${shipped.target} under ${shipped.remoteDir}`,
          },
        )
      }
      const connection = options.targets.get(shipped.target)
      // An agent whose daemon died may live on on the host: stopped before its work is taken.
      if (run.status === 'interrupted') {
        await createRemoteLaunch(connection, shipped, runId, { isolateHome: false })
          .cleanup()
          .catch(() => undefined)
      }
      await syncBack(connection, shipped)
    } catch (error) {
      // Another process (a `hangar runs finalize` beside the daemon) brought them back meanwhile.
      const current = await scope.runs.get(runId)
      if (current?.workspaceFinalize === 'ok') return current
      const message = error instanceof AppError ? error.message : (error as Error).message
      const retryable = error instanceof AppError ? error.retryable : true
      // A pending finalize that may work later (the host unreachable) stays pending for recovery.
      await scope.runs.update(runId, {
        finalizeReason: message,
        workspaceFinalize: pending && retryable ? 'pending' : 'failed',
      })
      if (message !== run.finalizeReason) {
        const status = run.status as TerminalRunStatus
        await runs.appendEvents(userId, runId, [
          { type: 'finalize-end', finalize: 'failed', status, reason: message },
        ])
      }
      if (error instanceof AppError) throw error
      throw new AppError('unavailable', `finalize of run ${runId} failed again: ${message}`, {
        retryable: true,
      })
    }
    // A failed finalize held the run `failed` over what its agent reached; a pending one keeps its status.
    const status = (run.agentStatus ?? (pending ? run.status : 'succeeded')) as TerminalRunStatus
    const reason = pending ? run.reason : (shipped.agentReason ?? null)
    const updated = (await scope.runs.update(runId, {
      status,
      reason,
      workspaceFinalize: 'ok',
      finalizeReason: null,
      workspaceSync: null,
    }))!
    await runs.appendEvents(userId, runId, [{ type: 'finalize-end', finalize: 'ok', status }])
    await scope.audit.append({
      actor,
      action: 'run.finalize',
      targetType: 'run',
      targetId: runId,
      details: { status, target: shipped.target },
    })
    options.onFinalized?.()
    return updated
  }

  return async function finalizeRun(userId: string, runId: string, actor = `user:${userId}`): Promise<Run> {
    const key = `${userId}:${runId}`
    const running = inProgress.get(key)
    if (running) return running
    const attempt = finalize(userId, runId, actor).finally(() => inProgress.delete(key))
    inProgress.set(key, attempt)
    return attempt
  }
}

export type RunFinalizer = ReturnType<typeof createRunFinalizer>
