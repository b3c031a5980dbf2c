// Who may review and land which workspace, and what must hold first: the caller's own worktree
// workspace (another user's id is not found) on this node, whose project is still granted to them
// (project-service.ts), with the user's repository still there; for a land, no run using it and no
// changes left on an SSH target, and a target branch that exists (refs checked in refs.ts).
import { lstat } from 'node:fs/promises'
import path from 'node:path'
import type { Conversation } from '../../core/api-types.js'
import { AppError } from '../../core/errors.js'
import type { ProjectService } from '../../projects/project-service.js'
import { createWorkspaceGate } from '../../runs/workspace-gate.js'
import type { Workspace } from '../../store/repositories/workspaces-repository.js'
import type { Store } from '../../store/store.js'
import { currentBranch, git, gitRoot } from '../git.js'
import { BUSY_RUN_STATUSES, type WorkspaceService } from '../workspace-service.js'
import { resolveBranch } from './refs.js'

export interface ReviewCaller {
  userId: string
  /** For the audit log: `user:<id>`, `pat:<id>`. */
  actor: string
  /** A session, or a token with the `approve` scope: landing changes the user's repository. */
  mayLand: boolean
}

export interface Accessed {
  workspace: Workspace
  conversation: Conversation | undefined
  /** The user's repository: the top of the checkout the project directory is in. */
  repo: string
}

