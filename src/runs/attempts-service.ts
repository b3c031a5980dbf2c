// Compare attempts: the same prompt started with several agents at once in one git project, each in a
// conversation (and worktree) of its own, queued as ordinary runs (so the scheduler's concurrency limits
// hold), then shown side by side once each run ended and the project's check command ran in its workspace.
// Picking one keeps it (the user lands it from its workspace) and removes the others' workspaces unless
// kept. REST, MCP and the CLI all come here; the project check (project-service.ts) is made on every call,
// so a member whose grant was revoked can neither start, see nor pick. Bad input is refused before
// anything is made; a failure half-way removes what was made.
import { z } from 'zod'
import type { DetectedAdapter } from '../adapters/detection.js'
import type { AdapterRegistry } from '../adapters/registry.js'
import type { Attempt, AttemptGroup, Project } from '../core/api-types.js'
import type { HangarConfig } from '../core/config.js'
import { AppError } from '../core/errors.js'
import { type EventEnvelope, isTerminalRunStatus, type TerminalRunStatus } from '../core/events.js'
import { type Logger, silentLogger } from '../core/logger.js'
import type { ProjectService } from '../projects/project-service.js'
import type { AttemptGroupRow, AttemptRow } from '../store/repositories/attempts-repository.js'
import type { Run } from '../store/repositories/runs-repository.js'
import type { Store } from '../store/store.js'
import { resolveCommit } from '../workspaces/local-workspaces.js'
import type { WorkspaceRemoval, WorkspaceService } from '../workspaces/workspace-service.js'
import { type AttemptCheckDeps, finishAttempt } from './attempt-check.js'
import { loadUserProfiles, resolveAgent } from './resolve-agent.js'
import type { RunService } from './run-service.js'
import type { Scheduler } from './scheduler.js'
import type { SubmitRunRequest } from './submit-run.js'

/** More agents than this in one go is refused: each gets a worktree and a run. */
export const MAX_ATTEMPT_AGENTS = 8

export const startAttemptsSchema = z.strictObject({
  projectId: z
    .string()
    .min(1)
    .optional()
    .describe('The git project to work on (prj_…); may be left out when there is exactly one'),
  prompt: z.string().min(1, 'the prompt must not be empty').max(1_000_000),
  agents: z
    .array(z.string().trim().min(1, 'an agent name must not be empty').max(100))
    .min(1, 'name at least one agent')
    .max(MAX_ATTEMPT_AGENTS, `at most ${MAX_ATTEMPT_AGENTS} agents at once`)
    .describe('Profile names or adapter ids (claude-code, codex, builtin…), one attempt each'),
  baseRef: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe('The branch or commit the worktrees start from (default: the project HEAD)'),
})

export type StartAttemptsRequest = z.output<typeof startAttemptsSchema>

export const pickAttemptSchema = z.strictObject({
  conversationId: z.string().min(1).describe('The attempt to keep: its conversation id'),
  keepOthers: z.boolean().optional().describe("Keep the other attempts' workspaces (default: removed)"),
})

export type PickAttemptRequest = z.output<typeof pickAttemptSchema>

export interface AttemptsServiceOptions extends AttemptCheckDeps {
  store: Store
  config: HangarConfig
  projects: Pick<ProjectService, 'get' | 'forNewConversation'>
  adapters: AdapterRegistry
  detectAgents: () => Promise<{ adapters: DetectedAdapter[] }>
  workspaces: Pick<WorkspaceService, 'forConversation' | 'deleteConversation' | 'removeForConversation'>
  submitRun: (userId: string, request: SubmitRunRequest) => Promise<Run>
  scheduler: Pick<Scheduler, 'cancel'>
  runs: Pick<RunService, 'appendEvents'>
  log?: Logger
}

export interface PickResult {
  group: AttemptGroup
  /** What became of the other attempts' workspaces (empty with keepOthers). */
  removed: WorkspaceRemoval[]
}

