// Workspaces as the store knows them: each conversation gets one on its first message — a worktree on
// branch `hangar/<conversation-id>` when its project (or, before projects, the daemon's directory) is a
// git repository with a commit, else a plain copy — under `<data-dir>/workspaces`, and every later run of it works there again (uncommitted changes
// included), after a check that nobody moved it to another branch. `--isolate` runs get a one-off of their
// own. Removing one removes its files (and its branch, only if Hangar created it).
import { randomBytes } from 'node:crypto'
import { lstat, realpath } from 'node:fs/promises'
import path from 'node:path'
import { AppError } from '../core/errors.js'
import { type Logger, silentLogger } from '../core/logger.js'
import type { Workspace } from '../store/repositories/workspaces-repository.js'
import type { Store, UserScope } from '../store/store.js'
import {
  type BranchOutcome,
  changedFileCount,
  type CreatedWorkspace,
  createCopy,
  createWorktree,
  removeWorkspaceFiles,
  repositoryState,
  verifyWorkspace,
  workspaceCwd,
} from './local-workspaces.js'
import type { TeardownResult, WorkspaceLifecycle } from './lifecycle/workspace-lifecycle.js'

/** Run statuses during which a workspace is in use and may not be removed. */
export const BUSY_RUN_STATUSES = ['queued', 'preparing', 'running', 'finalizing'] as const

/** A workspace checked and ready for a run; `cwd` is the project's directory inside it. */
export interface PreparedWorkspace extends Workspace {
  cwd: string
}

/** A workspace as `hangar workspaces show` and GET /api/workspaces/:id present it. */
export interface WorkspaceDetails extends Workspace {
  /** Files `git status --short` lists (worktrees only; null otherwise or when it cannot tell). */
  changedFiles: number | null
  /** Why it cannot be used as it is (changed or removed outside Hangar), or null. */
  problem: string | null
}

export interface WorkspaceRemoval {
  workspace: Workspace
  /** False when there was nothing to remove (in place, already gone, or removed before). */
  removedFiles: boolean
  branch: BranchOutcome | null
  /** The lifecycle's teardown command, where it ran (none when the project has none). */
  teardown?: TeardownResult[]
  /** Its copies on SSH targets, each removed or not (none when it was never shipped). */
  hostCopies?: HostCopyRemoval[]
}

/** A workspace's copy on an SSH target, removed with it — or not (the host could not be reached). */
export interface HostCopyRemoval {
  target: string
  removed: boolean
  /** Why not. */
  reason?: string
}

export interface WorkspaceServiceOptions {
  store: Store
  dataDir: string
  /** The daemon's project: what a conversation's workspace is made from. */
  projectDir: string
  /** This host's node id: a workspace's files are on the node that made it. */
  nodeId: string
  /** The project's workspace lifecycle: files copied and ports taken when made, teardown when removed. */
  lifecycle?: Pick<WorkspaceLifecycle, 'prepareFiles' | 'teardown' | 'release'>
  /** Called once workspaces went (removed, or swept at start-up): what else lives per workspace goes too. */
  afterRemoval?: () => Promise<unknown>
  /**
   * Called for each workspace once it is removed (after its local files went): removes what lives
   * elsewhere of it (its copies on SSH targets). Should not throw; a failure is logged, never blocking.
   */
  onRemoved?: (userId: string, workspace: Workspace) => Promise<HostCopyRemoval[]>
  log?: Logger
}

