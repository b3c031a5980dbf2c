// Where an adapter's model traffic goes when nothing more specific was chosen: the endpoint a user already
// configured, through hangar.yaml `providers:` or the usual environment variables. This is the one seam
// the proxy replaces later (it hands out its own base URL per run instead), so adapters never read these
// variables themselves.
import type { HangarConfig } from '../core/config.js'
import type { AdapterDef, ModelEndpoint, ModelFamily } from './types.js'

type Environment = Readonly<Record<string, string | undefined>>
export type ProviderEntries = HangarConfig['providers']

interface FamilySource {
  /** The hangar.yaml provider that serves this family. */
  provider: 'anthropic' | 'openai' | 'gemini'
  baseUrlEnv: string
  apiKeyEnv: string
  /** The public endpoint, used when only a key is configured. */
  publicBaseUrl: string
}

// Both OpenAI wire formats share one provider: the same key and base URL serve Chat Completions and
// Responses. Base URL conventions follow ModelEndpoint: anthropic without /v1, openai with /v1.
const FAMILY_SOURCES: Record<ModelFamily, FamilySource> = {
  anthropic: {
    provider: 'anthropic',
    baseUrlEnv: 'ANTHROPIC_BASE_URL',
    apiKeyEnv: 'ANTHROPIC_API_KEY',
    publicBaseUrl: 'https://api.anthropic.com',
  },
  'openai-chat': {
    provider: 'openai',
    baseUrlEnv: 'OPENAI_BASE_URL',
    apiKeyEnv: 'OPENAI_API_KEY',
    publicBaseUrl: 'https://api.openai.com/v1',
  },
  'openai-responses': {
    provider: 'openai',
    baseUrlEnv: 'OPENAI_BASE_URL',
    apiKeyEnv: 'OPENAI_API_KEY',
    publicBaseUrl: 'https://api.openai.com/v1',
  },
  gemini: {
    provider: 'gemini',
    baseUrlEnv: 'GOOGLE_GEMINI_BASE_URL',
    apiKeyEnv: 'GEMINI_API_KEY',
    publicBaseUrl: 'https://generativelanguage.googleapis.com',
  },
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed === '' ? undefined : trimmed
}

function withoutTrailingSlash(url: string): string {
  return url.replace(/\/+$/, '')
}

/**
 * The endpoint configured for one wire family, or undefined when neither hangar.yaml nor the environment
 * names a base URL or a key for it (the CLI then keeps its own login and configuration).
 * hangar.yaml wins over the environment; a key without a base URL means the public endpoint.
 */
export function defaultEndpointFor(
  family: ModelFamily,
  env: Environment,
  providers: ProviderEntries = {},
): ModelEndpoint | undefined {
  const source = FAMILY_SOURCES[family]
  const configured = providers[source.provider]
  const baseUrl = nonEmpty(configured?.baseUrl) ?? nonEmpty(env[source.baseUrlEnv])
  const apiKey = nonEmpty(env[configured?.apiKeyEnv ?? source.apiKeyEnv])
  if (baseUrl === undefined && apiKey === undefined) return undefined
  const endpoint: ModelEndpoint = {
    family,
    baseUrl: withoutTrailingSlash(baseUrl ?? source.publicBaseUrl),
  }
  if (apiKey !== undefined) endpoint.apiKey = apiKey
  if (configured?.model !== undefined) endpoint.model = configured.model
  return endpoint
}

/** The first family the adapter can be pointed at (in its order of preference) that has an endpoint. */
export function endpointForAdapter(
  adapter: Pick<AdapterDef, 'endpointFamilies'>,
  env: Environment,
  providers: ProviderEntries = {},
): ModelEndpoint | undefined {
  for (const family of adapter.endpointFamilies) {
    const endpoint = defaultEndpointFor(family, env, providers)
    if (endpoint) return endpoint
  }
  return undefined
}