export function createReviewAccess(options: {
  store: Store
  workspaces: Pick<WorkspaceService, 'get'>
  projects: Pick<ProjectService, 'forConversation' | 'forRun'>
  nodeId: string
}) {
  const { store } = options
  const gate = createWorkspaceGate(store)

  /** The caller's worktree workspace on this node, its conversation, and the user's repository. */
  async function access(caller: ReviewCaller, id: string): Promise<Accessed> {
    const scope = store.forUser(caller.userId)
    const workspace = await options.workspaces.get(caller.userId, id)
    const conversation = workspace.conversationId
      ? await scope.conversations.get(workspace.conversationId)
      : undefined
    // Its project must still be the caller's: a revoked grant takes review and land with it.
    if (conversation) await options.projects.forConversation(caller.userId, conversation)
    else await options.projects.forRun(caller.userId, { cwd: workspace.projectPath })
    if (workspace.status !== 'active')
      throw new AppError('conflict', `workspace ${id} was removed`, { hint: 'see hangar workspaces list' })
    if (workspace.kind !== 'worktree') {
      throw new AppError(
        'invalid_request',
        `workspace ${id} is a ${workspace.kind.replace('_', ' ')}, not a git worktree`,
        {
          hint: 'only a worktree of a git project has a change set to review and land',
        },
      )
    }
    if (workspace.nodeId && workspace.nodeId !== options.nodeId) {
      throw new AppError(
        'conflict',
        `workspace ${id} is on node ${workspace.nodeId}, and this is ${options.nodeId}`,
        {
          hint: `use the daemon of ${workspace.nodeId}`,
        },
      )
    }
    const projectThere = await lstat(workspace.projectPath).then(
      () => true,
      () => false,
    )
    const repo = projectThere ? await gitRoot(workspace.projectPath) : undefined
    if (!repo) {
      throw new AppError(
        'conflict',
        `the project directory ${workspace.projectPath} is gone (or no longer a git repository)`,
        {
          hint: 'restore it, or remove the workspace with hangar workspaces remove',
        },
      )
    }
    if (
      !(await lstat(workspace.path).then(
        () => true,
        () => false,
      ))
    ) {
      throw new AppError('conflict', `the files of workspace ${id} (${workspace.path}) are gone`, {
        hint: `remove it with hangar workspaces remove ${id}`,
      })
    }
    return { workspace, conversation, repo }
  }

  async function baseOf(
    accessed: Accessed,
    base: string | undefined,
  ): Promise<{ base: string; branch: string | null }> {
    const { workspace, repo } = accessed
    if (base) {
      const head = await resolveBranch(repo, base, 'base')
      const { stdout } = await git(['merge-base', head, 'HEAD'], { cwd: workspace.path })
      return { base: stdout.trim(), branch: base }
    }
    if (workspace.baseRef) return { base: workspace.baseRef, branch: null }
    throw new AppError('invalid_request', `workspace ${workspace.id} has no recorded base commit`, {
      hint: 'name a branch to compare with: ?base=BRANCH (--base BRANCH)',
    })
  }

  /** Refuses while a run uses the workspace or its changes are not back from an SSH target. */
  async function assertSettled(caller: ReviewCaller, accessed: Accessed): Promise<void> {
    const { workspace } = accessed
    const scope = store.forUser(caller.userId)
    if (workspace.conversationId) {
      const runs = await scope.runs.list({ conversationId: workspace.conversationId, limit: 200 })
      const busy = runs.find((run) => (BUSY_RUN_STATUSES as readonly string[]).includes(run.status))
      if (busy) {
        throw new AppError(
          'conflict',
          `workspace ${workspace.id} is in use by run ${busy.id} (${busy.status})`,
          {
            hint: `wait for it to end or cancel it with hangar runs cancel ${busy.id}, then land again`,
          },
        )
      }
      const unsynced = runs.find(
        (run) => run.workspaceFinalize === 'failed' || run.workspaceFinalize === 'pending',
      )
      if (unsynced) {
        throw new AppError(
          'conflict',
          `run ${unsynced.id} did not bring its changes back from its SSH target (finalize ${unsynced.workspaceFinalize}${unsynced.finalizeReason ? `: ${unsynced.finalizeReason}` : ''}); landing now would lose them`,
          { hint: `bring them back with hangar runs finalize ${unsynced.id}, then land again` },
        )
      }
    }
    await gate.assertOpen(caller.userId, workspace.path)
    for (const marker of ['MERGE_HEAD', 'rebase-merge', 'rebase-apply', 'CHERRY_PICK_HEAD']) {
      const where = (await git(['rev-parse', '--git-path', marker], { cwd: workspace.path })).stdout.trim()
      if (
        await lstat(path.resolve(workspace.path, where)).then(
          () => true,
          () => false,
        )
      ) {
        throw new AppError('conflict', `workspace ${workspace.id} is in the middle of a merge or rebase`, {
          hint: `finish it (or git -C ${workspace.path} merge --abort), then land again`,
        })
      }
    }
  }

  async function targetOf(
    accessed: Accessed,
    into: string | undefined,
  ): Promise<{ into: string; head: string }> {
    const name = into ?? accessed.workspace.baseBranch ?? (await currentBranch(accessed.repo))
    if (!name) {
      throw new AppError('invalid_request', `workspace ${accessed.workspace.id} was not made from a branch`, {
        hint: 'name the branch to land into: into (--into BRANCH)',
        details: { field: 'into' },
      })
    }
    const head = await resolveBranch(accessed.repo, name, 'into')
    if (name === accessed.workspace.branch) {
      throw new AppError('invalid_request', `into: ${name} is the workspace's own branch`, {
        hint: 'name the branch to land into',
        details: { field: 'into' },
      })
    }
    return { into: name, head }
  }

  async function agentsOf(caller: ReviewCaller, workspace: Workspace): Promise<string[]> {
    if (!workspace.conversationId) return []
    const runs = await store
      .forUser(caller.userId)
      .runs.list({ conversationId: workspace.conversationId, limit: 500 })
    return [...new Set(runs.reverse().map((run) => run.agent))]
  }

  function needConversation(accessed: Accessed): Conversation {
    if (!accessed.conversation) {
      throw new AppError('invalid_request', `workspace ${accessed.workspace.id} belongs to no conversation`, {
        hint: "only a conversation's workspace has an agent to send this to",
      })
    }
    return accessed.conversation
  }

  return { access, baseOf, assertSettled, targetOf, agentsOf, needConversation }
}
