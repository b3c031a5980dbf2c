// The composition root: createRuntime() builds and wires every service. Nothing else builds singletons;
// the CLI calls this and nothing but this file imports the server.
import { randomUUID } from 'node:crypto'
import os from 'node:os'
import path from 'node:path'
import { createDefaultAdapterRegistry } from './adapters/default-adapters.js'
import { loadDetection } from './adapters/detection-cache.js'
import type { DetectedAdapter } from './adapters/detection.js'
import type { AdapterRegistry } from './adapters/registry.js'
import { createAgentLauncher } from './adapters/agent-launcher.js'
import { createSupervisor, type Supervisor } from './adapters/supervisor.js'
import type { HangarConfig } from './core/config.js'
import { type Clock, systemClock } from './core/ids.js'
import type { Logger } from './core/logger.js'
import { createRedactor, type Redactor } from './core/redact.js'
import type { LogFormat } from './log-format.js'
import { createLogger, type LogLevel } from './logger.js'
import { createToolRegistry, type ToolRegistry } from './agent/tools/tool-registry.js'
import { redactToolOutputs } from './agent/tools/redacted-tools.js'
import { createWorkspaceTools } from './agent/tools/workspace-tools.js'
import { type ActionsService, createActionsService } from './runs/actions-service.js'
import { createClusterLiveSource } from './runs/cluster-live-source.js'
import { createCommandSandboxes } from './runs/command-sandbox.js'
import { pruneSandboxHomes } from './sandbox/sandbox-home.js'
import { sandboxStatus } from './sandbox/sandbox-status.js'
import { createEventBus, type EventBus } from './runs/event-bus.js'
import { resolveBuiltinProvider } from './runs/builtin-model.js'
import { builtinReadiness, type BuiltinReadiness } from './runs/builtin-readiness.js'
import { type BuiltinRunner, createBuiltinRunner } from './runs/builtin-runs.js'
import { createRunService, type RunService } from './runs/run-service.js'
import { createScheduler, type Scheduler } from './runs/scheduler.js'
import { createRunActivity, type RunActivity } from './runs/run-limits.js'
import { createRunSubmitter, type SubmitRunRequest } from './runs/submit-run.js'
import type { Run } from './store/repositories/runs-repository.js'
import { createServerApp } from './server/app.js'
import { checkBindAddress, listen, type RunningServer } from './server/listen.js'
import { type AuthService, createAuthService } from './store/auth-service.js'
import {
  type CredentialsService,
  createCredentialsService,
  type VaultState,
} from './store/credentials-service.js'
import { type Keyring, loadKeyring } from './store/keyring.js'
import { ensureDataDir } from './store/open-database.js'
import type { User } from './store/repositories/users-repository.js'
import { openStore, type Store } from './store/store.js'
import { createVault } from './store/vault.js'
import { createSshTargets, type SshTargets } from './workspaces/ssh/ssh-targets.js'
import { createRunFinalizer, type RunFinalizer } from './runs/finalize-run.js'
import { createHostCopyRemover } from './runs/host-copies.js'
import { createFinalizeRecovery, type FinalizeRecovery } from './runs/finalize-recovery.js'
import { createModelProxy, type ModelProxy } from './runs/model-proxy.js'
import { preloadUpstreamClient } from './proxy/forward-upstream.js'
import { createNodeHeartbeat, type NodeHeartbeat } from './runs/node-heartbeat.js'
import { VERSION } from './version.js'
import { createWorkspaceService, type WorkspaceService } from './workspaces/workspace-service.js'
import { type AllowedRoots, loadAllowedRoots } from './workspaces/allowed-roots.js'
import { createWorkspacePolicy, type WorkspacePolicy } from './runs/workspace-policy.js'
import { createProjectService, type ProjectService } from './projects/project-service.js'
import { createReviewService, type ReviewService } from './workspaces/review/review-service.js'
import { setupEnvironment } from './runs/workspace-setup.js'
import { type AttemptsService, createAttemptsService } from './runs/attempts-service.js'
import {
  createWorkspaceLifecycle,
  type WorkspaceLifecycle,
} from './workspaces/lifecycle/workspace-lifecycle.js'
import { projectFromDirectory } from './workspaces/lifecycle/lifecycle-config.js'
import {
  createNotificationService,
  type NotificationService,
  type NotificationServiceOptions,
} from './notifications/notification-service.js'
import { createTriggerFirer } from './triggers/trigger-fire.js'
import { createChannelReportTarget } from './triggers/channel-report-target.js'
import { createGithubReportTarget } from './triggers/trigger-report.js'
import { createTriggerScheduler, type TriggerScheduler } from './triggers/trigger-scheduler.js'
import { createTriggerService, type TriggerService } from './triggers/trigger-service.js'

