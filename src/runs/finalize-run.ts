// Retrying a run's failed workspace finalize (`hangar runs finalize ID`, POST /api/runs/:id/finalize):
// the run's changes are still on the host, so this brings them back again. On success the run takes the
// status its agent reached and the runs that depend on it are released; on failure nothing local changed.
import { AppError } from '../core/errors.js'
import type { Run } from '../store/repositories/runs-repository.js'
import type { Store } from '../store/store.js'
import type { SshTargets } from '../workspaces/ssh/ssh-targets.js'
import { syncBack, type ShippedWorkspace } from '../workspaces/ssh/workspace-sync.js'

export function createRunFinalizer(options: {
  store: Store
  targets: SshTargets
  /** Wakes the scheduler: dependents held by this run may start now. */
  onFinalized?: () => void
}) {
  const inProgress = new Set<string>()

  return async function finalizeRun(userId: string, runId: string, actor = `user:${userId}`): Promise<Run> {
    const scope = options.store.forUser(userId)
    const run = await scope.runs.get(runId)
    if (!run) throw new AppError('not_found', `no run ${runId}`, { hint: 'see hangar runs list' })
    if (run.workspaceFinalize !== 'failed' || !run.workspaceSync) {
      throw new AppError(
        'conflict',
        `run ${runId} has no failed workspace finalize to retry (finalize: ${run.workspaceFinalize ?? 'not needed'})`,
        { details: { status: run.status, workspaceFinalize: run.workspaceFinalize } },
      )
    }
    if (inProgress.has(runId))
      throw new AppError('conflict', `run ${runId} is being finalized already`, { retryable: true })
    inProgress.add(runId)
    try {
      const shipped = run.workspaceSync as ShippedWorkspace & { agentReason?: string | null }
      try {
        await syncBack(options.targets.get(shipped.target), shipped)
      } catch (error) {
        const message = error instanceof AppError ? error.message : (error as Error).message
        await scope.runs.update(runId, { finalizeReason: message })
        if (error instanceof AppError) throw error
        throw new AppError('unavailable', `finalize of run ${runId} failed again: ${message}`, {
          retryable: true,
        })
      }
      const status = run.agentStatus ?? 'succeeded'
      const updated = (await scope.runs.update(runId, {
        status,
        reason: shipped.agentReason ?? null,
        workspaceFinalize: 'ok',
        finalizeReason: null,
        workspaceSync: null,
      }))!
      await scope.audit.append({
        actor,
        action: 'run.finalize',
        targetType: 'run',
        targetId: runId,
        details: { status, target: shipped.target },
      })
      options.onFinalized?.()
      return updated
    } finally {
      inProgress.delete(runId)
    }
  }
}

export type RunFinalizer = ReturnType<typeof createRunFinalizer>
