// Where the proxy sends a session's traffic, and with which key: what the endpoint would have been without
// the proxy. For a CLI, its family's provider (the user's stored settings, then hangar.yaml, then the usual
// environment variables, then the public endpoint); for the built-in agent, the provider it chose. A key
// Hangar holds (vault or environment) is swapped in by the proxy; without one the client's own auth passes.
import { defaultEndpointFor } from '../adapters/model-endpoint.js'
import type { HangarConfig } from '../core/config.js'
import { checkProviderBaseUrl } from '../providers/base-url-policy.js'
import { resolveBaseUrl } from '../providers/create-llm-client.js'
import type { Upstream } from '../proxy/forward-upstream.js'
import type { UrlFamily } from '../proxy/proxy-errors.js'
import type { CredentialsService } from '../store/credentials-service.js'
import { resolveBuiltinEndpoint } from './builtin-model.js'

const PUBLIC_BASE_URL: Record<UrlFamily, string> = {
  anthropic: 'https://api.anthropic.com',
  openai: 'https://api.openai.com/v1',
  gemini: 'https://generativelanguage.googleapis.com',
}

/** The wire family a proxy URL family stands for when looking up a CLI's configured endpoint. */
const ENDPOINT_FAMILY = { anthropic: 'anthropic', openai: 'openai-chat', gemini: 'gemini' } as const

const CACHE_MS = 5_000

export function createProxyUpstreams(options: {
  config: HangarConfig
  env: Readonly<Record<string, string | undefined>>
  credentials: CredentialsService
}) {
  const { config, env, credentials } = options
  const cache = new Map<string, { upstream: Promise<Upstream>; until: number }>()

  async function forCli(userId: string, family: UrlFamily): Promise<Upstream> {
    const settings = (await credentials.list(userId)).find((entry) => entry.provider === family)
    const configured = defaultEndpointFor(ENDPOINT_FAMILY[family], env, config.providers)
    const vaulted = settings?.keyConfigured ? await credentials.revealKey(userId, family) : null
    const baseUrl = settings?.baseUrl ?? configured?.baseUrl ?? PUBLIC_BASE_URL[family]
    if (settings?.baseUrl)
      checkProviderBaseUrl(settings.baseUrl, { allowLocal: config.allowPrivateNetworks })
    const apiKey = vaulted ?? configured?.apiKey
    return apiKey ? { baseUrl, apiKey } : { baseUrl }
  }

  async function forBuiltin(userId: string, profile: string, family: UrlFamily): Promise<Upstream> {
    const chosen = await resolveBuiltinEndpoint({
      config,
      profile: config.agents[profile] ?? null,
      env,
      credentials,
      userId,
    })
    const baseUrl = resolveBaseUrl(chosen.provider, chosen.baseUrl) ?? PUBLIC_BASE_URL[family]
    return chosen.apiKey ? { baseUrl, apiKey: chosen.apiKey } : { baseUrl }
  }

  const isBuiltin = (profile: string) =>
    profile === 'builtin' || config.agents[profile]?.adapter === 'builtin'

  return {
    /** Cached for a few seconds: a key or base URL changed in the settings applies to the next requests. */
    upstreamFor(userId: string, profile: string, family: UrlFamily): Promise<Upstream> {
      const key = `${userId}\0${profile}\0${family}`
      const now = Date.now()
      const cached = cache.get(key)
      if (cached && cached.until > now) return cached.upstream
      const upstream = isBuiltin(profile) ? forBuiltin(userId, profile, family) : forCli(userId, family)
      cache.set(key, { upstream, until: now + CACHE_MS })
      upstream.catch(() => cache.delete(key))
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
