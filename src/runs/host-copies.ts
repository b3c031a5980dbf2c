// The copies of workspaces that runs shipped to SSH targets. Each ship records where it went, on the
// workspace the run worked in (a run's own record, `workspaceSync`, is cleared once its changes are
// back, while the host keeps the copy for the next run); when the workspace is removed, every copy is
// removed from its host. A host that cannot be reached does not hold up the local removal: it is
// logged, reported in the removal, and its record kept.
import path from 'node:path'
import type { Logger } from '../core/logger.js'
import type { HostCopy } from '../store/repositories/workspace-host-copies-repository.js'
import type { Workspace } from '../store/repositories/workspaces-repository.js'
import type { Store } from '../store/store.js'
import type { SshTargets } from '../workspaces/ssh/ssh-targets.js'
import { forgetRemoteWorkspace, type ShippedWorkspace } from '../workspaces/ssh/workspace-sync.js'
import type { HostCopyRemoval } from '../workspaces/workspace-service.js'

/** How long one host may take to remove its copy before the removal goes on without it. */
const DEFAULT_FORGET_TIMEOUT_MS = 30_000

function inside(dir: string, workspacePath: string): boolean {
  const a = path.resolve(dir)
  const b = path.resolve(workspacePath)
  return a === b || a.startsWith(b + path.sep)
}

/** Records where `shipped` went, on the workspace (of `userId`) whose directory it is. */
export async function recordHostCopy(
  store: Store,
  userId: string,
  shipped: Pick<ShippedWorkspace, 'target' | 'key' | 'remoteRoot' | 'localDir'>,
): Promise<void> {
  // In place, the workspace is the project itself: its host copy stays for the project's next run.
  const owner = (await store.forUser(userId).workspaces.list())
    .filter((workspace) => workspace.kind !== 'in_place' && inside(shipped.localDir, workspace.path))
    .sort((a, b) => b.path.length - a.path.length)[0]
  if (!owner) return
  await store.workspaceHostCopies.record(owner.id, {
    target: shipped.target,
    key: shipped.key,
    remoteRoot: shipped.remoteRoot,
  })
}

/**
 * The hook the workspace service calls once a workspace is removed: removes its copy from every host it
 * was shipped to (recorded ships, and runs still holding a ship record from before they were recorded).
 */
export function createHostCopyRemover(options: {
  store: Store
  targets: Pick<SshTargets, 'get'>
  /** The targets of hangar.yaml: a copy on a target no longer declared cannot be reached. */
  knownTarget: (name: string) => boolean
  log: Logger
  timeoutMs?: number
}) {
  const { store, log } = options

  async function copiesOf(userId: string, workspace: Workspace): Promise<HostCopy[]> {
    const recorded = await store.workspaceHostCopies.of(workspace.id)
    const held = (await store.runQueue.unfinalized())
      .filter((run) => run.userId === userId)
      .map((run) => run.workspaceSync as Partial<ShippedWorkspace> | null)
      .filter(
        (sync): sync is ShippedWorkspace =>
          !!sync?.target &&
          !!sync.key &&
          !!sync.remoteRoot &&
          !!sync.localDir &&
          inside(sync.localDir, workspace.path),
      )
    const distinct = new Map<string, HostCopy>()
    for (const copy of [...recorded, ...held]) {
      const { target, key, remoteRoot } = copy
      distinct.set(JSON.stringify([target, remoteRoot, key]), { target, key, remoteRoot })
    }
    return [...distinct.values()]
  }

  async function removeCopy(workspace: Workspace, copy: HostCopy): Promise<HostCopyRemoval> {
    try {
      if (!options.knownTarget(copy.target)) throw new Error(`target ${copy.target} is not in hangar.yaml`)
      await forgetRemoteWorkspace(options.targets.get(copy.target), copy, {
        signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_FORGET_TIMEOUT_MS),
      })
      await store.workspaceHostCopies.forget(workspace.id, copy)
      return { target: copy.target, removed: true }
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      log.warn('cannot remove the host copy of a removed workspace', {
        workspaceId: workspace.id,
        target: copy.target,
        remoteDir: path.posix.join(copy.remoteRoot, 'workspaces', copy.key),
        error: reason,
      })
      return { target: copy.target, removed: false, reason }
    }
  }

  return async function removeHostCopies(userId: string, workspace: Workspace): Promise<HostCopyRemoval[]> {
    return Promise.all((await copiesOf(userId, workspace)).map((copy) => removeCopy(workspace, copy)))
  }
}
