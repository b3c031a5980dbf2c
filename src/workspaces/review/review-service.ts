// Review and land, the one service REST, MCP and the CLI all call: a workspace's change set against its
// base, review comments sent to its conversation's agent as one message, landing it into a branch of the
// user's repository, and a run that resolves a land's conflicts. Every call checks first that the
// workspace is the caller's (another user's id is not found) and that its project is still granted to
// them (project-service.ts); landing also needs a session or the `approve` scope. One land of a workspace
// at a time: the claim is a conditional UPDATE in the store, so daemons sharing it agree.
import { randomUUID } from 'node:crypto'
import path from 'node:path'
import { AppError } from '../../core/errors.js'
import type { AgentEvent } from '../../core/events.js'
import { type Logger, silentLogger } from '../../core/logger.js'
import type { ProjectService } from '../../projects/project-service.js'
import type { ReviewComment } from '../../store/repositories/review-comments-repository.js'
import type { Run } from '../../store/repositories/runs-repository.js'
import type { Workspace } from '../../store/repositories/workspaces-repository.js'
import type { Store } from '../../store/store.js'
import { git } from '../git.js'
import type { WorkspaceService, WorkspaceRemoval } from '../workspace-service.js'
import { changeSet, type ChangeSet, fileAt, workingTree } from './change-set.js'
import {
  applyLand,
  attemptLand,
  checkouts,
  adoptWork,
  dirtyFiles,
  identityFor,
  type LandStrategy,
  snapshotWork,
} from './land-git.js'
import { createReviewAccess, type ReviewCaller } from './review-access.js'
import { conflictPrompt, reviewMessage, withAgentsTrailer } from './review-messages.js'

/** A claim older than this belongs to a daemon that died mid-land and may be taken over. */
const STALE_LAND_MS = 15 * 60_000
const MAX_LINES_PER_COMMENT = 2000
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\x00-\x1f]/

export type { ReviewCaller }

export interface NewComment {
  path: string
  startLine: number
  endLine: number
  body: string
}

export interface LandRequest {
  into?: string | undefined
  strategy?: LandStrategy | undefined
  message?: string | undefined
  removeWorkspace?: boolean | undefined
}

export interface LandResult {
  workspaceId: string
  into: string
  strategy: LandStrategy
  previous: string
  commit: string
  /** The workspace's commit that was landed (its uncommitted work committed first). */
  source: string
  /** Where the branch moved: the user's checkout of it (fast-forwarded), or only the ref. */
  updated: 'checkout' | 'ref'
  checkout: string | null
  files: number
  removal: WorkspaceRemoval | null
}

export interface ReviewServiceOptions {
  store: Store
  workspaces: Pick<WorkspaceService, 'get' | 'remove'>
  projects: Pick<ProjectService, 'forConversation' | 'forRun'>
  submitRun: (userId: string, request: { prompt: string; conversationId: string }) => Promise<Run>
  /** Adds events to an ended run (the run service's). */
  appendEvents: (userId: string, runId: string, events: readonly AgentEvent[]) => Promise<void>
  dataDir: string
  nodeId: string
  log?: Logger
}