export interface RuntimeOptions {
  dataDir: string
  /** postgres://… or sqlite:…; absent = SQLite in the data dir. */
  databaseUrl?: string | undefined
  config: HangarConfig
  /** Project directory (where hangar.yaml is, else the git root, else the cwd). */
  projectDir: string
  env?: NodeJS.ProcessEnv
  nodeId?: string | undefined
  logLevel?: LogLevel
  logDestination?: NodeJS.WritableStream
  /** 'json' (default) or 'pretty' (readable lines, for a terminal). */
  logFormat?: LogFormat
  clock?: Clock
  /** How often the proxy's request log is written behind (default 25 ms, 50 on PostgreSQL); tests stretch it. */
  requestLogFlushMs?: number
  /** How long a proxied request's bookkeeping waits after its answer (default 1 ms); tests stretch it. */
  proxyBookkeepingDelayMs?: number
  /**
   * Agents are spawned by a small launcher process (`hangar up`, unless HANGAR_AGENT_LAUNCHER=0): a fork of
   * the daemon blocks its event loop, and every run's stream with it, until the agent has exec'd
   * (adapters/agent-launcher.ts).
   */
  agentLauncher?: boolean
  /** Tests: the notification queue's backoff and poll (shorter than a daemon's). */
  notificationDelivery?: NotificationServiceOptions['delivery']
}

export interface Runtime {
  readonly store: Store
  readonly auth: AuthService
  readonly credentials: CredentialsService
  readonly vaultState: VaultState
  readonly log: Logger
  readonly redactor: Redactor
  readonly config: HangarConfig
  readonly dataDir: string
  readonly projectDir: string
  readonly info: { version: string; nodeId: string; startedAt: Date; bootId: string }
  readonly adapters: AdapterRegistry
  readonly supervisor: Supervisor
  /** Which runs are watched for their time limits, and their model requests in flight. */
  readonly runActivity: RunActivity
  readonly runs: RunService
  /** Every stored event batch, fanned out to SSE subscribers. */
  readonly bus: EventBus
  /** The built-in agent's tools. */
  readonly tools: ToolRegistry
  readonly actions: ActionsService
  readonly builtin: BuiltinRunner
  /** Queued runs of the daemon: claimed, executed, cancelled; crash recovery at start-up. */
  readonly scheduler: Scheduler
  /** Connections to the SSH targets of hangar.yaml. */
  readonly targets: SshTargets
  /** Retries a run's failed workspace finalize (its changes are still on the SSH target). */
  finalizeRun: RunFinalizer
  /** Brings back the SSH work of this node's runs that ended without it (started by `hangar up`). */
  finalizeRecovery: FinalizeRecovery
  /** Conversations' worktrees (or copies) and one-off `--isolate` workspaces under the data dir. */
  readonly workspaces: WorkspaceService
  /** Where runs may work (the allowed roots, never the data dir) and who works in place. */
  readonly workspacePolicy: WorkspacePolicy
  /** The project's workspace lifecycle (copy, setup, teardown, ports) and its approval. */
  readonly workspaceLifecycle: WorkspaceLifecycle
  readonly allowedRoots: AllowedRoots
  /** Registered projects, their members, and who may work on which. */
  readonly projects: ProjectService
  /** Schedules and inbound webhooks that start runs as their creator, and the reports of those runs. */
  readonly triggers: TriggerService
  /** This daemon's schedule loop (started by `hangar up`). */
  readonly triggerScheduler: TriggerScheduler
  /** Web Push and webhook channels per user; queued from run events, sent once `start`ed (`hangar up`). */
  readonly notifications: NotificationService
  submitRun(userId: string, request: SubmitRunRequest): Promise<Run>
  /** Compare attempts: one prompt with several agents, side by side, one picked. */
  readonly attempts: AttemptsService
  /** Review and land of conversations' workspaces (REST, MCP and the CLI all go through it). */
  readonly review: ReviewService
  /** Installed CLIs, versions and auth states (cached in the data dir for 24 h unless `refresh`). */
  detectAgents(options?: {
    refresh?: boolean
  }): Promise<{ adapters: DetectedAdapter[]; detectedAt: Date; fromCache: boolean }>
  /** Whether the built-in agent can reach a model for a user now, or what it needs. */
  builtinReadiness(userId: string): Promise<BuiltinReadiness>
  /** The instance owner (created on the first start). */
  readonly owner: User
  readonly ownerCreated: boolean
  /** The LLM proxy: run tokens, endpoints, metering (served by listen(), or serveProxy() for `hangar run`). */
  readonly modelProxy: ModelProxy
  /** This daemon's heartbeat among the nodes sharing the store (started by `hangar up`). */
  readonly heartbeat: NodeHeartbeat
  /** `public` (or `server.public`) is needed for a non-loopback host; such a server lists its `exposure`. */
  listen(options: {
    host: string
    port: number
    public?: boolean
  }): Promise<RunningServer & { exposure?: string[] }>
  /** The proxy alone on a loopback port, for a run in this process when no daemon serves it. */
  serveProxy(): Promise<RunningServer>
  close(): Promise<void>
}