export function createWorkspaceService(options: WorkspaceServiceOptions) {
  const { store, nodeId } = options
  const log = options.log ?? silentLogger
  const root = path.join(options.dataDir, 'workspaces')
  const afterRemoval = async () => {
    await options.afterRemoval?.().catch((error: unknown) =>
      log.warn('cannot clean up after a removed workspace', {
        error: error instanceof Error ? error.message : String(error),
      }),
    )
  }
  const onRemoved = async (userId: string, workspace: Workspace): Promise<HostCopyRemoval[]> => {
    if (!options.onRemoved) return []
    return options.onRemoved(userId, workspace).catch((error: unknown) => {
      log.warn('cannot clean up elsewhere after a removed workspace', {
        workspaceId: workspace.id,
        error: error instanceof Error ? error.message : String(error),
      })
      return []
    })
  }
  // One creation or removal at a time per conversation (and per conversation-less workspace) in this
  // process: two messages arriving together must not both make a worktree.
  const chains = new Map<string, Promise<unknown>>()

  function serialize<T>(key: string, work: () => Promise<T>): Promise<T> {
    const next = (chains.get(key) ?? Promise.resolve()).then(work, work)
    const settled = next.then(
      () => undefined,
      () => undefined,
    )
    chains.set(key, settled)
    void settled.then(() => {
      if (chains.get(key) === settled) chains.delete(key)
    })
    return next
  }

  function assertOnThisNode(workspace: Workspace): void {
    if (workspace.nodeId && workspace.nodeId !== nodeId) {
      throw new AppError(
        'conflict',
        `workspace ${workspace.id} is on node ${workspace.nodeId}, and this is ${nodeId}`,
        { hint: `use the daemon of ${workspace.nodeId}, or remove the workspace there` },
      )
    }
  }

  async function prepare(workspace: Workspace): Promise<PreparedWorkspace> {
    assertOnThisNode(workspace)
    await verifyWorkspace(workspace)
    return { ...workspace, cwd: await workspaceCwd(workspace) }
  }

  async function getOwned(scope: UserScope, id: string): Promise<Workspace> {
    const workspace = await scope.workspaces.get(id)
    if (!workspace)
      throw new AppError('not_found', `no workspace ${id}`, { hint: 'see hangar workspaces list' })
    return workspace
  }

  /** Stores freshly made files (and links them to the conversation) in one transaction, or removes them. */
  async function save(
    userId: string,
    created: CreatedWorkspace | { kind: 'in_place'; path: string },
    conversationId: string | null,
  ): Promise<PreparedWorkspace> {
    try {
      const workspace = await store.transaction(async (repositories) => {
        const scope = repositories.forUser(userId)
        const row = await scope.workspaces.create({
          conversationId,
          kind: created.kind,
          path: created.path,
          projectPath: created.kind === 'in_place' ? created.path : created.projectPath,
          branch: created.kind === 'in_place' ? null : created.branch,
          baseRef: created.kind === 'in_place' ? null : created.baseRef,
          baseBranch: created.kind === 'in_place' ? null : (created.baseBranch ?? null),
          createdBranch: created.kind === 'in_place' ? false : created.createdBranch,
          target: 'local',
          nodeId,
        })
        if (conversationId) await scope.conversations.update(conversationId, { workspaceId: row.id })
        return row
      })
      const cwd = created.kind === 'in_place' ? created.path : created.cwd
      await prepareFiles(userId, workspace, cwd)
      return { ...workspace, cwd }
    } catch (error) {
      if (created.kind !== 'in_place') await removeWorkspaceFiles(created).catch(() => undefined)
      throw error
    }
  }

  /** The lifecycle's part of a new workspace; a failure forgets the workspace (its files go with save's). */
  async function prepareFiles(userId: string, workspace: Workspace, cwd: string): Promise<void> {
    if (!options.lifecycle) return
    try {
      await options.lifecycle.prepareFiles(workspace, cwd)
    } catch (error) {
      await options.lifecycle.release(workspace.id).catch(() => undefined)
      const scope = store.forUser(userId)
      await scope.workspaces.markRemoved(workspace.id)
      if (workspace.conversationId)
        await scope.conversations.update(workspace.conversationId, { workspaceId: null })
      throw error
    }
  }

  /** The lifecycle's teardown before a workspace's files go; its failure is reported, never blocking. */
  async function teardown(workspace: Workspace): Promise<TeardownResult[] | undefined> {
    if (!options.lifecycle) return undefined
    return options.lifecycle.teardown(workspace).catch((error: unknown) => {
      log.warn('workspace teardown could not run', {
        workspaceId: workspace.id,
        error: error instanceof Error ? error.message : String(error),
      })
      return undefined
    })
  }

  /** A worktree of a repository with a commit; else a copy (a repository with no commit has no HEAD). */
  async function makeFiles(
    sourceDir: string,
    name: string,
    worktree: { branch?: string; baseRef?: string },
  ): Promise<CreatedWorkspace> {
    if ((await repositoryState(sourceDir)) === 'ready')
      return createWorktree({ projectDir: sourceDir, root, name, ...worktree })
    if (worktree.baseRef) {
      throw new AppError(
        'invalid_request',
        `${sourceDir} has no git history, so there is no ref ${worktree.baseRef}`,
        {
          hint: 'commit the project first, or leave out the base ref',
        },
      )
    }
    return createCopy({ projectDir: sourceDir, root, name, exclude: [options.dataDir] })
  }

  /** What a conversation's workspace is made from: its project's directory (the daemon's before projects). */
  async function sourceOf(conversation: { id: string; projectId: string | null }): Promise<string> {
    if (!conversation.projectId) return options.projectDir
    const project = await store.projects.get(conversation.projectId)
    if (!project) {
      throw new AppError('conflict', `conversation ${conversation.id} belongs to a removed project`, {
        hint: 'start a new conversation in a registered project',
      })
    }
    return project.path
  }

  function uniqueName(prefix: string): string {
    return `${prefix}-${Date.now().toString(36)}${randomBytes(3).toString('hex')}`
  }

  /**
   * A conversation that ran before it had a workspace (started by `hangar run` of the built-in agent, or
   * before workspaces existed) keeps working where its last run did: that run's one-off workspace, or
   * the directory itself in place. Undefined when there is nothing to keep.
   */
  async function adoptPrevious(
    userId: string,
    conversationId: string,
  ): Promise<PreparedWorkspace | undefined> {
    const scope = store.forUser(userId)
    const [last] = await scope.runs.list({ conversationId, limit: 1 })
    if (!last) return undefined
    const owner = (await scope.workspaces.list()).find(
      (workspace) =>
        !workspace.conversationId &&
        (last.cwd === workspace.path || last.cwd.startsWith(`${workspace.path}${path.sep}`)),
    )
    if (owner) return attach(scope, owner, conversationId)
    // The last run worked in a workspace that was removed since: a new one is made instead.
    const realRoot = await realpath(root).catch(() => root)
    if ([root, realRoot].some((prefix) => last.cwd.startsWith(`${prefix}${path.sep}`))) return undefined
    return save(userId, { kind: 'in_place', path: last.cwd }, conversationId)
  }

  /** A user's own workspace (see personal()): theirs, without a conversation, named after them. */
  async function findPersonal(userId: string): Promise<Workspace | undefined> {
    return (await store.forUser(userId).workspaces.list()).find((workspace) => {
      const name = path.basename(workspace.path)
      return (
        workspace.conversationId === null &&
        workspace.kind !== 'in_place' &&
        (name === userId || name.startsWith(`${userId}-`))
      )
    })
  }

  async function attach(scope: UserScope, workspace: Workspace, conversationId: string) {
    if (workspace.conversationId && workspace.conversationId !== conversationId) {
      throw new AppError(
        'conflict',
        `workspace ${workspace.id} belongs to conversation ${workspace.conversationId}`,
      )
    }
    if (workspace.status !== 'active') throw new AppError('conflict', `workspace ${workspace.id} was removed`)
    const prepared = await prepare(workspace)
    await scope.workspaces.setConversation(workspace.id, conversationId)
    await scope.conversations.update(conversationId, { workspaceId: workspace.id })
    return { ...prepared, conversationId }
  }

  async function assertIdle(scope: UserScope, workspace: Workspace): Promise<void> {
    const busy = (
      await Promise.all(BUSY_RUN_STATUSES.map((status) => scope.runs.list({ status, limit: 500 })))
    ).flat()
    const inside = (cwd: string) => cwd === workspace.path || cwd.startsWith(`${workspace.path}${path.sep}`)
    const run = busy.find(
      (candidate) =>
        (workspace.conversationId !== null && candidate.conversationId === workspace.conversationId) ||
        // A workspace in place is the project, where conversation-less runs may work too: not ours.
        (workspace.kind !== 'in_place' && inside(candidate.cwd)),
    )
    if (run) {
      throw new AppError('conflict', `workspace ${workspace.id} is in use by run ${run.id} (${run.status})`, {
        hint: `wait for it to end or cancel it with hangar runs cancel ${run.id}, then try again`,
      })
    }
  }

  async function removeLocked(userId: string, id: string): Promise<WorkspaceRemoval> {
    const scope = store.forUser(userId)
    const workspace = await getOwned(scope, id)
    if (workspace.status === 'removed') return { workspace, removedFiles: false, branch: null }
    await assertIdle(scope, workspace)
    assertOnThisNode(workspace)
    const tornDown = await teardown(workspace)
    const files = await removeWorkspaceFiles(workspace)
    await scope.workspaces.markRemoved(id)
    await afterRemoval()
    const hostCopies = await onRemoved(userId, workspace)
    if (workspace.conversationId) {
      const conversation = await scope.conversations.get(workspace.conversationId)
      if (conversation?.workspaceId === id)
        await scope.conversations.update(conversation.id, { workspaceId: null })
    }
    return {
      workspace: await getOwned(scope, id),
      ...files,
      ...(tornDown?.length && { teardown: tornDown }),
      ...(hostCopies.length > 0 && { hostCopies }),
    }
  }

  return {
    /**
     * The conversation's workspace, made on first use and checked on every reuse (a missing directory or
     * a worktree on another branch is a `conflict`, never silently reused). `baseRef` only matters when
     * the worktree is made: the commit its branch starts from (default: the project's HEAD).
     */
    forConversation(
      userId: string,
      conversationId: string,
      request: { baseRef?: string } = {},
    ): Promise<PreparedWorkspace> {
      return serialize(conversationId, async () => {
        const scope = store.forUser(userId)
        const conversation = await scope.conversations.get(conversationId)
        if (!conversation) throw new AppError('not_found', `no conversation ${conversationId}`)
        const linked = conversation.workspaceId
          ? await scope.workspaces.get(conversation.workspaceId)
          : undefined
        const current =
          linked?.status === 'active'
            ? linked
            : (await scope.workspaces.listForConversation(conversationId))[0]
        if (current) {
          const prepared = await prepare(current)
          if (conversation.workspaceId !== current.id)
            await scope.conversations.update(conversationId, { workspaceId: current.id })
          return prepared
        }
        const everHad = (await scope.workspaces.listForConversation(conversationId, { includeRemoved: true }))
          .length
        if (!everHad) {
          const adopted = await adoptPrevious(userId, conversationId)
          if (adopted) return adopted
        }
        // The directory of an earlier workspace whose removal failed half-way is not reused.
        const taken = await lstat(path.join(root, conversationId)).then(
          () => true,
          () => false,
        )
        const name = taken ? uniqueName(conversationId) : conversationId
        const created = await makeFiles(await sourceOf(conversation), name, {
          branch: `hangar/${conversationId}`,
          ...((request.baseRef ?? conversation.baseRef) && {
            baseRef: request.baseRef ?? conversation.baseRef ?? undefined,
          }),
        })
        return save(userId, created, conversationId)
      })
    },

    /**
     * A one-off workspace of `cwd` for one run (`--isolate`): a detached worktree of HEAD (or of
     * `baseRef`, `hangar run --from`), or a copy.
     */
    async isolated(
      userId: string,
      cwd: string,
      request: { baseRef?: string } = {},
    ): Promise<PreparedWorkspace> {
      const created = await makeFiles(path.resolve(cwd), uniqueName('run'), {
        ...(request.baseRef && { baseRef: request.baseRef }),
      })
      return save(userId, created, null)
    },

    /**
     * The user's own workspace of the project, for work outside runs (a member's MCP workspace tools): a
     * worktree on branch `hangar/<user-id>` (or a copy), made on first use and kept until removed.
     */
    personal(userId: string): Promise<PreparedWorkspace> {
      return serialize(`personal:${userId}`, async () => {
        const existing = await findPersonal(userId)
        if (existing) return prepare(existing)
        const taken = await lstat(path.join(root, userId)).then(
          () => true,
          () => false,
        )
        const created = await makeFiles(options.projectDir, taken ? uniqueName(userId) : userId, {
          branch: `hangar/${userId}`,
        })
        return save(userId, created, null)
      })
    },

    /** The user's own workspace when it exists (never made here): where its proposals are applied. */
    async findPersonal(userId: string): Promise<PreparedWorkspace | undefined> {
      const existing = await findPersonal(userId)
      return existing && prepare(existing)
    },

    /**
     * Links a conversation made for a conversation-less run (the built-in agent keeps its turns in one) to
     * where that run works: its one-off workspace, or `inPlace`, the directory itself. Later messages of
     * the conversation then work there too.
     */
    adopt(
      userId: string,
      conversationId: string,
      target: { workspaceId: string } | { inPlace: string },
    ): Promise<PreparedWorkspace> {
      return serialize(conversationId, async () => {
        const scope = store.forUser(userId)
        if ('workspaceId' in target)
          return attach(scope, await getOwned(scope, target.workspaceId), conversationId)
        return save(userId, { kind: 'in_place', path: path.resolve(target.inPlace) }, conversationId)
      })
    },

    /** The caller's active workspaces, newest first. */
    list(userId: string): Promise<Workspace[]> {
      return store.forUser(userId).workspaces.list()
    },

    /** One of the caller's workspaces (another user's id is `not_found`). */
    get(userId: string, id: string): Promise<Workspace> {
      return getOwned(store.forUser(userId), id)
    },

    /** One workspace with what `git status` says and whether it is still usable as it is. */
    async inspect(userId: string, id: string): Promise<WorkspaceDetails> {
      const workspace = await getOwned(store.forUser(userId), id)
      if (workspace.status === 'removed') return { ...workspace, changedFiles: null, problem: null }
      let problem: string | null = null
      try {
        assertOnThisNode(workspace)
        await verifyWorkspace(workspace)
      } catch (error) {
        if (!(error instanceof AppError)) throw error
        problem = error.hint ? `${error.message} (${error.hint})` : error.message
      }
      return { ...workspace, changedFiles: problem ? null : await changedFileCount(workspace), problem }
    },

    /** Removes its files (the branch only if Hangar made it); refused while a run uses it. Idempotent. */
    async remove(userId: string, id: string): Promise<WorkspaceRemoval> {
      const workspace = await getOwned(store.forUser(userId), id)
      return serialize(workspace.conversationId ?? workspace.id, () => removeLocked(userId, id))
    },

    /** Removes every active workspace of a conversation. */
    removeForConversation(userId: string, conversationId: string): Promise<WorkspaceRemoval[]> {
      return serialize(conversationId, async () => {
        const removals: WorkspaceRemoval[] = []
        for (const workspace of await store.forUser(userId).workspaces.listForConversation(conversationId))
          removals.push(await removeLocked(userId, workspace.id))
        return removals
      })
    },

    /**
     * Deletes a conversation and its workspaces — refused while one of its runs is queued or running —
     * under the conversation's lock, so a message arriving meanwhile cannot make a new workspace for it.
     */
    deleteConversation(userId: string, conversationId: string): Promise<WorkspaceRemoval[]> {
      return serialize(conversationId, async () => {
        const scope = store.forUser(userId)
        if (!(await scope.conversations.get(conversationId)))
          throw new AppError('not_found', `no conversation ${conversationId}`)
        const runs = await scope.runs.list({ conversationId, limit: 50 })
        const busy = runs.find((run) => (BUSY_RUN_STATUSES as readonly string[]).includes(run.status))
        if (busy) {
          throw new AppError('conflict', `the conversation has a run ${busy.status} (${busy.id})`, {
            hint: `wait for it to end or cancel it with hangar runs cancel ${busy.id}, then try again`,
          })
        }
        const removals: WorkspaceRemoval[] = []
        for (const workspace of await scope.workspaces.listForConversation(conversationId))
          removals.push(await removeLocked(userId, workspace.id))
        await scope.conversations.delete(conversationId)
        return removals
      })
    },

    /**
     * At start-up: removes the workspaces (files and rows, of every user) whose conversation no longer
     * exists, on this node. Returns how many; one that cannot be removed is logged and left for next time.
     */
    async cleanupOrphans(): Promise<number> {
      let removed = 0
      for (const workspace of await store.workspaceSweep.orphans()) {
        if (workspace.nodeId && workspace.nodeId !== nodeId) continue
        try {
          await teardown(workspace)
          await removeWorkspaceFiles(workspace)
          await store.forUser(workspace.userId).workspaces.markRemoved(workspace.id)
          await onRemoved(workspace.userId, workspace)
          removed++
        } catch (error) {
          log.warn('cannot remove the workspace of a deleted conversation', {
            workspaceId: workspace.id,
            path: workspace.path,
            error: error instanceof Error ? error.message : String(error),
          })
        }
      }
      // Also what earlier removals left (a crash between the two).
      await afterRemoval()
      return removed
    },
  }
}

export type WorkspaceService = ReturnType<typeof createWorkspaceService>
