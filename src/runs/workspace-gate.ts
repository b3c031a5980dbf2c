// The finalize gate is on the workspace, not on a run or a conversation: while a directory's host copy
// holds changes that were not brought back (a run shipped it and its finalize is pending or failed), no
// run may start on that directory — nor on one inside it or around it, in place or in a conversation —
// since it would change what the sync-back must find unchanged, or ship over the host copy.
import path from 'node:path'
import { AppError } from '../core/errors.js'
import type { Run } from '../store/repositories/runs-repository.js'
import type { Store } from '../store/store.js'

const ACTIVE = new Set(['queued', 'preparing', 'running', 'finalizing'])

interface SyncRecord {
  localDir?: string
  target?: string
}

function overlaps(one: string, other: string): boolean {
  const a = path.resolve(one)
  const b = path.resolve(other)
  return a === b || a.startsWith(b + path.sep) || b.startsWith(a + path.sep)
}

type HoldingRun = Run & { userId: string }

/** Among `unfinalized` runs, the one that holds `dir` (other than `except`), if any. */
export function holderAmong(
  unfinalized: readonly HoldingRun[],
  dir: string,
  except?: string,
): HoldingRun | undefined {
  return unfinalized.find((run) => {
    if (run.id === except) return false
    const sync = (run.workspaceSync ?? {}) as SyncRecord
    return overlaps(sync.localDir ?? run.cwd, dir)
  })
}

/** Whether the holder may still let go by itself: it is running, or recovery brings its changes back. */
export function mayClearItself(holder: Run): boolean {
  return ACTIVE.has(holder.status) || holder.workspaceFinalize === 'pending'
}

export function createWorkspaceGate(store: Pick<Store, 'runQueue'>) {
  /** The run whose unfinalized changes hold `dir` (other than `except`), if any. */
  async function holder(dir: string, except?: string): Promise<HoldingRun | undefined> {
    return holderAmong(await store.runQueue.unfinalized(), dir, except)
  }

  function refusal(userId: string, dir: string, run: HoldingRun): AppError {
    const sync = (run.workspaceSync ?? {}) as SyncRecord
    const where = `the host copy of ${sync.localDir ?? run.cwd} on target ${sync.target ?? 'unknown'}`
    if (run.userId !== userId) {
      return new AppError(
        'conflict',
        `${where} holds changes of another user's run that were not brought back; no run may start on ${dir} until they are`,
        { hint: 'ask that user to run hangar runs finalize on their run' },
      )
    }
    const how = `hangar runs finalize ${run.id} (POST /api/runs/${run.id}/finalize)`
    const message = ACTIVE.has(run.status)
      ? `run ${run.id} is ${run.status} on ${where} and has not brought its changes back; no run may start on ${dir} until it has (if its process died: ${how})`
      : `${where} holds changes of run ${run.id} that were not brought back (finalize ${run.workspaceFinalize}${run.finalizeReason ? `: ${run.finalizeReason}` : ''}); bring them back with ${how}, then start again`
    return new AppError('conflict', message, {
      details: {
        runId: run.id,
        workspaceFinalize: run.workspaceFinalize,
        finalizeReason: run.finalizeReason,
      },
    })
  }

  return {
    holder,
    /** Throws a conflict naming `hangar runs finalize ID` when `dir` is held (by a run other than `except`). */
    async assertOpen(userId: string, dir: string, except?: string): Promise<void> {
      const run = await holder(dir, except)
      if (run) throw refusal(userId, dir, run)
    },
  }
}

export type WorkspaceGate = ReturnType<typeof createWorkspaceGate>
