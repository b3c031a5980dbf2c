// The Hono app: request ids, access logs, body limits, auth, routes, and the one error handler.
import { Hono } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { requestId } from 'hono/request-id'
import type { DetectedAdapter } from '../adapters/detection.js'
import type { ToolRegistry } from '../agent/tools/tool-registry.js'
import type { AdapterRegistry } from '../adapters/registry.js'
import type { HangarConfig } from '../core/config.js'
import { AppError } from '../core/errors.js'
import type { ActionsService } from '../runs/actions-service.js'
import type { EventBus } from '../runs/event-bus.js'
import type { RunService } from '../runs/run-service.js'
import type { Scheduler } from '../runs/scheduler.js'
import type { SubmitRunRequest } from '../runs/submit-run.js'
import type { AttemptsService } from '../runs/attempts-service.js'
import type { Run } from '../store/repositories/runs-repository.js'
import type { Logger } from '../core/logger.js'
import type { AuthService } from '../store/auth-service.js'
import type { BuiltinReadiness } from '../runs/builtin-readiness.js'
import type { CredentialsService } from '../store/credentials-service.js'
import type { Store } from '../store/store.js'
import type { RunFinalizer } from '../runs/finalize-run.js'
import type { ModelProxy } from '../runs/model-proxy.js'
import type { WorkspaceService } from '../workspaces/workspace-service.js'
import type { ReviewService } from '../workspaces/review/review-service.js'
import { type AppVariables, createAuthMiddleware } from './auth-middleware.js'
import { type AuthRateLimiterOptions, createAuthRateLimiter } from './auth-rate-limiter.js'
import { createHostGuard, type HttpPosture, LOOPBACK_POSTURE } from './http-posture.js'
import { createErrorHandler, statusOf, toErrorEnvelope } from './error-envelope.js'
import type { ProjectService } from '../projects/project-service.js'
import type { TriggerService } from '../triggers/trigger-service.js'
import { registerHookRoutes, registerTriggerRoutes } from './routes/trigger-routes.js'
import type { SandboxStatus } from '../sandbox/sandbox-status.js'
import type { NotificationService } from '../notifications/notification-service.js'
import { registerNotificationRoutes } from './routes/notification-routes.js'
import { registerMcpRoutes } from './mcp/mcp-routes.js'
import { createOpenApiDocument, renderApiDocs } from './openapi.js'
import { payloadTooLarge } from './request-body.js'
import { registerActionRoutes } from './routes/action-routes.js'
import { registerAgentRoutes } from './routes/agent-routes.js'
import { registerConversationRoutes } from './routes/conversation-routes.js'
import { registerEventRoutes } from './routes/event-routes.js'
import { registerHealthRoutes } from './routes/health-routes.js'
import { registerNodeRoutes } from './routes/node-routes.js'
import { registerProfileRoutes } from './routes/profile-routes.js'
import { registerProjectRoutes } from './routes/project-routes.js'
import { registerRunRoutes } from './routes/run-routes.js'
import { registerSessionRoutes } from './routes/session-routes.js'
import { registerSettingsRoutes } from './routes/settings-routes.js'
import { registerTokenRoutes } from './routes/token-routes.js'
import { registerAttemptRoutes } from './routes/attempt-routes.js'
import { registerUsageRoutes } from './routes/usage-routes.js'
import { registerWorkspaceRoutes } from './routes/workspace-routes.js'
import { registerReviewRoutes } from './routes/review-routes.js'
import type { WorkspaceLifecycle } from '../workspaces/lifecycle/workspace-lifecycle.js'
import { defaultWebRoot, registerWebApp } from './web-app.js'

/** JSON API bodies are small; the proxy (its own limit, proxy.bodyLimitMb) carries images and histories. */
export const API_BODY_LIMIT_BYTES = 1024 * 1024

/** The run machinery the routes drive (built in main.ts). */
export interface RuntimeServices {
  bus: EventBus
  submitRun: (userId: string, request: SubmitRunRequest) => Promise<Run>
  /** Compare attempts (POST /api/attempts, MCP start_attempts). */
  attempts: AttemptsService
  /** Review and land of workspaces (absent in apps built for narrower tests). */
  review?: ReviewService
  scheduler: Pick<Scheduler, 'cancel' | 'kick'>
  actions: ActionsService
  runs: RunService
  /** Conversations' worktrees and one-off workspaces. */
  workspaces: WorkspaceService
  /** The project's workspace lifecycle: shown to anyone, approved by the owner. */
  workspaceLifecycle: Pick<WorkspaceLifecycle, 'show' | 'approve'>
  /** Where a user's MCP workspace tools work: the project for the owner, a member's own workspace. */
  toolWorkspace: (userId: string) => Promise<string>
  /** Retries a run's failed workspace finalize. */
  finalizeRun: RunFinalizer
  /** The built-in agent's workspace tools, which the MCP endpoint offers too. */
  tools: ToolRegistry
  /** Cached for a day; `refresh` looks again (a CLI installed or signed in since). */
  detectAgents: (options?: { refresh?: boolean }) => Promise<{ adapters: DetectedAdapter[] }>
  adapters: AdapterRegistry
  config: HangarConfig
  projectDir: string
  /** Registered projects and who may work on which. */
  projects: ProjectService
  /** Schedules and inbound webhooks (src/triggers). */
  triggers: TriggerService
  /** The built-in agent's provider and model for a user with no profile, and why (never the key). */
  builtinProvider: (
    userId: string,
  ) => Promise<{ provider: string; model: string; source: string; reason: string }>
  /** Whether the built-in agent can reach a model for a user now, or what it needs (builtin-readiness.ts). */
  builtinReadiness: (userId: string) => Promise<BuiltinReadiness>
  /** The LLM proxy: feed manifests and their fetch state. */
  modelProxy: Pick<ModelProxy, 'manifestFor' | 'fetcher'>
  /** Web Push and webhook channels (absent in apps built for other tests). */
  notifications?: NotificationService
  /** Whether bubblewrap can confine runs here, and each hangar.yaml profile's setting (absent in other tests). */
  sandboxStatus?: () => Promise<SandboxStatus>
}