/** Agents on this machine reach a daemon bound to a wildcard address on loopback. */
function proxyBaseUrl(server: RunningServer): string {
  const url = new URL(server.url)
  if (url.hostname === '0.0.0.0' || url.hostname === '[::]') url.hostname = '127.0.0.1'
  return url.origin
}

/** Values that must never be printed: the agents' and providers' keys in the environment, and those hangar.yaml points at. */
function registerEnvironmentSecrets(redactor: Redactor, config: HangarConfig, env: NodeJS.ProcessEnv): void {
  const names = new Set([
    'HANGAR_SECRET_KEYS',
    'ANTHROPIC_API_KEY',
    'ANTHROPIC_AUTH_TOKEN',
    'CLAUDE_CODE_OAUTH_TOKEN',
    'OPENAI_API_KEY',
    'CODEX_API_KEY',
    'GEMINI_API_KEY',
    'GOOGLE_API_KEY',
    'OPENROUTER_API_KEY',
    'CURSOR_API_KEY',
    'OPENCODE_API_KEY',
    'GH_TOKEN',
    'GITHUB_TOKEN',
    'COPILOT_GITHUB_TOKEN',
    'COPILOT_PROVIDER_API_KEY',
  ])
  for (const provider of Object.values(config.providers))
    if (provider.apiKeyEnv) names.add(provider.apiKeyEnv)
  for (const service of Object.values(config.services))
    if (service.auth?.bearerEnv) names.add(service.auth.bearerEnv)
  for (const name of names) {
    const value = env[name]
    if (!value) continue
    redactor.add(value)
    if (name === 'HANGAR_SECRET_KEYS')
      for (const entry of value.split(',')) redactor.add(entry.split(':')[1]?.trim())
  }
  if (env.HANGAR_DATABASE_URL) {
    const password = URL.canParse(env.HANGAR_DATABASE_URL) ? new URL(env.HANGAR_DATABASE_URL).password : ''
    redactor.add(password && decodeURIComponent(password))
  }
}

