// The proxy as the runs see it: a token per run (or per `hangar env`), the endpoint each agent is given,
// the request log and `usage` events, budgets, and the run's totals at its end. The wire work itself is
// in src/proxy; this wires it to the store, the vault, hangar.yaml and the running runs.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import path from 'node:path'
import type { AdapterDef, ModelEndpoint, ModelFamily } from '../adapters/types.js'
import { type HangarConfig, type ProfileConfig, ProfileSchema } from '../core/config.js'
import { isAdapterId } from '../core/adapter-ids.js'
import type { ErrorEvent, UsageTotals } from '../core/events.js'
import { newId } from '../core/ids.js'
import type { Logger } from '../core/logger.js'
import {
  createFeedFetcher,
  type FeedFetcher,
  resolveFeedManifest,
  type ResolvedFeed,
} from '../feeds/index.js'
import { STAND_IN_KEY } from '../proxy/forward-upstream.js'
import { costOf } from '../proxy/pricing.js'
import type { MeteredUsage } from '../proxy/usage-meter.js'
import { createProxyHandler, type ProxiedRequest, type ProxySession } from '../proxy/proxy-handler.js'
import type { UrlFamily } from '../proxy/proxy-errors.js'
import type { AuthService, Principal } from '../store/auth-service.js'
import type { CredentialsService } from '../store/credentials-service.js'
import type { StoredProfile } from '../store/repositories/profiles-repository.js'
import type { Store } from '../store/store.js'
import { createAfterAnswerQueue } from './after-answer-queue.js'
import type { BuiltinProxyRoute } from './builtin-model.js'
import { createBudgetLedger } from './budget-ledger.js'
import { createRequestLogWriter } from './request-log-writer.js'
import { feedsNotDeliveredEvent, type UndeliveredFeeds, type UnproxiedCause } from './feeds-delivery.js'
import { createProxyUpstreams } from './proxy-upstreams.js'
import type { RunActivity } from './run-limits.js'
import type { RunService } from './run-service.js'

const RUN_TOKEN_TTL_MS = 7 * 24 * 3600 * 1000

/** Provider keys an agent never inherits when its traffic goes through the proxy. */
const PROVIDER_KEY_ENV = [
  'ANTHROPIC_API_KEY',
  'OPENAI_API_KEY',
  'CODEX_API_KEY',
  'GEMINI_API_KEY',
  'GOOGLE_API_KEY',
  'OPENROUTER_API_KEY',
  'COPILOT_PROVIDER_API_KEY',
]

const URL_FAMILY: Record<ModelFamily, UrlFamily> = {
  anthropic: 'anthropic',
  'openai-chat': 'openai',
  'openai-responses': 'openai',
  gemini: 'gemini',
}

/** A request whose answer is out, waiting for its bookkeeping. */
interface Answered {
  session: ProxySession
  request: ProxiedRequest
  /** Its usage and cost, once read (as it is recorded when its profile may have a budget, else by its bookkeeping). */
  metered?: Metered
}

interface Metered {
  usage: MeteredUsage | undefined
  costUsd: number | undefined
}

/** How a CLI run reaches its model. */
export interface CliModelRoute {
  endpoint: ModelEndpoint | undefined
  proxied: boolean
  /** Environment variables to take away from the agent (keys the proxy holds). */
  hideEnv: string[]
  /** The proxy's local origin, which an agent on an SSH target reaches through a reverse tunnel. */
  proxyOrigin?: string
  /** Unproxied with feeds: the `feeds_not_delivered` warning the run shows after `run-start`. */
  feedsNotDelivered?: ErrorEvent
}

/** How executeCliRun opens and closes a run's route (the proxy's, or none). */
export interface CliRouteHooks {
  open(runId: string): Promise<CliModelRoute>
  /** Revokes the run's token; the proxy's totals when any request went through it. */
  close(runId: string): Promise<UsageTotals | undefined>
}

/** What routing a CLI run needs to know. */
export interface CliRouteInput {
  userId: string
  runId: string
  /** The profile name (or adapter id): tokens, feeds and budgets are per profile. */
  agent: string
  profile: ProfileConfig | null | undefined
  adapter: Pick<AdapterDef, 'id' | 'displayName' | 'endpointFamilies'>
  /** The endpoint the CLI would get without the proxy (hangar.yaml or the environment). */
  direct: ModelEndpoint | undefined
  /** On an SSH target: the agent reaches the proxy through a reverse tunnel. */
  remote: boolean
}