export function createReviewService(options: ReviewServiceOptions) {
  const { store } = options
  const log = options.log ?? silentLogger
  const { access, baseOf, assertSettled, targetOf, agentsOf, needConversation } = createReviewAccess(options)

  async function land(caller: ReviewCaller, id: string, request: LandRequest): Promise<LandResult> {
    const accessed = await access(caller, id)
    if (!caller.mayLand) {
      throw new AppError('forbidden', 'landing needs the approve scope', {
        hint: 'use a token made with --scope approve, or the web UI / CLI',
      })
    }
    const { workspace, repo } = accessed
    const strategy = request.strategy ?? 'merge'
    const target = await targetOf(accessed, request.into)
    const scope = store.forUser(caller.userId)
    const token = randomUUID()
    if (!(await scope.workspaces.claimLanding(workspace.id, token, STALE_LAND_MS))) {
      throw new AppError('conflict', `workspace ${workspace.id} is being landed already`, {
        hint: 'wait for that land to finish, then look at the target branch',
      })
    }
    const audit = (action: string, details: Record<string, unknown>) =>
      scope.audit.append({
        actor: caller.actor,
        action,
        targetType: 'workspace',
        targetId: workspace.id,
        details,
      })
    try {
      await assertSettled(caller, accessed)
      const holder = (await checkouts(repo)).find((checkout) => checkout.branch === target.into)
      if (holder) {
        const dirty = await dirtyFiles(holder.path)
        if (dirty.length) {
          throw new AppError(
            'conflict',
            `the checkout of ${target.into} at ${holder.path} has uncommitted changes (${dirty.length} file(s): ${dirty.slice(0, 5).join(', ')})`,
            {
              hint: 'commit or stash them, then land again',
              details: { into: target.into, dirty },
            },
          )
        }
      }
      const user = await store.users.findById(caller.userId)
      const identity = await identityFor(repo, user?.name ?? caller.userId)
      const agents = await agentsOf(caller, workspace)
      const title = accessed.conversation?.title ?? workspace.branch ?? workspace.id
      const work = await snapshotWork(
        workspace.path,
        withAgentsTrailer(request.message ?? `Work of ${title}`, agents),
        identity,
      )
      const source = work.source
      const message = withAgentsTrailer(
        request.message ??
          (strategy === 'squash' ? title : `Land ${workspace.branch ?? workspace.id}: ${title}`),
        agents,
      )
      const attempt = await attemptLand({
        repo,
        tmpRoot: path.join(options.dataDir, 'land'),
        source,
        targetHead: target.head,
        strategy,
        message,
        identity,
      })
      if (!attempt.ok) {
        throw new AppError(
          'conflict',
          `landing workspace ${workspace.id} into ${target.into} conflicts in ${attempt.conflicts.length} file(s): ${attempt.conflicts.join(', ') || attempt.reason}; nothing was changed`,
          {
            hint: `let the agent resolve it: POST /api/workspaces/${workspace.id}/resolve-conflicts (hangar workspaces resolve ${workspace.id})`,
            details: {
              into: target.into,
              conflicts: attempt.conflicts,
              resolve: `/api/workspaces/${workspace.id}/resolve-conflicts`,
            },
          },
        )
      }
      if (attempt.result === target.head) {
        throw new AppError(
          'conflict',
          `${target.into} has every change of workspace ${workspace.id} already; nothing to land`,
          {
            hint: 'let the agent make more changes first',
          },
        )
      }
      await applyLand({
        repo,
        into: target.into,
        targetHead: target.head,
        result: attempt.result,
        checkout: holder?.path,
        reflog: `hangar: land workspace ${workspace.id} (${strategy})`,
      })
      await adoptWork(workspace.path, work)
      const { stdout } = await git(['diff-tree', '-r', '--name-only', '-z', target.head, attempt.result], {
        cwd: repo,
      })
      const files = stdout.split('\0').filter(Boolean).length
      await audit('workspace.land', {
        into: target.into,
        strategy,
        previous: target.head,
        commit: attempt.result,
        source,
        files,
        repo,
      })
      let removal: WorkspaceRemoval | null = null
      if (request.removeWorkspace) {
        // The claim goes first: removing checks the workspace is idle, and nothing else holds it now.
        await scope.workspaces.releaseLanding(workspace.id, token)
        removal = await options.workspaces.remove(caller.userId, workspace.id)
      }
      await announce(caller, workspace, {
        type: 'workspace-landed',
        workspaceId: workspace.id,
        into: target.into,
        strategy,
        previous: target.head,
        commit: attempt.result,
        files,
        removed: removal !== null,
      })
      return {
        workspaceId: workspace.id,
        into: target.into,
        strategy,
        previous: target.head,
        commit: attempt.result,
        source,
        updated: holder ? 'checkout' : 'ref',
        checkout: holder?.path ?? null,
        files,
        removal,
      }
    } catch (error) {
      await audit('workspace.land_refused', {
        into: target.into,
        strategy,
        reason: error instanceof Error ? error.message : String(error),
      }).catch(() => undefined)
      throw error
    } finally {
      await scope.workspaces.releaseLanding(workspace.id, token).catch(() => undefined)
    }
  }

  /** `workspace-landed` on the conversation's streams: appended to its last run, like `finalize-end`. */
  async function announce(caller: ReviewCaller, workspace: Workspace, event: AgentEvent): Promise<void> {
    if (!workspace.conversationId) return
    const [last] = await store
      .forUser(caller.userId)
      .runs.list({ conversationId: workspace.conversationId, limit: 1 })
    if (!last) return
    await options
      .appendEvents(caller.userId, last.id, [event])
      .catch((error: unknown) =>
        log.warn('cannot record workspace-landed', { workspaceId: workspace.id, error: String(error) }),
      )
  }

  function checkComment(comment: NewComment, index: number): void {
    const field = `comments[${index}]`
    const bad = (what: string) => new AppError('invalid_request', `${field}: ${what}`, { details: { field } })
    const parts = comment.path.split('/')
    if (
      !comment.path ||
      comment.path.startsWith('/') ||
      CONTROL_CHARACTERS.test(comment.path) ||
      parts.some((part) => part === '..' || part === '.' || part === '')
    )
      throw bad(
        `path ${JSON.stringify(comment.path.slice(0, 200))} is not a file path relative to the workspace`,
      )
    if (comment.endLine < comment.startLine) throw bad('endLine is before startLine')
    if (comment.endLine - comment.startLine >= MAX_LINES_PER_COMMENT)
      throw bad(`a comment covers at most ${MAX_LINES_PER_COMMENT} lines`)
  }

  return {
    access,

    /** The change set against the workspace's base commit, or against `base` (a branch: their merge-base). */
    async diff(
      caller: ReviewCaller,
      id: string,
      request: { base?: string | undefined; stat?: boolean } = {},
    ): Promise<ChangeSet & { workspaceId: string; branch: string | null }> {
      const accessed = await access(caller, id)
      const base = await baseOf(accessed, request.base)
      const set = await changeSet(accessed.workspace.path, base.base, {
        stat: request.stat ?? false,
        baseBranch: base.branch,
      })
      return { workspaceId: id, branch: accessed.workspace.branch, ...set }
    },

    /** Stores the comments with the lines they quote and sends them to the agent as one message. */
    async review(
      caller: ReviewCaller,
      id: string,
      comments: readonly NewComment[],
    ): Promise<{ run: Run; comments: ReviewComment[] }> {
      const accessed = await access(caller, id)
      const conversation = needConversation(accessed)
      comments.forEach(checkComment)
      const { workspace } = accessed
      const tree = await workingTree(workspace.path)
      const head = (
        await git(['rev-parse', '--verify', 'HEAD^{commit}'], { cwd: workspace.path })
      ).stdout.trim()
      const quoted = await Promise.all(
        comments.map(async (comment, index) => {
          const file = await fileAt(workspace.path, tree, comment.path)
          if (!file) {
            throw new AppError(
              'invalid_request',
              `comments[${index}]: there is no file ${comment.path} in workspace ${id}`,
              {
                details: { field: `comments[${index}].path` },
              },
            )
          }
          if (comment.endLine > file.lines.length) {
            throw new AppError(
              'invalid_request',
              `comments[${index}]: ${comment.path} has ${file.lines.length} line(s), not ${comment.endLine}`,
              {
                details: { field: `comments[${index}].endLine` },
              },
            )
          }
          return {
            ...comment,
            quoted: file.lines.slice(comment.startLine - 1, comment.endLine).join('\n'),
            commit: head,
            blob: file.blob,
          }
        }),
      )
      // The run first: a refused message (a run in progress) stores no comment.
      const run = await options.submitRun(caller.userId, {
        prompt: reviewMessage(quoted),
        conversationId: conversation.id,
      })
      const scope = store.forUser(caller.userId)
      const stored = await scope.reviewComments.add(workspace.id, quoted)
      if (stored[0]) await scope.reviewComments.markSent(stored[0].reviewId, run.id)
      return { run, comments: stored.map((comment) => ({ ...comment, runId: run.id })) }
    },

    /** The workspace's comments, each `outdated` when the lines under it changed since. */
    async comments(caller: ReviewCaller, id: string): Promise<(ReviewComment & { outdated: boolean })[]> {
      const { workspace } = await access(caller, id)
      const comments = await store.forUser(caller.userId).reviewComments.list(workspace.id)
      if (!comments.length) return []
      const tree = await workingTree(workspace.path)
      const files = new Map<string, Awaited<ReturnType<typeof fileAt>>>()
      const result: (ReviewComment & { outdated: boolean })[] = []
      for (const comment of comments) {
        if (!files.has(comment.path))
          files.set(comment.path, await fileAt(workspace.path, tree, comment.path))
        const file = files.get(comment.path)
        const outdated =
          !file ||
          (file.blob !== comment.blob &&
            file.lines.slice(comment.startLine - 1, comment.endLine).join('\n') !== comment.quoted)
        result.push({ ...comment, outdated })
      }
      return result
    },

    land,

    /**
     * A run in the conversation that merges the target into the workspace and resolves what conflicts,
     * when landing would conflict (tried in a temporary worktree, with the uncommitted work included).
     */
    async resolveConflicts(
      caller: ReviewCaller,
      id: string,
      request: { into?: string | undefined; strategy?: LandStrategy | undefined } = {},
    ): Promise<{ run: Run; into: string; conflicts: string[] }> {
      const accessed = await access(caller, id)
      const conversation = needConversation(accessed)
      const { workspace, repo } = accessed
      const target = await targetOf(accessed, request.into)
      const user = await store.users.findById(caller.userId)
      const identity = await identityFor(repo, user?.name ?? caller.userId)
      // The work as it is, as a commit nothing points at: the workspace itself is not changed here.
      const { source } = await snapshotWork(workspace.path, 'hangar: work in progress', identity)
      const attempt = await attemptLand({
        repo,
        tmpRoot: path.join(options.dataDir, 'land'),
        source,
        targetHead: target.head,
        strategy: request.strategy ?? 'merge',
        message: 'hangar: conflict check',
        identity,
      })
      if (attempt.ok) {
        throw new AppError('conflict', `workspace ${id} lands into ${target.into} without conflicts`, {
          hint: `land it: hangar workspaces land ${id}`,
        })
      }
      const mergeBase = (
        await git(['merge-base', target.head, source], { cwd: workspace.path })
      ).stdout.trim()
      const { stdout } = await git(
        ['log', '-z', '--max-count=50', '--format=%H%x1f%s', `${mergeBase}..${target.head}`],
        { cwd: workspace.path },
      )
      const targetCommits = stdout
        .split('\0')
        .filter(Boolean)
        .map((line) => {
          const [sha, subject] = line.replace(/^\n/, '').split('\x1f')
          return { sha: sha!, subject: subject ?? '' }
        })
      const run = await options.submitRun(caller.userId, {
        prompt: conflictPrompt({ into: target.into, conflicts: attempt.conflicts, targetCommits }),
        conversationId: conversation.id,
      })
      await store.forUser(caller.userId).audit.append({
        actor: caller.actor,
        action: 'workspace.resolve_conflicts',
        targetType: 'workspace',
        targetId: workspace.id,
        details: { into: target.into, conflicts: attempt.conflicts, runId: run.id },
      })
      return { run, into: target.into, conflicts: attempt.conflicts }
    },
  }
}

export type ReviewService = ReturnType<typeof createReviewService>
