// Runs of the built-in agent. Each belongs to a conversation (its messages are the loop's state): a new
// prompt appends a user message and runs the loop; a decision on the last open proposal of a run starts
// a continuation run (`continues: <runId>`) that resumes the loop from the stored messages.
import path from 'node:path'
import { loadProfileSkills, type PlacedSkills, placeSkills } from '../adapters/skills.js'
import { processAlive } from '../adapters/supervisor.js'
import { runAgentLoop } from '../agent/agent-loop.js'
import type { ConversationMemory } from '../agent/ports.js'
import { builtinSystemPrompt } from '../agent/system-prompt.js'
import type { ToolRegistry } from '../agent/tools/tool-registry.js'
import type { HangarConfig, ProfileConfig } from '../core/config.js'
import type { EventEnvelope, WriteClassification } from '../core/events.js'
import { AppError, describeError } from '../core/errors.js'
import { newId } from '../core/ids.js'
import { runUsage } from '../core/usage-cost.js'
import type { CredentialsService } from '../store/credentials-service.js'
import type { Run } from '../store/repositories/runs-repository.js'
import type { Store } from '../store/store.js'
import { type ActionsService, noteContinuation } from './actions-service.js'
import { resolveBuiltinModel } from './builtin-model.js'
import { builtinHandoff } from './handoff-source.js'
import { builtinHistory, type ForeignReplies } from './handoff-history.js'
import type { ModelProxy } from './model-proxy.js'
import type { ActiveRun, RunEnd, RunService } from './run-service.js'
import { loadUserProfiles, profileNamed } from './resolve-agent.js'
import { type RunActivity, runLimitsFor, startRunLimits } from './run-limits.js'
import { sandboxRoleOf } from './run-project.js'
import { commandSandboxRecord, sandboxSettingsFor } from '../sandbox/run-sandbox.js'

export const SAFE_CLASSIFICATIONS: readonly WriteClassification[] = ['safe_create', 'safe_update']

export interface BuiltinRunnerOptions {
  store: Store
  runs: RunService
  actions: ActionsService
  tools: ToolRegistry
  credentials: CredentialsService
  config: HangarConfig
  env: Readonly<Record<string, string | undefined>>
  /** Where a profile's skills paths are resolved from (as for CLI runs). */
  projectDir: string
  /** The LLM proxy the agent's model traffic goes through (absent: straight to the provider). */
  modelProxy?: Pick<ModelProxy, 'routeBuiltin' | 'closeRun' | 'builtinFeedsNotDelivered'>
  /** Run limits: which runs are watched, and their model requests in flight. */
  activity?: RunActivity
}

export interface BuiltinStart {
  /** Profile name, or `builtin`. */
  agent: string
  profile: ProfileConfig | null
  prompt: string
  cwd: string
  project: string
  /** The registered project it works in, if any. */
  projectId?: string | null
  model?: string | undefined
  /** Continue the conversation of this earlier builtin run. */
  resumeRunId?: string | undefined
  /** `--yes`: auto-approve safe_* proposals for this run. */
  approveSafe?: boolean
  /** `hangar run --timeout`: the wall-clock limit instead of the profile's. */
  timeout?: string | undefined
}

export interface RunHooks {
  onDelivered?: (envelopes: EventEnvelope[]) => void
  signal?: AbortSignal
}

/**
 * A conversation marked running whose run's owner process is gone (a crash, a SIGKILL) is released: the
 * run is marked interrupted. Only a provably dead owner — same node, pid no longer alive — counts.
 */
async function releaseIfOwnerGone(
  store: Store,
  runs: RunService,
  userId: string,
  conversationId: string,
): Promise<boolean> {
  const scope = store.forUser(userId)
  const active = (await scope.runs.list({ conversationId, limit: 20 })).filter((run) =>
    ['queued', 'preparing', 'running', 'finalizing'].includes(run.status),
  )
  for (const run of active) {
    const gone = run.owner.node === runs.owner.node && run.owner.pid !== null && !processAlive(run.owner.pid)
    if (!gone) return false
    await runs.interrupt(userId, run.id, 'its process ended without finishing the run')
  }
  await scope.conversations.update(conversationId, { status: 'idle' })
  return true
}