export function createModelProxy(options: {
  store: Store
  auth: AuthService
  credentials: CredentialsService
  runs: RunService
  config: HangarConfig
  env: Readonly<Record<string, string | undefined>>
  projectDir: string
  log: Logger
  fetcher?: FeedFetcher
  /** This proxy's id in the hop header of its upstream requests (default: a fresh one per process). */
  instanceId?: string
  /** Told of each request of a run, so a run waiting on its model is not idle (run-limits). */
  activity?: Pick<RunActivity, 'requestStarted'>
  /** How often the request log is written behind (default REQUEST_LOG_FLUSH_MS of the store's engine). */
  requestLogFlushMs?: number
  /** How long a request's bookkeeping waits after its answer (default 1 ms: after-answer-queue). */
  bookkeepingDelayMs?: number
}) {
  const { store, auth, config, env, log } = options
  const upstreams = createProxyUpstreams({
    ...options,
    profileFor: (requester) => parseProfile(requester.profile, () => storedProfileOf(requester)),
  })
  const project = path.basename(options.projectDir)
  const fetcher =
    options.fetcher ??
    createFeedFetcher({
      services: config.services,
      timeoutMs: config.proxy.feedTimeoutMs,
      credentialFor: (name) => {
        const variable = config.services[name]?.auth?.bearerEnv
        return variable ? env[variable] : undefined
      },
    })
  const manifests = new Map<string, ResolvedFeed[]>()
  /** Proxied requests between their authentication and their answer's end. */
  let inFlight = 0
  const busy = () => inFlight > 0
  const requestLog = createRequestLogWriter({
    store,
    log,
    busy,
    ...(options.requestLogFlushMs !== undefined && { flushMs: options.requestLogFlushMs }),
  })
  // A request's bookkeeping, once its answer is out; done before anything decides on it (a budget, a run's
  // totals, a stop).
  const afterAnswer = createAfterAnswerQueue<Answered>({
    work: bookkeep,
    onError: (error) => log.error('could not record a proxied request', { error }),
    // Off the next request's path: it finds the look for revocations by other processes done.
    afterDrain: () => auth.checkOtherWriters(),
    busy,
    ...(options.bookkeepingDelayMs !== undefined && { delayMs: options.bookkeepingDelayMs }),
  })
  // Metered before being written: a re-seed first stores what is queued, so it counts everything once.
  const budgets = createBudgetLedger({
    config,
    store,
    beforeSeed: () => {
      afterAnswer.drain()
      return requestLog.flush()
    },
  })
  let baseUrl: string | undefined

  // A proxied request checks its budget, resolves its feeds and its upstream, each needing the profile: a
  // user's own is read once per request (each request gets its own session object; see `authenticate`).
  const storedProfiles = new WeakMap<object, Promise<StoredProfile | undefined>>()
  /** The stored (UI-made) profile of a request, read from the store once for that request. */
  function storedProfileOf(requester: {
    userId: string
    profile: string
  }): Promise<StoredProfile | undefined> {
    let stored = storedProfiles.get(requester)
    if (!stored) {
      stored = store.forUser(requester.userId).profiles.get(requester.profile)
      storedProfiles.set(requester, stored)
    }
    return stored
  }

  /**
   * A profile's feeds: hangar.yaml's (resolved once), else the user's own profile's (read per request: it
   * may change at any time). A bare adapter id has none.
   */
  async function manifestFor(
    profile: string,
    userId?: string,
    stored = () => store.forUser(userId!).profiles.get(profile),
  ): Promise<ResolvedFeed[]> {
    let manifest = manifests.get(profile)
    if (manifest) return manifest
    if (config.agents[profile] || !userId || isAdapterId(profile)) {
      manifest = resolveFeedManifest(profile, config.agents[profile], config.services, 'operator')
      manifests.set(profile, manifest)
      return manifest
    }
    const parsed = ProfileSchema.safeParse((await stored())?.definition)
    // Not the operator's: only paths under each service's userFeedPaths (feed-path-policy).
    return parsed.success ? resolveFeedManifest(profile, parsed.data, config.services, 'user') : []
  }

  /** A profile by name: hangar.yaml's, else the user's own (read per request: it may change at any time). */
  async function parseProfile(
    profile: string,
    stored: () => Promise<StoredProfile | undefined>,
  ): Promise<ProfileConfig | null> {
    if (config.agents[profile]) return config.agents[profile]
    if (isAdapterId(profile)) return null
    return ProfileSchema.safeParse((await stored())?.definition).data ?? null
  }

  /** False for a profile of hangar.yaml without a budget, or a bare adapter id (no budget either). */
  function mayHaveBudget(session: ProxySession): boolean {
    const configured = config.agents[session.profile]
    return configured ? configured.budget !== undefined : !isAdapterId(session.profile)
  }

  /** At once for a profile without a budget, and for one whose budget in memory is not spent (most requests). */
  function budgetExceeded(session: ProxySession): string | undefined | Promise<string | undefined> {
    if (!mayHaveBudget(session)) return undefined
    // Every request answered before this one counts already: it was metered when it was recorded.
    const budget = config.agents[session.profile]?.budget
    if (budget) {
      const spent = budgets.spentFromMemory(session.userId, session.profile, budget)
      if (spent !== undefined && spent < budget.usd) return undefined
    }
    return budgetSpent(session)
  }

  async function budgetSpent(session: ProxySession): Promise<string | undefined> {
    const budget = await budgets.status(session.userId, session.profile, () => storedProfileOf(session))
    if (!budget || budget.spentUsd < budget.usd) return undefined
    const where = config.agents[session.profile] ? 'hangar.yaml' : 'its profile'
    const message = `the budget of agent "${session.profile}" is used up: $${budget.spentUsd.toFixed(2)} of $${budget.usd} in the last ${budget.window} (budget in ${where})`
    if (session.runId)
      options.runs.emitTo(session.runId, {
        type: 'error',
        code: 'budget_exceeded',
        message,
        retryable: false,
      })
    return message
  }

  /** An answered request's usage and cost, read once; the cost is counted on its budget then. */
  function meter(answered: Answered): Metered {
    if (answered.metered) return answered.metered
    const usage = answered.request.usage()
    const costUsd = usage ? costOf(usage) : undefined
    const { session } = answered
    if (costUsd !== undefined) budgets.metered(session.userId, session.profile, costUsd)
    return (answered.metered = { usage, costUsd })
  }

  /** A request's row in the request log, its cost on its budget and its run's events. */
  function bookkeep(answered: Answered): void {
    const { session, request } = answered
    const { usage: metered, costUsd } = meter(answered)
    const usage: UsageTotals = {
      inputTokens: metered?.inputTokens ?? 0,
      outputTokens: metered?.outputTokens ?? 0,
      cacheReadTokens: metered?.cacheReadTokens ?? 0,
      cacheWriteTokens: metered?.cacheWriteTokens ?? 0,
    }
    if (costUsd !== undefined) usage.costUsd = costUsd
    const model = metered?.model ?? request.model
    requestLog.add(session.userId, {
      id: newId('preq'),
      runId: session.runId,
      tokenId: session.tokenId,
      profile: session.profile,
      family: request.family,
      method: request.method,
      path: request.path,
      model: model ?? null,
      stream: request.stream,
      status: request.status,
      feeds: request.feeds,
      usage,
      costUsd: costUsd ?? null,
      error: request.error ?? null,
      startedAt: request.startedAt.toISOString(),
      durationMs: request.durationMs,
    })
    if (session.runId && request.runError)
      options.runs.emitTo(session.runId, { type: 'error', ...request.runError })
    if (session.runId && metered)
      options.runs.emitTo(session.runId, {
        type: 'usage',
        source: 'proxy',
        ...(model && { model }),
        ...usage,
      })
    log.debug('proxied', {
      family: request.family,
      path: request.path,
      status: request.status,
      ms: request.durationMs,
      feeds: request.feeds.length,
    })
  }

  function perRequest<T extends { profile: string }>(session: T | undefined): T | undefined {
    if (!session || config.agents[session.profile] || isAdapterId(session.profile)) return session
    return { ...session }
  }

  const handler = createProxyHandler({
    // From memory after the first request; a revocation through the auth service stops the token at the
    // next request on this daemon, and on the others sharing a PostgreSQL once its NOTIFY arrives.
    // A UI-made profile is read once per request, keyed by the session object (storedProfileOf): such a
    // session is copied so that what it keys is this request's alone. hangar.yaml profiles and adapter ids
    // read nothing, and go uncopied.
    authenticate: (token) => {
      const found = auth.authenticateProxy(token)
      return found instanceof Promise ? found.then(perRequest) : perRequest(found)
    },
    upstreamFor: (session, family) => upstreams.upstreamFor(session, family),
    // hangar.yaml's manifests at once; a user's own profile is read once per request.
    feedsFor: (session) => {
      const known = manifests.get(session.profile)
      if (known) return { feeds: known, project }
      return manifestFor(session.profile, session.userId, () => storedProfileOf(session)).then((feeds) => ({
        feeds,
        project,
      }))
    },
    fetcher,
    caps: { perFeedBytes: config.proxy.feedMaxBytes, totalBytes: config.proxy.feedTotalMaxBytes },
    openaiPlacement: config.proxy.openaiPlacement,
    bodyLimitBytes: Math.round(config.proxy.bodyLimitMb * 1024 * 1024),
    instanceId: options.instanceId ?? randomUUID(),
    timeouts: {
      connectMs: config.proxy.upstreamConnectTimeoutMs,
      idleMs: config.proxy.upstreamIdleTimeoutMs,
    },
    budgetExceeded,
    record: (session, request) => {
      const answered: Answered = { session, request }
      // A budget's cost is taken at once, in the microtasks after the answer's write: its bytes are still in
      // the caches (3 µs), and the budget check of the next request has nothing of it left to read. That check
      // read the usage of the requests still held (18 µs p50 on a 1 KB request, cold) before its own went
      // upstream; without it the 1 KB p99 came down in A/B runs, its p50 stayed (issue 19). The rest waits.
      if (mayHaveBudget(session))
        try {
          meter(answered)
        } catch (error) {
          log.error('could not meter a proxied request', { error })
        }
      afterAnswer.add(answered)
    },
    requestStarted: (session: ProxySession) => {
      inFlight++
      const runEnded = session.runId ? options.activity?.requestStarted(session.runId) : undefined
      return () => {
        if (--inFlight === 0) afterAnswer.idle()
        runEnded?.()
      }
    },
    log,
  })

  /** `<base>/proxy/<token>/<family>` as each family's clients expect it (openai with `/v1`). */
  function endpointsFor(token: string): Record<UrlFamily, string> {
    const root = `${baseUrl}/proxy/${token}`
    return { anthropic: `${root}/anthropic`, openai: `${root}/openai/v1`, gemini: `${root}/gemini` }
  }

  async function mintForRun(userId: string, runId: string, profile: string): Promise<string> {
    const { token } = await auth.createToken('system', userId, {
      name: `run ${runId}`,
      kind: 'proxy',
      profile,
      runId,
      expiresInMs: RUN_TOKEN_TTL_MS,
    })
    return token
  }

  /**
   * The endpoint a CLI run gets: the proxy's URL for the family it will use — the first one Hangar has an
   * endpoint or key for, else Claude Code's own login — or, opted out or unroutable, the direct one.
   */
  async function routeCliRun(input: CliRouteInput): Promise<CliModelRoute> {
    const unproxied = async (cause: UnproxiedCause): Promise<CliModelRoute> => {
      const warning = await undeliveredFeeds(input.userId, input.agent, input.adapter, cause)
      return {
        endpoint: input.direct,
        proxied: false,
        hideEnv: [],
        ...(warning && { feedsNotDelivered: warning }),
      }
    }
    if (input.profile?.proxy === false) return unproxied('proxy-off')
    if (baseUrl === undefined) return unproxied('no-proxy')
    let family = input.direct?.family
    for (const candidate of input.adapter.endpointFamilies) {
      if (family) break
      if (await upstreams.configuredFor(input.userId, URL_FAMILY[candidate])) family = candidate
    }
    // Claude Code's own login is a bearer token that travels through a base URL as it is.
    if (!family && input.adapter.id === 'claude-code') family = 'anthropic'
    if (!family) return unproxied('unroutable')
    const urlFamily = URL_FAMILY[family]
    const upstream = await upstreams.upstreamFor(
      { userId: input.userId, profile: input.agent, runId: input.runId },
      urlFamily,
    )
    const token = await mintForRun(input.userId, input.runId, input.agent)
    const endpoint: ModelEndpoint = { family, baseUrl: endpointsFor(token)[urlFamily] }
    if (upstream.apiKey !== undefined) endpoint.apiKey = STAND_IN_KEY
    if (input.direct?.model !== undefined) endpoint.model = input.direct.model
    const hideEnv = [...PROVIDER_KEY_ENV]
    for (const provider of Object.values(config.providers))
      if (provider.apiKeyEnv) hideEnv.push(provider.apiKeyEnv)
    return { endpoint, proxied: true, hideEnv, ...(input.remote && { proxyOrigin: new URL(baseUrl).origin }) }
  }

  /** The warning of an unproxied run whose profile has feeds (those the proxy would have fetched). */
  async function undeliveredFeeds(
    userId: string,
    agent: string,
    adapter: UndeliveredFeeds['adapter'],
    cause: UnproxiedCause,
  ): Promise<ErrorEvent | undefined> {
    // A lookup that fails costs the warning, never the run.
    const manifest = await manifestFor(agent, userId).catch(() => [])
    const feeds = manifest.filter((feed) => feed.refused === undefined)
    return feedsNotDeliveredEvent({ agent, adapter, feeds: feeds.map((feed) => feed.name), cause })
  }

  /** Ends a run's proxy session: its token is revoked; its totals when any request went through the proxy. */
  async function closeRun(userId: string, runId: string): Promise<UsageTotals | undefined> {
    await auth.revokeRunTokens(userId, runId)
    afterAnswer.drain()
    await requestLog.flush()
    const { usage, requests } = await store.forUser(userId).proxyRequests.totalsForRun(runId)
    return requests > 0 ? usage : undefined
  }

  return {
    /** Stores the request log still queued (a clean stop). */
    close: () => {
      afterAnswer.drain()
      return requestLog.close()
    },
    /** Rows of the request log queued, not yet written. */
    get queuedRequests() {
      return afterAnswer.size + requestLog.queued
    },
    handler: handler as (req: IncomingMessage, res: ServerResponse) => Promise<void>,
    fetcher,
    manifestFor,
    /** Where the proxy is served (the daemon's URL, or `hangar run`'s own listener); unset = no proxy. */
    setBaseUrl(url: string | undefined) {
      baseUrl = url?.replace(/\/+$/, '')
    },
    get baseUrl() {
      return baseUrl
    },

    routeCliRun,
    closeRun,
    /** routeCliRun and closeRun for one run, as executeCliRun takes them. */
    forCliRun(input: Omit<CliRouteInput, 'runId'>): CliRouteHooks {
      return {
        open: (runId) => routeCliRun({ ...input, runId }),
        close: (runId) => closeRun(input.userId, runId),
      }
    },

    /** The built-in agent's way in, or undefined when it talks to its provider directly. */
    async routeBuiltin(
      userId: string,
      runId: string,
      agent: string,
      profile: ProfileConfig | null,
    ): Promise<BuiltinProxyRoute | undefined> {
      if (baseUrl === undefined || profile?.proxy === false) return undefined
      const endpoints = endpointsFor(await mintForRun(userId, runId, agent))
      return { baseUrlFor: (family) => endpoints[family], apiKey: STAND_IN_KEY }
    },

    /** The `feeds_not_delivered` warning of a built-in run that routeBuiltin left unproxied. */
    builtinFeedsNotDelivered(userId: string, agent: string, profile: ProfileConfig | null) {
      // Never 'unroutable': the built-in agent can always be routed, so the adapter is only named.
      const cause = profile?.proxy === false ? 'proxy-off' : 'no-proxy'
      return undeliveredFeeds(userId, agent, { displayName: 'Built-in agent', endpointFamilies: [] }, cause)
    },

    /** `hangar env`: a proxy token for a profile, not tied to a run, and the endpoints it opens. */
    async mintForProfile(
      principal: Principal | 'system',
      userId: string,
      profile: string,
      expiresInMs?: number,
    ): Promise<{ id: string; token: string; expiresAt: string; endpoints: Record<UrlFamily, string> }> {
      const { record, token } = await auth.createToken(principal, userId, {
        name: `env ${profile}`,
        kind: 'proxy',
        profile,
        ...(expiresInMs !== undefined && { expiresInMs }),
      })
      return { id: record.id, token, expiresAt: record.expiresAt, endpoints: endpointsFor(token) }
    },
  }
}

export type ModelProxy = ReturnType<typeof createModelProxy>
