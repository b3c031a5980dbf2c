// The run scheduler of a daemon: runs are submitted as `queued`, then claimed (oldest first) when their
// dependencies have succeeded, their profile has a free slot (per-profile concurrency, default 1) and
// the daemon is under its global limit. A hangar.yaml profile's slots are shared by every user; a profile
// made in the UI or API is its user's own, so its concurrency counts that user's runs only. A claimed run
// is prepared and executed through its adapter (or the built-in agent) and finalized. On start-up it
// marks the runs this node owned that were still going as `interrupted` and reaps their process groups —
// never another live owner's.
import path from 'node:path'
import type { DetectedAdapter } from '../adapters/detection.js'
import { endpointForAdapter } from '../adapters/model-endpoint.js'
import type { AdapterRegistry } from '../adapters/registry.js'
import { loadProfileSkills } from '../adapters/skills.js'
import { removeLeftoverPlacements } from '../adapters/skill-placements.js'
import { reapProcessGroup, type Supervisor } from '../adapters/supervisor.js'
import type { HangarConfig } from '../core/config.js'
import { isAdapterId } from '../core/adapter-ids.js'
import { AppError } from '../core/errors.js'
import { isTerminalRunStatus } from '../core/events.js'
import type { ModelProxy } from './model-proxy.js'
import type { Logger } from '../core/logger.js'
import type { Run } from '../store/repositories/runs-repository.js'
import type { Store } from '../store/store.js'
import type { SshTargets } from '../workspaces/ssh/ssh-targets.js'
import type { BuiltinRunner } from './builtin-runs.js'
import { executeCliRun } from './execute-cli-run.js'
import { projectNameOfRun, sandboxContextOfRun } from './run-project.js'
import { sandboxSettingsFor } from '../sandbox/run-sandbox.js'
import type { WorkspaceLifecycle } from '../workspaces/lifecycle/workspace-lifecycle.js'
import { runLifecycle } from './workspace-setup.js'
import { cliTimeoutSeconds, type RunActivity, runLimitsFor, startRunLimits } from './run-limits.js'
import {
  loadUserProfiles,
  NO_USER_PROFILES,
  needsUserProfiles,
  resolveAgent,
  type UserProfiles,
} from './resolve-agent.js'
import { runToResume } from './resume-run.js'
import { cliHandoff } from './handoff-source.js'
import type { ActiveRun, RunEnd, RunService } from './run-service.js'
import { ownerGone } from './run-ownership.js'
import { createWorkspaceGate, holderAmong, mayClearItself } from './workspace-gate.js'

export interface SchedulerOptions {
  store: Store
  runs: RunService
  registry: AdapterRegistry
  detectAgents: () => Promise<{ adapters: DetectedAdapter[] }>
  builtin: BuiltinRunner
  supervisor: Supervisor
  config: HangarConfig
  env: Readonly<Record<string, string | undefined>>
  dataDir: string
  projectDir: string
  /** Connections to the SSH targets of hangar.yaml. */
  targets: SshTargets
  /** The LLM proxy: each run's model endpoint and metering. */
  modelProxy: ModelProxy
  /** Run limits: which runs are watched, and their model requests in flight. */
  activity?: RunActivity
  /** The projects' workspace lifecycle: setup before a workspace's first agent turn, its ports. */
  lifecycle?: WorkspaceLifecycle
  log: Logger
}

const FAILED_DEPENDENCY = new Set(['failed', 'cancelled', 'interrupted'])

/** The concurrency slot a run takes: its agent's, shared by all users or (`perUser`) its user's own. */
interface Slot {
  agent: string
  max: number
  perUser: boolean
}

/** hangar.yaml's profile, else the user's own (made in the UI or API), else a bare adapter id (limit 1). */
function slotFor(run: Run, config: HangarConfig, userProfiles: UserProfiles): Slot {
  const configured = config.agents[run.agent]
  if (configured) return { agent: run.agent, max: configured.concurrency, perUser: false }
  if (isAdapterId(run.agent)) return { agent: run.agent, max: 1, perUser: false }
  return { agent: run.agent, max: userProfiles[run.agent]?.concurrency ?? 1, perUser: true }
}

