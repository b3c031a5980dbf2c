// Submitting a run (POST /api/runs, a conversation message, MCP start_run): everything is validated
// first — cwd, dependencies, conversation, agent, and the workspace the run will work in — and only then
// is a queued run stored and the scheduler woken. A message while the conversation has a run queued or
// running is a conflict. A conversation's run works in the conversation's workspace (made on its first
// message); a run without one works in place in `cwd`, or with `isolate` in a one-off workspace. `cwd`
// must lie in an allowed root and outside the data dir (workspace-policy.ts), and only the owner works in
// place: anyone else's run gets a one-off workspace even when it asked for none. Every run works on a
// project the caller may use (project-service.ts): its conversation's, the one named, or the one holding
// `cwd` — checked before anything is made, so a refused run leaves nothing behind.
import { existsSync } from 'node:fs'
import path from 'node:path'
import { z } from 'zod'
import type { DetectedAdapter } from '../adapters/detection.js'
import type { AdapterRegistry } from '../adapters/registry.js'
import type { HangarConfig } from '../core/config.js'
import { AppError } from '../core/errors.js'
import { newId } from '../core/ids.js'
import type { Run } from '../store/repositories/runs-repository.js'
import type { Store } from '../store/store.js'
import { isInside } from '../workspaces/allowed-roots.js'
import type { PreparedWorkspace, WorkspaceService } from '../workspaces/workspace-service.js'
import type { Project } from '../core/api-types.js'
import type { ProjectService } from '../projects/project-service.js'
import type { ActionsService } from './actions-service.js'
import type { BuiltinReadiness } from './builtin-readiness.js'
import { type ResolvedAgent, resolveAgentOrDefault, userProfilesFor } from './resolve-agent.js'
import { assertResumable, releaseIfOwnerGone } from './resume-run.js'
import type { RunService } from './run-service.js'
import type { Scheduler } from './scheduler.js'
import type { WorkspacePolicy } from './workspace-policy.js'
import { createWorkspaceGate } from './workspace-gate.js'

export const submitRunSchema = z.strictObject({
  agent: z.string().min(1).optional(),
  prompt: z.string().min(1, 'the prompt must not be empty').max(1_000_000),
  cwd: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Where the run works, relative to the project: inside the project or server.allowedRoots, never the data dir',
    ),
  isolate: z
    .boolean()
    .optional()
    .describe('A one-off worktree instead of in place (always, for anyone but the owner)'),
  model: z.string().min(1).optional(),
  projectId: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The project to work on (prj_…); cwd is then relative to it. A conversation's run works on its own",
    ),
  conversationId: z.string().min(1).optional(),
  dependsOn: z.array(z.string().min(1)).max(100).optional(),
  resumeRunId: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Continue that ended run's agent session (an interrupted one, say), in its workspace and conversation",
    ),
})

export type SubmitRunRequest = z.output<typeof submitRunSchema>

export interface SubmitDeps {
  store: Store
  runs: RunService
  scheduler: Pick<Scheduler, 'kick'>
  actions: Pick<ActionsService, 'supersede'>
  config: HangarConfig
  adapters: AdapterRegistry
  detectAgents: () => Promise<{ adapters: DetectedAdapter[] }>
  /** Whether the built-in agent can run for a user (a request naming no agent gets one that can). */
  builtinReadiness: (userId: string) => Promise<BuiltinReadiness>
  workspaces: Pick<WorkspaceService, 'forConversation' | 'isolated' | 'adopt' | 'remove'>
  /** Where runs may work, and who works in place. */
  policy: Pick<WorkspacePolicy, 'resolveRunDirectory' | 'worksInPlace'>
  /** Which project a run works on, and whether its caller may use it. */
  projects: Pick<ProjectService, 'get' | 'forRun' | 'forConversation'>
  projectDir: string
}