export function createAttemptsService(options: AttemptsServiceOptions) {
  const { store } = options
  const log = options.log ?? silentLogger
  // Checks under way in this process, so a shutdown (and a test) can wait for them.
  const inFlight = new Set<Promise<void>>()
  // A shutdown stops the checks under way (they go back to pending, and the next start-up runs them).
  const shutdown = new AbortController()

  function invalid(message: string, hint?: string): AppError {
    return new AppError('invalid_request', message, hint ? { hint } : {})
  }

  /** The same rules for every path (the REST body and MCP input are parsed with the schema too). */
  function checkRequest(input: StartAttemptsRequest): StartAttemptsRequest {
    const parsed = startAttemptsSchema.safeParse(input)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!
      const field = issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''
      throw invalid(`${field}${issue.message}`, 'e.g. { "prompt": "…", "agents": ["claude-code", "codex"] }')
    }
    if (parsed.data.baseRef?.startsWith('-'))
      throw invalid(
        `baseRef "${parsed.data.baseRef}" is not a branch or commit`,
        'a ref never starts with "-"',
      )
    return parsed.data
  }

  async function projectFor(userId: string, projectId: string | undefined): Promise<Project> {
    const project = await options.projects.forNewConversation(userId, projectId)
    if (!project) {
      throw invalid('attempts need a registered project', 'register one with hangar projects add PATH')
    }
    if (project.kind !== 'git') {
      throw invalid(
        `project ${project.name} is not a git repository: attempts work in worktrees and are compared by their diffs`,
        'git init and commit the project, then register it again',
      )
    }
    return project
  }

  /** The check command of a project: its own setting, else hangar.yaml's `projects.<name>.check`. */
  function checkCommand(project: Project): string | null {
    if (project.check) return project.check
    const configured = Object.hasOwn(options.config.projects, project.name)
      ? options.config.projects[project.name]?.check
      : undefined
    return configured ?? null
  }

  async function groupOf(userId: string, id: string): Promise<AttemptGroupRow> {
    const group = await store.forUser(userId).attempts.get(id)
    if (!group) throw new AppError('not_found', `no attempts ${id}`, { hint: 'see GET /api/attempts' })
    // A project the caller may no longer use hides its attempts as well (not found, as for others' ids).
    await options.projects.get(userId, group.projectId).catch((error: unknown) => {
      if (error instanceof AppError && error.code === 'not_found')
        throw new AppError('not_found', `no attempts ${id}`, { hint: 'see GET /api/attempts' })
      throw error
    })
    return group
  }

  async function view(userId: string, group: AttemptGroupRow): Promise<AttemptGroup> {
    const scope = store.forUser(userId)
    const rows = await scope.attempts.attempts(group.id)
    const attempts = await Promise.all(
      rows.map(async (row) =>
        attemptView(row, row.runId ? await scope.runs.get(row.runId) : undefined, group),
      ),
    )
    return {
      id: group.id,
      projectId: group.projectId,
      prompt: group.prompt,
      baseRef: group.baseRef,
      createdAt: group.createdAt,
      finished: attempts.every((attempt) => attempt.finished),
      pickedConversationId: group.pickedConversationId,
      pickedAt: group.pickedAt,
      attempts,
    }
  }

  /** Makes the conversations and worktrees, then queues the runs; a failure removes what was made. */
  async function makeAttempts(
    userId: string,
    project: Project,
    request: StartAttemptsRequest,
    command: string | null,
  ): Promise<AttemptGroupRow> {
    const scope = store.forUser(userId)
    const made: { conversationId: string; agent: string; workspaceId: string }[] = []
    const title = request.prompt.replace(/\s+/g, ' ').trim().slice(0, 70)
    try {
      for (const agent of request.agents) {
        const conversation = await scope.conversations.create({
          title: `${title} (${agent})`,
          profile: agent,
          project: project.name,
          projectId: project.id,
        })
        made.push({ conversationId: conversation.id, agent, workspaceId: '' })
        const workspace = await options.workspaces.forConversation(userId, conversation.id, {
          ...(request.baseRef && { baseRef: request.baseRef }),
        })
        made.at(-1)!.workspaceId = workspace.id
      }
      // The rows go first: a run that ends at once finds its attempt.
      const group = await scope.attempts.create({
        projectId: project.id,
        prompt: request.prompt,
        baseRef: request.baseRef ?? null,
        attempts: made.map((attempt) => ({ ...attempt, checkCommand: command })),
      })
      const queued: Run[] = []
      try {
        for (const attempt of made) {
          const run = await options.submitRun(userId, {
            conversationId: attempt.conversationId,
            agent: attempt.agent,
            prompt: request.prompt,
          })
          queued.push(run)
          await scope.attempts.setRun(attempt.conversationId, run.id)
        }
      } catch (error) {
        for (const run of queued) await options.scheduler.cancel(userId, run.id).catch(() => undefined)
        throw error
      }
      return group
    } catch (error) {
      for (const attempt of made) {
        await options.workspaces
          .deleteConversation(userId, attempt.conversationId)
          .catch((cleanup: unknown) =>
            log.warn('could not remove a half-made attempt', {
              conversationId: attempt.conversationId,
              cleanup,
            }),
          )
      }
      throw error
    }
  }

  /** After a run ended here: an attempt's check runs (once: the claim decides) and its event goes out. */
  function runEnded(
    userId: string,
    end: { runId: string; status: TerminalRunStatus },
    conversationId: string,
  ): void {
    if (shutdown.signal.aborted) return
    const work = (async () => {
      const scope = store.forUser(userId)
      const attempt = await scope.attempts.byConversation(conversationId)
      if (!attempt || (attempt.runId !== null && attempt.runId !== end.runId)) return
      if (!(await scope.attempts.claimCheck(conversationId))) return
      await finishAttempt(userId, attempt, end, options, shutdown.signal)
    })().catch((error: unknown) => log.error('attempt check failed', { conversationId, error }))
    inFlight.add(work)
    void work.finally(() => inFlight.delete(work))
  }

  return {
    /** Starts one attempt per agent; nothing is made when the request, an agent or the project is wrong. */
    async start(userId: string, input: StartAttemptsRequest): Promise<AttemptGroup> {
      const request = checkRequest(input)
      const project = await projectFor(userId, request.projectId)
      if (request.baseRef && !(await resolveCommit(project.path, request.baseRef))) {
        throw invalid(
          `project ${project.name} has no branch or commit "${request.baseRef}"`,
          'give one that exists',
        )
      }
      const { adapters } = await options.detectAgents()
      const userProfiles = await loadUserProfiles(store, userId)
      for (const agent of request.agents) {
        resolveAgent(agent, {
          config: options.config,
          registry: options.adapters,
          detected: adapters,
          userProfiles,
        })
      }
      const group = await makeAttempts(userId, project, request, checkCommand(project))
      return view(userId, group)
    },

    async get(userId: string, id: string): Promise<AttemptGroup> {
      return view(userId, await groupOf(userId, id))
    },

    /** The caller's groups in projects they may still use, newest first. */
    async list(userId: string): Promise<AttemptGroup[]> {
      const groups = await store.forUser(userId).attempts.list({ limit: 50 })
      const visible: AttemptGroup[] = []
      for (const group of groups) {
        const allowed = await options.projects.get(userId, group.projectId).then(
          () => true,
          () => false,
        )
        if (allowed) visible.push(await view(userId, group))
      }
      return visible
    },

    /**
     * Keeps one attempt; the others' runs are cancelled if still going and their workspaces removed
     * (branches Hangar made go too), unless `keepOthers`. A second pick of another attempt is a conflict.
     */
    async pick(userId: string, id: string, input: PickAttemptRequest): Promise<PickResult> {
      const group = await groupOf(userId, id)
      const scope = store.forUser(userId)
      const rows = await scope.attempts.attempts(group.id)
      if (!rows.some((row) => row.conversationId === input.conversationId)) {
        throw new AppError('not_found', `attempts ${id} have no conversation ${input.conversationId}`, {
          hint: `pick one of ${rows.map((row) => row.conversationId).join(', ')}`,
        })
      }
      if (group.pickedConversationId && group.pickedConversationId !== input.conversationId) {
        throw new AppError('conflict', `attempts ${id} were picked already: ${group.pickedConversationId}`)
      }
      await scope.attempts.pick(group.id, input.conversationId)
      const removed: WorkspaceRemoval[] = []
      if (!input.keepOthers) {
        for (const row of rows) {
          if (row.conversationId === input.conversationId || row.discardedAt) continue
          const run = row.runId ? await scope.runs.get(row.runId) : undefined
          if (run && !isTerminalRunStatus(run.status))
            await options.scheduler.cancel(userId, run.id).catch(() => undefined)
          removed.push(...(await options.workspaces.removeForConversation(userId, row.conversationId)))
          await scope.attempts.markDiscarded(row.conversationId)
        }
      }
      return { group: await view(userId, (await scope.attempts.get(group.id))!), removed }
    },

    /** The runs service's sink calls this with every stored batch: run-ends of attempts start checks. */
    onEvents(envelopes: readonly EventEnvelope[], meta: { userId: string; conversationId: string | null }) {
      if (!meta.conversationId) return
      for (const envelope of envelopes)
        if (envelope.type === 'run-end') runEnded(meta.userId, envelope, meta.conversationId)
    },

    /** At start-up: checks whose run ended while no process of this node was there to run them. */
    async recover(): Promise<void> {
      for (const pending of await store.pendingAttempts.list()) {
        const attempt = await store.forUser(pending.userId).attempts.byConversation(pending.conversationId)
        const run = attempt?.runId ? await store.forUser(pending.userId).runs.get(attempt.runId) : undefined
        if (run && isTerminalRunStatus(run.status))
          runEnded(pending.userId, { runId: run.id, status: run.status }, pending.conversationId)
      }
    },

    /** Stops the checks under way (back to pending) and waits for them: the runtime is closing. */
    async close(): Promise<void> {
      shutdown.abort()
      await this.settled()
    },

    /** Resolves when the checks under way in this process are done. */
    async settled(): Promise<void> {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight])
    },
  }
}