const slotKey = (userId: string, slot: Slot) => (slot.perUser ? `${slot.agent}@${userId}` : slot.agent)

export function createScheduler(options: SchedulerOptions) {
  const { store, runs, log } = options
  const running = new Map<string, { slot: string; controller: AbortController; done: Promise<void> }>()
  const gate = createWorkspaceGate(store)
  let scheduling: Promise<void> | undefined
  let again = false
  let stopped = false
  let timer: NodeJS.Timeout | undefined

  /** `userProfiles`: the user's own profiles as the scheduling pass read them (or none, when not needed). */
  async function execute(
    userId: string,
    active: ActiveRun,
    userProfiles: UserProfiles,
    signal: AbortSignal,
  ): Promise<void> {
    const run = active.run
    const conversations = store.forUser(userId).conversations
    try {
      // Queued before its workspace's host copy was left holding another run's changes: refused now.
      await gate.assertOpen(userId, run.cwd, run.id)
      const { adapters } = await options.detectAgents()
      const agent = resolveAgent(run.agent, {
        config: options.config,
        registry: options.registry,
        detected: adapters,
        userProfiles,
      })
      if (agent.kind === 'builtin') {
        if (!run.conversationId)
          throw new AppError('invalid_request', 'a built-in agent run needs a conversation')
        const lifecycle = await runLifecycle(options.lifecycle, userId, active, { env: options.env, signal })
        const failedSetup = await lifecycle.setup?.({ target: 'local', dir: run.cwd })
        if (failedSetup) {
          await active.end(failedSetup)
          return
        }
        await options.builtin.execute(
          userId,
          active,
          {
            conversationId: run.conversationId,
            profile: agent.profile,
            model: run.model ?? undefined,
            project: await projectNameOfRun(store, run, options.projectDir),
            approveSafe: false,
          },
          { signal },
        )
        return
      }
      if (run.conversationId) await conversations.update(run.conversationId, { status: 'running' })
      const endpoint = endpointForAdapter(agent.adapter, options.env, options.config.providers)
      const target = options.targets.forProfile(agent.profile?.target)
      const skills = await loadProfileSkills(options.projectDir, agent.profile?.skills)
      const scope = store.forUser(userId)
      const resumed = agent.adapter.capabilities.resume ? await runToResume(scope.runs, run) : undefined
      // What other agents did in the conversation that this one has not seen goes before the message.
      const handoff = await cliHandoff(scope, run, resumed, agent.adapter.capabilities.contextWindowHint)
      const limits = runLimitsFor(agent.profile)
      // A tripped limit cancels as the user's cancel does, and the run ends failed (run-limits.ts).
      const limited = startRunLimits(active, { limits, activity: options.activity, signal })
      // Setup counts against the run's limits, and a setup at work is not an idle run.
      const lifecycle = await runLifecycle(options.lifecycle, userId, active, {
        env: options.env,
        signal: limited.signal,
        busy: limited.busy,
      })
      const running = executeCliRun(
        active,
        {
          agent: agent.name,
          adapter: agent.adapter,
          executable: agent.detected.executable!,
          // Earlier runs' prompts are stored as written: quoted here, they are redacted as stored messages are.
          prompt: handoff ? `${store.redactor.text(handoff.text)}\n\n${run.prompt}` : run.prompt,
          handoff: handoff?.event,
          cwd: run.cwd,
          model: run.model ?? agent.profile?.model ?? endpoint?.model,
          endpoint,
          resumeSessionId: resumed?.sessionId ?? undefined,
          extraArgs: agent.profile?.cliArgs ?? [],
          permissions: agent.profile?.permissions,
          skills,
          isolateHome: agent.profile?.isolateHome ?? false,
          // HANGAR_PORT and HANGAR_PORT_COUNT of the workspace, on a target too.
          env: { ...options.env, ...lifecycle.variables },
          beforeAgent: lifecycle.setup,
          sandbox: {
            settings: await (async () => {
              const context = await sandboxContextOfRun(store, run, userId, options.projectDir)
              return sandboxSettingsFor(agent.profile, options.config, context.project, context.role)
            })(),
            dataDir: options.dataDir,
            log,
          },
          timeoutSeconds: cliTimeoutSeconds(limits),
          target,
          route: options.modelProxy.forCliRun({
            userId,
            agent: agent.name,
            profile: agent.profile,
            adapter: agent.adapter,
            direct: endpoint,
            remote: target !== undefined,
          }),
        },
        {
          supervisor: limited.reporting(options.supervisor),
          signal: limited.signal,
          runFilesRoot: path.join(options.dataDir, 'runs'),
        },
      )
      const end: RunEnd = await limited.finish(running)
      await active.end(end)
    } catch (error) {
      const appError =
        error instanceof AppError
          ? error
          : new AppError('internal', 'the run failed to start', { cause: error })
      if (!(error instanceof AppError)) log.error('run failed to start', { runId: run.id, error })
      active.emit({
        type: 'error',
        code: appError.code,
        message: appError.message,
        retryable: appError.retryable,
      })
      await active.end({ status: signal.aborted ? 'cancelled' : 'failed', reason: appError.message })
    } finally {
      if (run.conversationId) {
        const conversation = await conversations.get(run.conversationId)
        if (conversation?.status === 'running')
          await conversations.update(run.conversationId, { status: 'idle' })
      }
    }
  }

  /**
   * A run cancelled because the daemon stops (`hangar down`, SIGTERM) was not cancelled by anyone: it ends
   * `interrupted`, as after a crash, and can be resumed.
   */
  function endsWithDaemon(active: ActiveRun): ActiveRun {
    return {
      ...active,
      end: (end) =>
        active.end(
          stopped && end.status === 'cancelled'
            ? { ...end, status: 'interrupted', reason: 'the daemon stopped before the run finished' }
            : end,
        ),
    }
  }

  async function failForDependency(
    userId: string,
    run: Run,
    dependency: string,
    status: string,
  ): Promise<void> {
    const active = await runs.claim(userId, run.id)
    if (!active) return
    const reason = `dependency ${dependency} ${status}`
    active.emit({ type: 'error', code: 'dependency_failed', message: reason, retryable: false })
    await active.end({ status: 'failed', reason: `dependency_failed: ${reason}` })
  }

  async function scheduleOnce(): Promise<void> {
    const queued = await store.runQueue.queued(runs.owner.node)
    const statuses = await store.runQueue.statuses([...new Set(queued.flatMap((run) => run.dependsOn))])
    const unfinalized = queued.length > 0 ? await store.runQueue.unfinalized() : []
    // Users' own profiles, read once per pass (they may change between passes), and only for a run whose
    // agent may be one of them.
    const profilesOf = new Map<string, Promise<UserProfiles>>()
    const userProfiles = (run: Run & { userId: string }): Promise<UserProfiles> => {
      if (!needsUserProfiles(run.agent, options.config)) return Promise.resolve(NO_USER_PROFILES)
      let profiles = profilesOf.get(run.userId)
      if (!profiles) profilesOf.set(run.userId, (profiles = loadUserProfiles(store, run.userId)))
      return profiles
    }
    for (const run of queued) {
      if (stopped || running.size >= options.config.server.maxConcurrentRuns) return
      // A dependency whose workspace finalize failed is not a failure yet: it holds this run until a
      // retried finalize succeeds (or the user cancels).
      const failedDependency = run.dependsOn.find((id) => {
        const state = statuses.get(id)
        return state !== undefined && FAILED_DEPENDENCY.has(state.status) && state.finalize !== 'failed'
      })
      if (failedDependency) {
        await failForDependency(run.userId, run, failedDependency, statuses.get(failedDependency)!.status)
        continue
      }
      if (!run.dependsOn.every((id) => statuses.get(id)?.status === 'succeeded')) continue
      // Its workspace's host copy holds another run's changes: it waits while that run is going or its
      // changes are being brought back; a failed finalize (the user's to retry) fails it at start.
      const holder = holderAmong(unfinalized, run.cwd, run.id)
      if (holder && mayClearItself(holder)) continue
      const profiles = await userProfiles(run)
      const slot = slotFor(run, options.config, profiles)
      const key = slotKey(run.userId, slot)
      // Full here already: no need to ask the store. Otherwise the claim counts the agent's active runs on
      // every node sharing the store, so the limit holds across the cluster.
      const busy = [...running.values()].filter((entry) => entry.slot === key).length
      if (busy >= slot.max) continue
      const active = await runs.claim(run.userId, run.id, undefined, slot)
      if (!active) continue
      const controller = new AbortController()
      const done = execute(run.userId, endsWithDaemon(active), profiles, controller.signal).finally(() => {
        running.delete(run.id)
        kick()
      })
      running.set(run.id, { slot: key, controller, done })
    }
  }

  /** Schedules now; calls while a pass is under way make it run once more afterwards. */
  function kick(): void {
    if (stopped) return
    if (scheduling) {
      again = true
      return
    }
    scheduling = scheduleOnce()
      .catch((error: unknown) => log.error('scheduling failed', { error }))
      .finally(() => {
        scheduling = undefined
        if (again) {
          again = false
          kick()
        }
      })
  }

  return {
    kick,

    /** Schedules now and then every `pollMs` (runs queued by other processes, dependencies ended elsewhere). */
    start(pollMs = 2000): void {
      kick()
      timer = setInterval(kick, pollMs)
      timer.unref()
    },

    /** Runs this node left unfinished (a crash): marked interrupted, their process groups reaped. */
    async recover(): Promise<number> {
      const owner = runs.owner
      let recovered = 0
      for (const run of await store.runQueue.activeOnNode(owner.node)) {
        // Another live process on this host (a `hangar run`, another daemon) still owns it: not ours to touch.
        if (!ownerGone(run, owner)) continue
        if (run.agentPgid !== null) await reapProcessGroup(run.agentPgid)
        await runs.interrupt(run.userId, run.id, 'the process that ran it stopped before it finished')
        recovered++
      }
      // Skills the ended runs placed in their workspaces and never got to remove (their process died).
      const cleaned = await removeLeftoverPlacements(path.join(options.dataDir, 'runs'), (ids) =>
        store.runQueue.statuses(ids),
      ).catch((error: unknown) => {
        log.warn('could not remove the skills of interrupted runs', { error })
        return []
      })
      if (cleaned.length > 0) log.info('removed skills left in workspaces by ended runs', { runs: cleaned })
      return recovered
    },

    async cancel(userId: string, runId: string): Promise<Run> {
      const scope = store.forUser(userId).runs
      const run = await scope.get(runId)
      if (!run) throw new AppError('not_found', `no run ${runId}`)
      const local = running.get(runId)
      if (local) {
        local.controller.abort()
        await local.done
        return (await scope.get(runId))!
      }
      if (run.status === 'queued') {
        const active = await runs.claim(userId, runId)
        if (active) return active.end({ status: 'cancelled', reason: 'cancelled before it started' })
        return this.cancel(userId, runId)
      }
      // Ended runs say so in plain words; a live run another process or node executes is theirs to stop.
      const message =
        run.status === 'cancelled'
          ? `run ${runId} is already cancelled`
          : isTerminalRunStatus(run.status)
            ? `run ${runId} already ended: ${run.status}; there is nothing to cancel`
            : `run ${runId} is ${run.status} under another process or node; cancel it there`
      throw new AppError('conflict', message, { details: { status: run.status } })
    },

    /** Cancels what runs here and waits for it: a clean stop. */
    async stop(): Promise<void> {
      stopped = true
      if (timer) clearInterval(timer)
      for (const entry of running.values()) entry.controller.abort()
      // A pass under way may still claim a run and start it after this: the pass ends first (no other starts
      // once stopped), then every run is cancelled and waited for, the late one included. Before, a run the
      // pass started went on against a store its runtime had closed (CI: "driver has already been destroyed").
      await scheduling
      for (const entry of running.values()) entry.controller.abort()
      await Promise.all([...running.values()].map((entry) => entry.done))
    },

    runningCount: () => running.size,
  }
}

export type Scheduler = ReturnType<typeof createScheduler>