export interface ServerDeps {
  store: Store
  auth: AuthService
  credentials: CredentialsService
  log: Logger
  info: { version: string; nodeId: string; startedAt: Date }
  policy: { allowPrivateNetworks: boolean }
  /** Where the built web UI is (default: the package's dist/web); null serves the API alone. */
  webRoot?: string | null
  /** The run machinery; the daemon always has it (apps built for auth tests alone leave it out). */
  runtime?: RuntimeServices
  /** Where it listens and whether a TLS reverse proxy is in front (default: loopback, none). */
  posture?: HttpPosture
  /** The failed-authentication limit per client (default: more than 20 in 10 s). */
  authRateLimit?: AuthRateLimiterOptions
}

export function createServerApp(deps: ServerDeps): Hono<{ Variables: AppVariables }> {
  const app = new Hono<{ Variables: AppVariables }>()
  const log = deps.log.child({ component: 'http' })

  const posture = deps.posture ?? LOOPBACK_POSTURE
  const httpGuards = { posture, limiter: createAuthRateLimiter(deps.authRateLimit) }
  app.use('*', requestId())
  app.use('*', async (context, next) => {
    const started = performance.now()
    await next()
    // One line per request is noise at a terminal: debug, unless the daemon itself failed (5xx).
    const level = context.res.status >= 500 ? 'warn' : 'debug'
    log[level]('request', {
      requestId: context.get('requestId'),
      method: context.req.method,
      path: context.req.path,
      status: context.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
    })
  })
  // Before any route, signed-in or not: the Host check (DNS rebinding), then what every auth check reads.
  app.use('*', createHostGuard(posture))
  app.use('*', async (context, next) => {
    context.set('httpGuards', httpGuards)
    await next()
  })
  app.use(
    '/api/*',
    bodyLimit({
      maxSize: API_BODY_LIMIT_BYTES,
      onError: (context) => context.json(toErrorEnvelope(payloadTooLarge(API_BODY_LIMIT_BYTES)), 413),
    }),
  )

  if (deps.webRoot !== null) registerWebApp(app, { root: deps.webRoot ?? defaultWebRoot() })
  registerHealthRoutes(app, deps)
  app.get('/api/openapi.json', (context) => context.json(createOpenApiDocument(deps.info.version)))
  app.get('/api/docs', (context) => context.html(renderApiDocs(deps.info.version)))
  registerSessionRoutes(app, deps)
  // MCP clients sign in with a PAT alone, never a cookie or the CLI's session: the endpoint checks its
  // own bearer token, so it is registered before the middleware that would accept those.
  if (deps.runtime) {
    registerMcpRoutes(app, {
      auth: deps.auth,
      store: deps.store,
      runtime: deps.runtime,
      log,
      version: deps.info.version,
    })
  }

  // Inbound webhooks: the HMAC of the body with the trigger's secret is the credential.
  if (deps.runtime) registerHookRoutes(app, { runtime: deps.runtime })

  // Everything below needs a signed-in caller.
  app.use('/api/*', createAuthMiddleware(deps.auth))
  registerTokenRoutes(app, deps)
  registerSettingsRoutes(app, deps)
  if (deps.runtime) {
    const runDeps = { store: deps.store, runtime: deps.runtime }
    registerRunRoutes(app, runDeps)
    registerConversationRoutes(app, runDeps)
    registerActionRoutes(app, runDeps)
    registerAgentRoutes(app, runDeps)
    registerProfileRoutes(app, runDeps)
    registerUsageRoutes(app, runDeps)
    registerNodeRoutes(app, { ...runDeps, info: deps.info })
    registerWorkspaceRoutes(app, runDeps)
    registerReviewRoutes(app, runDeps)
    registerProjectRoutes(app, runDeps)
    registerAttemptRoutes(app, runDeps)
    registerTriggerRoutes(app, runDeps)
    if (deps.runtime.notifications) registerNotificationRoutes(app, deps.runtime.notifications)
    registerEventRoutes(app, { store: deps.store, bus: deps.runtime.bus, log })
  }

  app.notFound((context) => {
    const error = new AppError('not_found', `no route ${context.req.method} ${context.req.path}`)
    return context.json(toErrorEnvelope(error), statusOf(error.code))
  })
  app.onError(createErrorHandler(log))
  return app
}