/** The conversation's messages, with other agents' replies where they answered (handoff-history.ts). */
function conversationMemory(
  store: Store,
  userId: string,
  conversationId: string,
  runId: string,
  handoff: Pick<ForeignReplies, 'replies' | 'runs'>,
): ConversationMemory {
  const conversations = store.forUser(userId).conversations
  return {
    load: async () =>
      builtinHistory(await conversations.listMessages(conversationId), handoff.replies, handoff.runs),
    append: async (message) => {
      await conversations.appendMessage(conversationId, message, runId)
    },
  }
}

export function createBuiltinRunner(options: BuiltinRunnerOptions) {
  const { store, runs, actions } = options

  async function execute(
    userId: string,
    active: ActiveRun,
    input: {
      conversationId: string
      profile: ProfileConfig | null
      model?: string | undefined
      project: string
      approveSafe: boolean
      timeout?: string | undefined
    },
    hooks: RunHooks,
  ): Promise<Run> {
    const run = active.run
    const conversations = store.forUser(userId).conversations
    let end: RunEnd
    let skills: PlacedSkills | undefined
    // Idle here: no model stream progress (events) and no tool running; a trip aborts `signal`.
    const limits = runLimitsFor(input.profile, input.timeout)
    const limited = startRunLimits(active, { limits, activity: options.activity, signal: hooks.signal })
    const { signal } = limited
    const runningTools = new Map<string, () => void>()
    try {
      // The same loader as CLI runs; the built-in agent takes them by prompt only (assets go to the workspace).
      const loaded = await loadProfileSkills(options.projectDir, input.profile?.skills)
      skills = await placeSkills(loaded, { kind: 'prompt' }, run.cwd, '', run.id)
      const proxy = await options.modelProxy?.routeBuiltin(userId, run.id, run.agent, input.profile)
      const model = await resolveBuiltinModel(
        {
          config: options.config,
          profile: input.profile,
          model: input.model,
          env: options.env,
          credentials: options.credentials,
          userId,
          profileName: run.agent,
        },
        proxy,
      )
      // Its commands run in the profile's sandbox: one that cannot be had fails the run here.
      const role = await sandboxRoleOf(store, userId)
      const sandbox = await commandSandboxRecord(
        sandboxSettingsFor(input.profile, options.config, input.project, role),
        options.env,
      )
      await conversations.update(input.conversationId, { status: 'running' })
      await active.begin({
        type: 'run-start',
        agent: run.agent,
        adapter: 'builtin',
        sandbox,
        provider: model.provider,
        model: model.model,
        cwd: run.cwd,
        proxied: proxy !== undefined,
        ...(skills.strategy === 'prompt' && {
          skills: { strategy: 'prompt' as const, names: loaded.map((skill) => skill.name) },
        }),
      })
      // Other agents' turns since its own: read once, they do not change while this run goes.
      const handoff = await builtinHandoff(store.forUser(userId), input.conversationId, run)
      if (handoff.event) active.emit(handoff.event)
      // The built-in agent's session is its conversation: stored now, as CLI runs store theirs once known.
      await active.setSession(input.conversationId)
      if (!proxy) {
        const warning = await options.modelProxy?.builtinFeedsNotDelivered(userId, run.agent, input.profile)
        if (warning) active.emit(warning)
      }
      const result = await runAgentLoop({
        llm: model.client,
        model: model.model,
        system: builtinSystemPrompt({ workspace: run.cwd, project: input.project, skills: skills.prompt }),
        tools: options.tools,
        memory: conversationMemory(store, userId, input.conversationId, run.id, handoff),
        desk: actions.createDesk(
          userId,
          { runId: run.id, conversationId: input.conversationId },
          `user:${userId}`,
        ),
        context: { workspace: run.cwd, signal },
        emit: (event) => {
          limited.touch()
          if (event.type === 'tool-call') runningTools.set(event.toolCallId, limited.busy())
          if (event.type === 'tool-result') runningTools.get(event.toolCallId)?.()
          active.emit(event)
        },
        redact: store.redactor.text,
        autoApprove: [
          ...new Set([
            ...(input.profile?.autoApprove ?? []),
            ...(input.approveSafe ? SAFE_CLASSIFICATIONS : []),
          ]),
        ],
        signal,
      })
      const { outcome, usage } = result
      const common = { sessionId: input.conversationId, usage }
      end =
        outcome.status === 'awaiting_confirmation'
          ? {
              status: 'awaiting_confirmation',
              reason: `${outcome.actionIds.length} proposal(s) wait for a decision`,
              ...common,
            }
          : outcome.status === 'failed'
            ? { status: 'failed', reason: outcome.reason, ...common }
            : outcome.status === 'cancelled'
              ? { status: 'cancelled', reason: 'cancelled by the user', ...common }
              : { status: 'succeeded', ...common }
    } catch (error) {
      const appError =
        error instanceof AppError
          ? error
          : new AppError('internal', 'the built-in agent failed to start', { cause: error })
      active.emit({
        type: 'error',
        code: appError.code,
        message: appError.message,
        retryable: appError.retryable,
      })
      end = {
        status: 'failed',
        reason: describeError(appError),
      }
    }
    for (const release of runningTools.values()) release()
    end = limited.settle(end)
    await skills?.cleanup().catch(() => {})
    // A proxied run's totals are what the proxy metered; its token ends with the run.
    const metered = await options.modelProxy?.closeRun(userId, run.id).catch(() => undefined)
    const usage = runUsage(metered, end.usage)
    if (usage) end.usage = usage
    await conversations.update(input.conversationId, {
      status: end.status === 'awaiting_confirmation' ? 'awaiting_confirmation' : 'idle',
    })
    return active.end(end)
  }

  return {
    /** Runs the loop in a claimed run of a conversation whose new message is already stored. */
    execute,
    /** A prompt: a new conversation, or the next message of a resumed one. */
    async start(userId: string, request: BuiltinStart, hooks: RunHooks = {}): Promise<Run> {
      const scope = store.forUser(userId)
      let conversationId: string
      if (request.resumeRunId) {
        const previous = await scope.runs.get(request.resumeRunId)
        if (!previous?.conversationId) {
          throw new AppError('not_found', `no built-in agent run ${request.resumeRunId} to resume`)
        }
        conversationId = previous.conversationId
        const conversation = await scope.conversations.get(conversationId)
        if (
          conversation?.status === 'running' &&
          !(await releaseIfOwnerGone(store, runs, userId, conversationId))
        ) {
          throw new AppError('conflict', 'that conversation has a run in progress', {
            hint: 'wait for it or cancel it',
          })
        }
        // A new message while proposals wait supersedes them (each gets its tool result first).
        await actions.supersede(userId, conversationId, `user:${userId}`)
      } else {
        const title = request.prompt.replace(/\s+/g, ' ').trim().slice(0, 80)
        conversationId = (
          await scope.conversations.create({
            title,
            profile: request.agent,
            project: request.project,
            projectId: request.projectId ?? null,
          })
        ).id
      }
      // The user message names its run, as a conversation message's does (submit-run.ts).
      const runId = newId('run')
      await scope.conversations.appendMessage(
        conversationId,
        { role: 'user', content: [{ type: 'text', text: request.prompt }] },
        runId,
      )
      const active = await runs.start(
        userId,
        {
          id: runId,
          agent: request.agent,
          adapter: 'builtin',
          model: request.model ?? request.profile?.model ?? null,
          prompt: request.prompt,
          cwd: request.cwd,
          conversationId,
          projectId: request.projectId ?? null,
          ...(request.resumeRunId && { continues: request.resumeRunId }),
        },
        hooks.onDelivered,
      )
      return execute(
        userId,
        active,
        {
          conversationId,
          profile: request.profile,
          model: request.model,
          project: request.project,
          approveSafe: request.approveSafe ?? false,
          timeout: request.timeout,
        },
        hooks,
      )
    },

    /** After the last open proposal of `runId` was decided: a continuation run resumes the loop. */
    async continueAfter(userId: string, runId: string, hooks: RunHooks = {}): Promise<Run> {
      const previous = await store.forUser(userId).runs.get(runId)
      if (!previous?.conversationId) throw new AppError('not_found', `no built-in agent run ${runId}`)
      // As the first run resolved it: hangar.yaml's profile, else the user's own (made in the UI or API).
      const profile =
        profileNamed(previous.agent, options.config, await loadUserProfiles(store, userId)) ?? null
      const active = await runs.start(
        userId,
        {
          agent: previous.agent,
          adapter: 'builtin',
          model: previous.model,
          prompt: '',
          cwd: previous.cwd,
          conversationId: previous.conversationId,
          projectId: previous.projectId,
          continues: previous.id,
        },
        hooks.onDelivered,
      )
      await noteContinuation(store, userId, previous.id, active.run.id)
      return execute(
        userId,
        active,
        {
          conversationId: previous.conversationId,
          profile,
          model: previous.model ?? undefined,
          project: path.basename(previous.cwd),
          approveSafe: false,
        },
        hooks,
      )
    },
  }
}

export type BuiltinRunner = ReturnType<typeof createBuiltinRunner>