/** The instance keys as they are written (secret.key or HANGAR_SECRET_KEYS): standard or URL-safe base64. */
function registerKeyring(redactor: Redactor, keyring: Keyring): void {
  for (const key of keyring.keys.values()) {
    // Without padding: the unpadded text is inside the padded one, so one value covers both spellings.
    redactor.add(key.toString('base64').replace(/=+$/, ''))
    redactor.add(key.toString('base64url'))
  }
}

async function ensureOwner(store: Store): Promise<{ owner: User; created: boolean }> {
  const existing = await store.users.findOwner()
  if (existing) return { owner: existing, created: false }
  const name = safeUserName()
  try {
    return { owner: await store.users.create({ name, role: 'owner' }), created: true }
  } catch (error) {
    // Another process (a CLI command and a daemon starting together) created it first.
    const owner = await store.users.findOwner()
    if (owner) return { owner, created: false }
    throw error
  }
}

function safeUserName(): string {
  try {
    const name = os.userInfo().username.replace(/[^a-zA-Z0-9._-]/g, '')
    return name || 'owner'
  } catch {
    return 'owner'
  }
}

export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const env = options.env ?? process.env
  const clock = options.clock ?? systemClock
  const redactor = createRedactor()
  registerEnvironmentSecrets(redactor, options.config, env)
  const log = createLogger({
    service: 'hangar',
    redactor,
    level: options.logLevel ?? 'info',
    ...(options.logDestination && { destination: options.logDestination }),
    ...(options.logFormat && { format: options.logFormat }),
  })

  // Before anything is written: a data dir inside an allowed root would let runs read its secrets.
  // Registered projects are allowed roots too, read from the store at each check (any node may add one).
  let registeredProjects: ProjectService | undefined
  const allowedRoots = await loadAllowedRoots({
    projectDir: options.projectDir,
    configured: options.config.server.allowedRoots,
    dataDir: options.dataDir,
    home: env.HOME ?? os.homedir(),
    projectRoots: async () => (registeredProjects ? registeredProjects.paths() : []),
  })
  await ensureDataDir(options.dataDir)
  // The one redactor: the logger, the store (messages, audit, action results), every event and the
  // built-in agent's tool results all go through this instance.
  const store = await openStore({ dataDir: options.dataDir, url: options.databaseUrl, clock, redactor })
  try {
    const keyringSource = await loadKeyring({
      envValue: env.HANGAR_SECRET_KEYS,
      dataDir: options.dataDir,
      engine: store.engine,
    })
    if (keyringSource.keyring) registerKeyring(redactor, keyringSource.keyring)
    const vaultState: VaultState = keyringSource.keyring
      ? { vault: createVault(keyringSource.keyring) }
      : { vault: null, reason: keyringSource.reason }
    const auth = createAuthService({ store, clock })
    const projects = createProjectService({ store, dataDir: options.dataDir })
    registeredProjects = projects
    // Several daemons on one PostgreSQL: a proxy token revoked by any of them is forgotten by all.
    const stopProxyRevocations = await auth.listenForProxyRevocations({
      onError: (error) => log.warn('proxy-token revocations lost their connection', { error }),
    })
    const credentials = createCredentialsService({
      store,
      vaultState,
      configuredProviders: Object.keys(options.config.providers),
    })
    await credentials.registerVaultedKeys()
    const { owner, created } = await ensureOwner(store)
    const info = {
      version: VERSION,
      nodeId: options.nodeId ?? os.hostname(),
      startedAt: clock(),
      bootId: randomUUID(),
    }
    const adapters = createDefaultAdapterRegistry()
    // Several daemons on one PostgreSQL: events stored by any of them reach the subscribers of all.
    // Until the bus exists (a peer answering while this daemon starts), there is no subscriber to resync.
    let resyncBus = () => {}
    const clusterSource = store.notifications
      ? await createClusterLiveSource({
          notifications: store.notifications,
          store,
          origin: info.bootId,
          nodeId: info.nodeId,
          onGap: () => resyncBus(),
          log: log.child({ component: 'events' }),
          leaseMs: options.config.server.leaseMs,
          heartbeatMs: options.config.server.heartbeatMs,
        })
      : undefined
    const bus: EventBus = createEventBus(clusterSource ? { source: clusterSource } : {})
    resyncBus = () => bus.resync()
    // Attempts check their workspace when their run ends here (made below: it needs the run submitter).
    const attemptsSink: { onEvents?: AttemptsService['onEvents'] } = {}
    // Set below: a run a trigger started reports when it ends (on the node that ran it).
    const reportsOf: { triggers?: TriggerService } = {}
    const notifications = createNotificationService({
      store,
      vault: vaultState.vault,
      projects,
      config: options.config,
      log: log.child({ component: 'notifications' }),
      node: `${info.nodeId}:${info.bootId}`,
      ...(options.notificationDelivery && { delivery: options.notificationDelivery }),
    })
    const runs = createRunService({
      store,
      redactor,
      clock,
      // Stored batches of this process's runs: live to subscribers, to attempts, to trigger reports and to
      // notifications (never waited on).
      sink: (envelopes, meta) => {
        bus.publish(envelopes, meta)
        attemptsSink.onEvents?.(envelopes, meta)
        notifications.observe(envelopes, meta)
        for (const envelope of envelopes)
          if (envelope.type === 'run-end')
            void reportsOf.triggers
              ?.runEnded(envelope.runId)
              .catch((error: unknown) => log.warn('trigger report failed', { error }))
      },
      owner: { node: info.nodeId, pid: process.pid, bootId: info.bootId },
    })
    const runActivity = createRunActivity()
    const modelProxy = createModelProxy({
      store,
      auth,
      credentials,
      runs,
      config: options.config,
      env,
      projectDir: options.projectDir,
      log,
      activity: runActivity,
      ...(options.requestLogFlushMs !== undefined && { requestLogFlushMs: options.requestLogFlushMs }),
      ...(options.proxyBookkeepingDelayMs !== undefined && {
        bookkeepingDelayMs: options.proxyBookkeepingDelayMs,
      }),
    })
    // Whatever a tool reads or prints is redacted before the loop, an MCP client or the store sees it.
    const tools = createToolRegistry(redactToolOutputs(createWorkspaceTools(), redactor.text))
    const targets = createSshTargets(options.config, env)
    const workspaceLifecycle = createWorkspaceLifecycle({
      store,
      config: options.config,
      // The daemon's directory when no project is registered (runs there are as before projects).
      defaultProject: projectFromDirectory(options.projectDir),
      // A workspace's lifecycle is its registered project's (hangar.yaml's `projects.<name>`, by that name).
      projectOf: async (workspace) => {
        const project = await store.projects.findByPath(workspace.projectPath)
        return projectFromDirectory(project?.path ?? workspace.projectPath, project?.name)
      },
      env: setupEnvironment(env),
      connection: (name) => (Object.hasOwn(options.config.targets, name) ? targets.get(name) : undefined),
      log: log.child({ component: 'workspace-lifecycle' }),
    })
    const workspaces = createWorkspaceService({
      store,
      dataDir: options.dataDir,
      projectDir: options.projectDir,
      nodeId: info.nodeId,
      lifecycle: workspaceLifecycle,
      // A sandboxed agent's home is kept per workspace (its CLI's sessions): it goes with the workspace.
      afterRemoval: () => pruneSandboxHomes(options.dataDir),
      // Its copies on SSH targets (and their sandbox homes) go with it.
      onRemoved: createHostCopyRemover({
        store,
        targets,
        knownTarget: (name) => Object.hasOwn(options.config.targets, name),
        log: log.child({ component: 'workspaces' }),
      }),
      log: log.child({ component: 'workspaces' }),
    })
    const workspacePolicy = createWorkspacePolicy({ store, roots: allowedRoots, workspaces, projects })
    const actions = createActionsService({
      store,
      tools,
      clock,
      defaultWorkspace: (userId) => workspacePolicy.proposalWorkspace(userId),
      // The built-in agent's commands get the workspace's HANGAR_PORT as CLI agents do.
      workspaceVariables: async (userId, runId) => {
        const run = await store.forUser(userId).runs.get(runId)
        const workspace = run && (await workspaceLifecycle.workspaceOfRun(userId, run))
        return workspace ? workspaceLifecycle.variables(workspace.id) : {}
      },
      // A run's profile with `sandbox: workspace`: its approved commands run in bubblewrap.
      commandSandbox: createCommandSandboxes({
        store,
        config: options.config,
        env,
        dataDir: options.dataDir,
        projectDir: options.projectDir,
      }),
      nodeId: info.nodeId,
      owner: runs.owner,
    })
    const builtin = createBuiltinRunner({
      store,
      runs,
      actions,
      tools,
      credentials,
      config: options.config,
      env,
      projectDir: options.projectDir,
      modelProxy,
      activity: runActivity,
    })
    const detectAgents = (detectOptions: { refresh?: boolean } = {}) =>
      loadDetection(adapters.all(), {
        env,
        home: env.HOME ?? os.homedir(),
        paths: options.config.adapters,
        dataDir: options.dataDir,
        refresh: detectOptions.refresh ?? false,
      })
    const supervisor = createSupervisor(options.agentLauncher ? { launcher: createAgentLauncher() } : {})
    const scheduler = createScheduler({
      store,
      runs,
      registry: adapters,
      detectAgents,
      builtin,
      supervisor,
      config: options.config,
      env,
      dataDir: options.dataDir,
      projectDir: options.projectDir,
      targets,
      modelProxy,
      activity: runActivity,
      lifecycle: workspaceLifecycle,
      log: log.child({ component: 'scheduler' }),
    })
    /** A listener that also serves the proxy; agents are pointed at it until it closes. */
    async function servingProxy(
      app: Parameters<typeof listen>[0],
      listenOptions: { host: string; port: number },
    ): Promise<RunningServer> {
      // Loaded before the first request can come, not in the middle of serving runs (about 20 ms).
      await preloadUpstreamClient()
      const server = await listen(app, { ...listenOptions, proxy: modelProxy.handler })
      modelProxy.setBaseUrl(proxyBaseUrl(server))
      return {
        ...server,
        close: async () => {
          modelProxy.setBaseUrl(undefined)
          await server.close()
        },
      }
    }
    const heartbeat = createNodeHeartbeat({
      store,
      runs,
      actions,
      node: { id: info.nodeId, bootId: info.bootId, version: info.version, startedAt: info.startedAt },
      heartbeatMs: options.config.server.heartbeatMs,
      leaseMs: options.config.server.leaseMs,
      clock,
      log: log.child({ component: 'nodes' }),
    })
    // A run that ended on another node may have freed a slot of its agent here (limits hold cluster-wide).
    clusterSource?.listen((batch) => {
      if (batch.envelopes.some((envelope) => envelope.type === 'run-end')) scheduler.kick()
    })
    const finalizeRun = createRunFinalizer({ store, targets, runs, onFinalized: () => scheduler.kick() })
    const finalizeRecovery = createFinalizeRecovery({
      store,
      finalizeRun,
      node: runs.owner.node,
      log: log.child({ component: 'finalize-recovery' }),
    })
    /** The built-in agent's provider and model for a user with no profile, and why (never the key). */
    async function builtinProvider(userId: string) {
      const chosen = await resolveBuiltinProvider({
        config: options.config,
        profile: null,
        env,
        credentials,
        userId,
      })
      return { provider: chosen.provider, model: chosen.model, source: chosen.source, reason: chosen.reason }
    }
    const builtinReadinessFor = (userId: string) => builtinReadiness(() => builtinProvider(userId))
    const submitRun = createRunSubmitter({
      store,
      runs,
      scheduler,
      actions,
      config: options.config,
      adapters,
      detectAgents,
      builtinReadiness: builtinReadinessFor,
      workspaces,
      policy: workspacePolicy,
      projects,
      projectDir: options.projectDir,
    })
    const attempts = createAttemptsService({
      store,
      config: options.config,
      projects,
      adapters,
      detectAgents,
      workspaces,
      submitRun,
      scheduler,
      runs,
      checkEnv: setupEnvironment(env),
      workspaceVariables: (workspaceId) => workspaceLifecycle.variables(workspaceId),
      log: log.child({ component: 'attempts' }),
    })
    attemptsSink.onEvents = (envelopes, meta) => attempts.onEvents(envelopes, meta)
    const triggerLog = log.child({ component: 'triggers' })
    const triggerService = createTriggerService({
      store,
      projects,
      vaultState,
      config: options.config,
      firer: createTriggerFirer({
        store,
        projects,
        submitRun,
        config: options.config,
        adapters,
        detectAgents,
        builtinReadiness: builtinReadinessFor,
        projectDir: options.projectDir,
        log: triggerLog,
      }),
      reportTargets: [
        createChannelReportTarget({ notifications }),
        createGithubReportTarget({
          service: options.config.services.github,
          env,
          allowPrivateNetworks: options.config.triggers.allowPrivateNetworks,
        }),
      ],
      log: triggerLog,
    })
    reportsOf.triggers = triggerService
    const triggerScheduler = createTriggerScheduler({
      store,
      fire: (trigger, slot) => triggerService.fireSlot(trigger, slot),
      clock,
      log: triggerLog,
    })
    const review = createReviewService({
      store,
      workspaces,
      projects,
      submitRun,
      appendEvents: (userId, runId, events) => runs.appendEvents(userId, runId, events),
      dataDir: options.dataDir,
      nodeId: info.nodeId,
      log: log.child({ component: 'review' }),
    })

    return {
      store,
      auth,
      credentials,
      vaultState,
      log,
      redactor,
      config: options.config,
      dataDir: options.dataDir,
      projectDir: options.projectDir,
      info,
      owner,
      ownerCreated: created,
      adapters,
      supervisor,
      runActivity,
      runs,
      bus,
      tools,
      actions,
      builtin,
      scheduler,
      targets,
      finalizeRun,
      finalizeRecovery,
      workspaces,
      workspacePolicy,
      workspaceLifecycle,
      allowedRoots,
      projects,
      triggers: triggerService,
      triggerScheduler,
      notifications,
      submitRun,
      attempts,
      review,
      detectAgents,
      builtinReadiness: builtinReadinessFor,
      modelProxy,
      heartbeat,
      async listen(listenOptions) {
        const { exposure } = checkBindAddress(listenOptions.host, {
          public: listenOptions.public === true || options.config.server.public,
        })
        const app = createServerApp({
          store,
          auth,
          credentials,
          log,
          info,
          policy: { allowPrivateNetworks: options.config.allowPrivateNetworks },
          posture: {
            trustProxy: options.config.server.trustProxy,
            bindHost: listenOptions.host,
            allowedHosts: options.config.server.allowedHosts,
          },
          authRateLimit: { clock },
          runtime: {
            bus,
            submitRun,
            attempts,
            review,
            scheduler,
            actions,
            runs,
            workspaces,
            workspaceLifecycle,
            toolWorkspace: (userId: string) => workspacePolicy.toolWorkspace(userId),
            finalizeRun,
            tools,
            detectAgents,
            adapters,
            config: options.config,
            projectDir: options.projectDir,
            projects,
            triggers: triggerService,
            notifications,
            modelProxy,
            builtinProvider,
            builtinReadiness: builtinReadinessFor,
            sandboxStatus: () => sandboxStatus(options.config, env, path.basename(options.projectDir)),
          },
        })
        const server = await servingProxy(app, { host: listenOptions.host, port: listenOptions.port })
        triggerService.setBaseUrl(server.url)
        return exposure ? { ...server, exposure } : server
      },
      serveProxy: () => servingProxy(undefined, { host: '127.0.0.1', port: 0 }),
      async close() {
        await attempts.close()
        await triggerScheduler.stop()
        supervisor.close()
        await notifications.stop()
        bus.close()
        await clusterSource?.close()
        await stopProxyRevocations()
        await modelProxy.close()
        await targets.close()
        await store.close()
      },
    }
  } catch (error) {
    await store.close()
    throw error
  }
}