/** What POST /api/runs and conversation messages share: validation, then a queued run. */
export function createRunSubmitter(runtime: SubmitDeps) {
  const { store } = runtime
  const gate = createWorkspaceGate(store)
  async function submitRun(userId: string, submitted: SubmitRunRequest): Promise<Run> {
    const scope = store.forUser(userId)
    const resumed = submitted.resumeRunId ? await resumedRun(userId, submitted) : undefined
    const request = resumed?.request ?? submitted
    if (request.conversationId && (request.isolate || request.cwd || request.projectId)) {
      throw new AppError(
        'invalid_request',
        `${request.isolate ? 'isolate' : request.cwd ? 'cwd' : 'projectId'} does not apply to a conversation's run: it works in the conversation's workspace`,
        { hint: 'leave it out (see GET /api/workspaces for where the conversation works)' },
      )
    }
    // A project the caller may not see is not found before anything else is looked at.
    const named = request.projectId ? await runtime.projects.get(userId, request.projectId) : undefined
    // A resumed run works where its session's files are (checked when that run was submitted).
    const cwd = resumed?.cwd ?? (await runtime.policy.resolveRunDirectory(request.cwd, named?.path))
    if (named && !resumed && !isInside(named.path, cwd)) {
      throw new AppError('invalid_request', `cwd ${cwd} is outside project ${named.name} (${named.path})`, {
        hint: 'give a directory inside the project, relative to it',
      })
    }
    const inPlace = resumed ? true : !request.isolate && (await runtime.policy.worksInPlace(userId))
    for (const dependency of request.dependsOn ?? []) {
      if (!(await scope.runs.get(dependency)))
        throw new AppError('not_found', `dependsOn: no run ${dependency}`)
    }
    const conversation = request.conversationId
      ? await scope.conversations.get(request.conversationId)
      : undefined
    if (request.conversationId && !conversation)
      throw new AppError('not_found', `no conversation ${request.conversationId}`)
    const project = conversation
      ? await runtime.projects.forConversation(userId, conversation)
      : await runtime.projects.forRun(
          userId,
          resumed?.previous.projectId
            ? { projectId: resumed.previous.projectId, cwd }
            : { projectId: named?.id, cwd },
        )
    const { adapters } = await runtime.detectAgents()
    const requested = request.agent ?? conversation?.profile
    const agent = await resolveAgentOrDefault(requested, {
      config: runtime.config,
      registry: runtime.adapters,
      detected: adapters,
      userProfiles: await userProfilesFor(requested, runtime.config, runtime.store, userId),
      builtinReadiness: () => runtime.builtinReadiness(userId),
    })
    if (resumed) {
      const adapterId = agent.kind === 'builtin' ? 'builtin' : agent.adapter.id
      assertResumable(
        resumed.previous,
        adapterId,
        agent.kind === 'cli' ? agent.adapter.capabilities : undefined,
      )
    }
    if (conversation) {
      const active = await scope.runs.list({ conversationId: conversation.id, limit: 20 })
      if (active.some((run) => ['queued', 'preparing', 'running', 'finalizing'].includes(run.status))) {
        throw new AppError('conflict', 'the conversation has a run queued or running', {
          hint: 'wait for it to end or cancel it, then send the message again',
        })
      }
    }
    // The workspace is the last check (a worktree moved to another branch is a conflict) and its
    // creation the first write: a failure here leaves no message and no run behind.
    let workspace: PreparedWorkspace | undefined
    if (conversation) {
      workspace = await runtime.workspaces.forConversation(userId, conversation.id)
      if (workspace.kind === 'in_place') await assertMayWorkInPlace(userId, workspace)
    } else if (!inPlace) workspace = await runtime.workspaces.isolated(userId, cwd)
    try {
      return await enqueue(userId, request, {
        conversationId: conversation?.id,
        project,
        agent,
        workspace,
        cwd,
        continues: resumed?.previous.id,
      })
    } catch (error) {
      // A one-off workspace nobody will run in is not left behind.
      if (workspace && !conversation)
        await runtime.workspaces.remove(userId, workspace.id).catch(() => undefined)
      throw error
    }
  }

  /**
   * A resume: the run it continues (the caller's own: another user's id is not found), and the request as
   * that run's — same agent unless another profile of its adapter is named, same conversation, or the same
   * directory for a run without one.
   */
  async function resumedRun(
    userId: string,
    request: SubmitRunRequest,
  ): Promise<{ previous: Run; request: SubmitRunRequest; cwd: string | undefined }> {
    const runs = store.forUser(userId).runs
    const found = await runs.get(request.resumeRunId!)
    if (!found) throw new AppError('not_found', `resumeRunId: no run ${request.resumeRunId}`)
    const previous = await releaseIfOwnerGone(runtime.runs, runs, userId, found)
    const where = request.isolate
      ? 'isolate'
      : request.cwd
        ? 'cwd'
        : request.projectId
          ? 'projectId'
          : undefined
    if (where) {
      throw new AppError(
        'invalid_request',
        `${where} does not apply to a resumed run: it works where run ${previous.id} worked`,
        {
          hint: 'leave it out',
        },
      )
    }
    if (request.conversationId && request.conversationId !== previous.conversationId) {
      throw new AppError(
        'invalid_request',
        `run ${previous.id} does not belong to conversation ${request.conversationId}`,
      )
    }
    const conversationId = previous.conversationId ?? undefined
    if (!conversationId && !existsSync(previous.cwd)) {
      throw new AppError('conflict', `run ${previous.id} worked in ${previous.cwd}, which is gone`, {
        hint: 'start a new run instead',
      })
    }
    return {
      previous,
      request: {
        ...request,
        agent: request.agent ?? previous.agent,
        ...(conversationId && { conversationId }),
      },
      cwd: conversationId ? undefined : previous.cwd,
    }
  }

  /** A conversation that adopted its first run's directory in place (made before these rules). */
  async function assertMayWorkInPlace(userId: string, workspace: PreparedWorkspace): Promise<void> {
    await runtime.policy.resolveRunDirectory(workspace.cwd)
    if (!(await runtime.policy.worksInPlace(userId))) {
      throw new AppError('conflict', `workspace ${workspace.id} works in place in the operator's checkout`, {
        hint: `remove it (DELETE /api/workspaces/${workspace.id}); the next message gets a worktree of its own`,
      })
    }
  }

  async function enqueue(
    userId: string,
    request: SubmitRunRequest,
    context: {
      conversationId: string | undefined
      project: Project | null
      agent: ResolvedAgent
      workspace: PreparedWorkspace | undefined
      cwd: string
      /** The run this one resumes. */
      continues?: string | undefined
    },
  ): Promise<Run> {
    const scope = store.forUser(userId)
    const { agent, workspace } = context
    // The gate is on the directory, whoever ran there: its host copy may hold changes not brought back,
    // which a new run would ship over (or change locally under the sync-back).
    await gate.assertOpen(userId, workspace?.cwd ?? context.cwd)
    let conversationId = context.conversationId
    if (conversationId) {
      const conversation = await scope.conversations.get(conversationId)
      if (conversation && agent.name !== conversation.profile)
        await scope.conversations.update(conversationId, { profile: agent.name })
      await runtime.actions.supersede(userId, conversationId, `user:${userId}`)
    } else if (agent.kind === 'builtin') {
      // The built-in agent keeps its turns in a conversation; it works where this run works.
      const title = request.prompt.replace(/\s+/g, ' ').trim().slice(0, 80)
      conversationId = (
        await scope.conversations.create({
          title,
          profile: agent.name,
          project: context.project?.name ?? path.basename(runtime.projectDir),
          projectId: context.project?.id ?? null,
        })
      ).id
      await runtime.workspaces.adopt(
        userId,
        conversationId,
        workspace ? { workspaceId: workspace.id } : { inPlace: context.cwd },
      )
    }
    // The user message names its run, so the next agent knows which run answered it (handoff-history.ts).
    const runId = newId('run')
    if (conversationId) {
      await scope.conversations.appendMessage(
        conversationId,
        { role: 'user', content: [{ type: 'text', text: request.prompt }] },
        runId,
      )
    }
    const run = await runtime.runs.enqueue(userId, {
      id: runId,
      agent: agent.name,
      adapter: agent.kind === 'builtin' ? 'builtin' : agent.adapter.id,
      model: request.model ?? agent.profile?.model ?? null,
      prompt: request.prompt,
      cwd: workspace?.cwd ?? context.cwd,
      conversationId: conversationId ?? null,
      projectId: context.project?.id ?? null,
      continues: context.continues ?? null,
      dependsOn: request.dependsOn ?? [],
    })
    runtime.scheduler.kick()
    return run
  }

  return submitRun
}
