// Where the proxy sends a session's traffic, and with which key: what the endpoint would have been without
// the proxy. For a CLI, its family's provider; for the built-in agent (a hangar.yaml profile or one the
// user made), the provider it chose — never another family's endpoint or key. Which key may travel to
// which base URL is choose-upstream.ts's rule; a user-set base URL is connected to through the guarded
// lookup. A key Hangar holds replaces the client's auth; without one the client's own auth passes, except
// to a user-set base URL from a run's agent (its auth, a CLI login or key on this host, is the operator's).
import { defaultEndpointFor } from '../adapters/model-endpoint.js'
import type { HangarConfig, ProfileConfig } from '../core/config.js'
import { AppError } from '../core/errors.js'
import { resolveBaseUrl } from '../providers/create-llm-client.js'
import { guardedLookup } from '../providers/guarded-connection.js'
import type { Upstream } from '../proxy/forward-upstream.js'
import type { UrlFamily } from '../proxy/proxy-errors.js'
import type { CredentialsService } from '../store/credentials-service.js'
import { resolveBuiltinEndpoint } from './builtin-model.js'
import { type ChosenUpstream, chooseUpstream } from './choose-upstream.js'

const PUBLIC_BASE_URL: Record<UrlFamily, string> = {
  anthropic: 'https://api.anthropic.com',
  openai: 'https://api.openai.com/v1',
  gemini: 'https://generativelanguage.googleapis.com',
}

/** The wire family a proxy URL family stands for when looking up a CLI's configured endpoint. */
const ENDPOINT_FAMILY = { anthropic: 'anthropic', openai: 'openai-chat', gemini: 'gemini' } as const

const CACHE_MS = 5_000

/** Who asks: the token's user and profile, and whether it is a run's (its agent runs on this host). */
export interface UpstreamRequester {
  userId: string
  profile: string
  runId: string | null
}

interface CachedUpstream {
  upstream: Promise<Upstream>
  /** Set once `upstream` has resolved: later requests take it without waiting a turn. */
  resolved?: Upstream
  until: number
}

export function createProxyUpstreams(options: {
  config: HangarConfig
  env: Readonly<Record<string, string | undefined>>
  credentials: CredentialsService
  /** The requester's profile: hangar.yaml's, else the user's own (null for a bare adapter id or none). */
  profileFor(requester: UpstreamRequester): Promise<ProfileConfig | null>
}) {
  const { config, env, credentials } = options
  const cache = new Map<string, CachedUpstream>()

  function toUpstream(requester: UpstreamRequester, chosen: ChosenUpstream, baseUrl: string): Upstream {
    const upstream: Upstream = { baseUrl }
    if (chosen.apiKey) upstream.apiKey = chosen.apiKey
    if (chosen.userSet) {
      upstream.lookup = guardedLookup({ allowPrivate: config.allowPrivateNetworks })
      if (!chosen.apiKey && requester.runId !== null) upstream.dropClientAuth = true
    }
    return upstream
  }

  async function forCli(requester: UpstreamRequester, family: UrlFamily): Promise<Upstream> {
    const configured = defaultEndpointFor(ENDPOINT_FAMILY[family], env, config.providers)
    const chosen = await chooseUpstream({
      provider: family,
      operator: { baseUrl: configured?.baseUrl, apiKey: configured?.apiKey },
      config,
      credentials,
      userId: requester.userId,
    })
    return toUpstream(requester, chosen, chosen.baseUrl ?? PUBLIC_BASE_URL[family])
  }

  async function forBuiltin(
    requester: UpstreamRequester,
    profile: ProfileConfig | null,
    family: UrlFamily,
  ): Promise<Upstream> {
    const chosen = await resolveBuiltinEndpoint({
      config,
      profile,
      env,
      credentials,
      userId: requester.userId,
    })
    // The built-in agent speaks Anthropic to `anthropic` and OpenAI Chat Completions to everything else.
    const speaks: UrlFamily = chosen.provider === 'anthropic' ? 'anthropic' : 'openai'
    if (family !== speaks) {
      throw new AppError(
        'not_found',
        `agent "${requester.profile}" uses provider "${chosen.provider}", which this proxy serves under /${speaks}, not /${family}`,
      )
    }
    const baseUrl = resolveBaseUrl(chosen.provider, chosen.baseUrl)
    // resolveBuiltinEndpoint refuses a provider without a base URL; this is the same refusal, kept local.
    if (!baseUrl) throw new AppError('unavailable', `the model provider "${chosen.provider}" has no base URL`)
    return toUpstream(requester, chosen, baseUrl)
  }

  async function resolve(requester: UpstreamRequester, family: UrlFamily): Promise<Upstream> {
    const profile = requester.profile === 'builtin' ? null : await options.profileFor(requester)
    const builtin = requester.profile === 'builtin' || profile?.adapter === 'builtin'
    return builtin ? forBuiltin(requester, profile, family) : forCli(requester, family)
  }

  return {
    /** Cached for a few seconds: a key or base URL changed in the settings applies to the next requests. */
    upstreamFor(requester: UpstreamRequester, family: UrlFamily): Upstream | Promise<Upstream> {
      const key = `${requester.userId}\0${requester.profile}\0${requester.runId !== null}\0${family}`
      const now = Date.now()
      const cached = cache.get(key)
      if (cached && cached.until > now) return cached.resolved ?? cached.upstream
      const upstream = resolve(requester, family)
      const entry: CachedUpstream = { upstream, until: now + CACHE_MS }
      cache.set(key, entry)
      upstream.then(
        (resolved) => {
          entry.resolved = resolved
        },
        () => {
          if (cache.get(key) === entry) cache.delete(key)
        },
      )
      return upstream
    },
    /** Whether Hangar holds a key (or a configured endpoint) for a CLI family: then the CLI can be routed. */
    async configuredFor(userId: string, family: UrlFamily): Promise<boolean> {
      if (defaultEndpointFor(ENDPOINT_FAMILY[family], env, config.providers)) return true
      const settings = (await credentials.list(userId)).find((entry) => entry.provider === family)
      return Boolean(settings?.keyConfigured || settings?.baseUrl)
    },
  }
}

export type ProxyUpstreams = ReturnType<typeof createProxyUpstreams>
