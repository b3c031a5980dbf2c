// Who may work where. A run's directory is confined to the allowed roots (allowed-roots.ts); the owner
// works in place in the operator's checkout as before, and everyone else gets workspaces of their own: a
// member's run that asked for its directory in place gets a one-off worktree of it, and a member's MCP
// workspace tools work in the member's own workspace (a worktree on `hangar/<user-id>`), where their
// proposals are applied too — made of the daemon's directory, so once projects exist only a member granted
// the project holding it gets one.
import { AppError } from '../core/errors.js'
import type { Store } from '../store/store.js'
import type { AllowedRoots } from '../workspaces/allowed-roots.js'
import type { WorkspaceService } from '../workspaces/workspace-service.js'
import type { ProjectService } from '../projects/project-service.js'

export interface WorkspacePolicyOptions {
  store: Pick<Store, 'users'>
  roots: AllowedRoots
  workspaces: Pick<WorkspaceService, 'personal' | 'findPersonal'>
  /** Whether a user may work on the daemon's directory (absent: anyone, as before projects). */
  projects?: Pick<ProjectService, 'forRun'>
}

export function createWorkspacePolicy(options: WorkspacePolicyOptions) {
  const { roots, workspaces } = options
  const project = roots.roots[0]!

  async function isOwner(userId: string): Promise<boolean> {
    return (await options.store.users.findById(userId))?.role === 'owner'
  }

  return {
    roots,
    /** Where a run asked to work (relative to `base`, default the project): its real path, or a refusal. */
    resolveRunDirectory: (requested: string | undefined, base?: string) => roots.resolve(requested, base),
    /** Only the owner works in place in the operator's checkout. */
    worksInPlace: isOwner,
    /** Where the user's MCP workspace tools work: the project for the owner, else their own workspace. */
    async toolWorkspace(userId: string): Promise<string> {
      if (await isOwner(userId)) return project
      await options.projects?.forRun(userId, { cwd: project })
      return (await workspaces.personal(userId)).cwd
    },
    /** Where the user's MCP proposals are applied: the same place, which is never made here. */
    async proposalWorkspace(userId: string): Promise<string> {
      if (await isOwner(userId)) return project
      await options.projects?.forRun(userId, { cwd: project })
      const own = await workspaces.findPersonal(userId)
      if (!own) {
        throw new AppError('conflict', 'your own workspace, where this proposal applies, was removed', {
          hint: 'ask for the change again: the next workspace tool call makes a new workspace',
        })
      }
      return own.cwd
    },
  }
}

export type WorkspacePolicy = ReturnType<typeof createWorkspacePolicy>