/** One attempt as shown side by side: its run's figures and its check's outcome. */
function attemptView(row: AttemptRow, run: Run | undefined, group: AttemptGroupRow): Attempt {
  const checking = row.checkStatus === 'running'
  const ended = run !== undefined && isTerminalRunStatus(run.status)
  const usage = run?.usage ?? null
  const started = run?.startedAt ? Date.parse(run.startedAt) : undefined
  const endedAt = run?.endedAt ? Date.parse(run.endedAt) : undefined
  return {
    conversationId: row.conversationId,
    agent: row.agent,
    runId: row.runId,
    workspaceId: row.workspaceId,
    status: checking ? 'checking' : (run?.status ?? 'queued'),
    finished: ended && row.finishedAt !== null,
    durationMs: started !== undefined && endedAt !== undefined ? Math.max(0, endedAt - started) : null,
    tokens: usage
      ? {
          input: usage.inputTokens,
          output: usage.outputTokens,
          cacheRead: usage.cacheReadTokens,
          cacheWrite: usage.cacheWriteTokens,
        }
      : null,
    costUsd: usage?.costUsd ?? run?.costUsd ?? null,
    costSource: usage?.costSource ?? 'unknown',
    filesChanged: row.filesChanged,
    additions: row.additions,
    deletions: row.deletions,
    check: {
      command: row.checkCommand,
      status: row.checkStatus,
      exitCode: row.checkExitCode,
      output: row.checkOutput,
    },
    picked: group.pickedConversationId === row.conversationId,
    discardedAt: row.discardedAt,
  }
}

export type AttemptsService = ReturnType<typeof createAttemptsService>
