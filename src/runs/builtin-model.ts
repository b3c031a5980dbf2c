// Which model the built-in agent talks to, and with which key. The provider is decided in one place
// (chooseBuiltinProvider), for the direct path and the proxy's built-in path alike: the profile's, else the
// user's default (Settings), else the operator's (hangar.yaml `defaultAgent`'s provider, else the first of
// `providers:`), else what the daemon's environment offers (ANTHROPIC_API_KEY, OPENAI_BASE_URL…).
// Which key goes with which base URL is choose-upstream.ts's rule; keyless endpoints must be local.
import type { HangarConfig, ProfileConfig } from '../core/config.js'
import { AppError } from '../core/errors.js'
import { createLlmClient, resolveBaseUrl } from '../providers/create-llm-client.js'
import { createGuardedFetch } from '../providers/guarded-connection.js'
import type { LlmClient } from '../providers/types.js'
import type { CredentialsService } from '../store/credentials-service.js'
import { chooseUpstream, operatorEndpoint } from './choose-upstream.js'

export const DEFAULT_BUILTIN_MODEL = 'claude-sonnet-4-6'
export const BUILTIN_NO_PROVIDER = 'the built-in agent has no model provider'
/** How to give the built-in agent a provider: the UI, `hangar agents` and the run's error all say this. */
export const BUILTIN_PROVIDER_FIX =
  "store a provider key in Settings → Providers and choose that provider under Settings → Built-in agent, or set ANTHROPIC_API_KEY (or OPENAI_BASE_URL for a local OpenAI-compatible server) in the daemon's environment and restart it, or add providers: to hangar.yaml"

export interface BuiltinModel {
  client: LlmClient
  provider: string
  model: string
}

/** Where the built-in agent's provider came from, as Settings explains it. */
export type BuiltinProviderSource = 'profile' | 'user' | 'operator' | 'environment'

export interface BuiltinProviderChoice {
  provider: string
  source: BuiltinProviderSource
  /** For people: "your default", "profile reviewer", "ANTHROPIC_API_KEY in the daemon's environment"… */
  reason: string
  /** The model that source names with the provider, if any. */
  model: string | undefined
}

/**
 * The one precedence for the built-in agent's provider: profile → the user's default → the operator's
 * default → the daemon's environment. Undefined when none offers one.
 */
export function chooseBuiltinProvider(input: {
  config: HangarConfig
  profile: ProfileConfig | null
  profileName?: string | undefined
  userDefault: { provider: string; model: string | null } | undefined
  env: Readonly<Record<string, string | undefined>>
}): BuiltinProviderChoice | undefined {
  const { config, profile, userDefault, env } = input
  if (profile?.provider) {
    return {
      provider: profile.provider,
      source: 'profile',
      reason: input.profileName ? `profile ${input.profileName}` : 'profile',
      model: profile.model,
    }
  }
  if (userDefault) {
    return {
      provider: userDefault.provider,
      source: 'user',
      reason: 'your default',
      model: userDefault.model ?? undefined,
    }
  }
  const defaultAgent = config.defaultAgent ? config.agents[config.defaultAgent] : undefined
  if (defaultAgent?.adapter === 'builtin' && defaultAgent.provider) {
    return {
      provider: defaultAgent.provider,
      source: 'operator',
      reason: `operator default (defaultAgent ${config.defaultAgent} in hangar.yaml)`,
      model: defaultAgent.model,
    }
  }
  const firstConfigured = Object.keys(config.providers)[0]
  if (firstConfigured) {
    return {
      provider: firstConfigured,
      source: 'operator',
      reason: `operator default (providers.${firstConfigured} in hangar.yaml)`,
      model: config.providers[firstConfigured]?.model,
    }
  }
  const fromEnv = (provider: string, variable: string): BuiltinProviderChoice => ({
    provider,
    source: 'environment',
    reason: `${variable} in the daemon's environment`,
    model: undefined,
  })
  if (env.ANTHROPIC_API_KEY) return fromEnv('anthropic', 'ANTHROPIC_API_KEY')
  if (env.OPENAI_API_KEY) return fromEnv('openai', 'OPENAI_API_KEY')
  if (env.OPENAI_BASE_URL) return fromEnv('openai', 'OPENAI_BASE_URL')
  if (env.OPENROUTER_API_KEY) return fromEnv('openrouter', 'OPENROUTER_API_KEY')
  return undefined
}

function isLoopback(url: string): boolean {
  const host = new URL(url).hostname
  return host === 'localhost' || host === '[::1]' || host === '::1' || /^127\./.test(host)
}

export interface BuiltinProviderInput {
  config: HangarConfig
  profile: ProfileConfig | null
  model?: string | undefined
  env: Readonly<Record<string, string | undefined>>
  credentials: CredentialsService
  userId: string
  /** The profile's name, for the reason Settings and events give. */
  profileName?: string | undefined
}

/** The provider, endpoint and key the built-in agent uses (the proxy's upstream when it is proxied). */
export interface BuiltinProvider {
  provider: string
  baseUrl: string | undefined
  apiKey: string | undefined
  /** The base URL is one the user set (connections to it are checked after DNS). */
  userSet: boolean
  model: string
  /** Why this provider (chooseBuiltinProvider). */
  source: BuiltinProviderSource
  reason: string
}

/** Where the built-in agent's proxied traffic enters the proxy (its family's base URL and a stand-in key). */
export interface BuiltinProxyRoute {
  baseUrlFor(family: 'anthropic' | 'openai'): string
  apiKey: string
}

export async function resolveBuiltinModel(
  input: BuiltinProviderInput,
  proxy?: BuiltinProxyRoute,
): Promise<BuiltinModel> {
  const chosen = await resolveBuiltinProvider(input)
  const client = proxy
    ? createLlmClient({
        provider: chosen.provider,
        baseUrl: proxy.baseUrlFor(chosen.provider === 'anthropic' ? 'anthropic' : 'openai'),
        apiKey: proxy.apiKey,
      })
    : createLlmClient({
        provider: chosen.provider,
        ...(chosen.baseUrl && { baseUrl: chosen.baseUrl }),
        ...(chosen.apiKey && { apiKey: chosen.apiKey }),
        ...(chosen.userSet && {
          fetch: createGuardedFetch({ allowPrivate: input.config.allowPrivateNetworks }),
        }),
      })
  return { client, provider: chosen.provider, model: chosen.model }
}

/**
 * The provider, endpoint and key alone — what the proxy needs as the built-in agent's upstream, where the
 * model is the client's business.
 */
export async function resolveBuiltinEndpoint(
  input: Omit<BuiltinProviderInput, 'model'>,
): Promise<Omit<BuiltinProvider, 'model' | 'source' | 'reason'>> {
  return (await resolveProviderSettings(input)).endpoint
}

export async function resolveBuiltinProvider(input: BuiltinProviderInput): Promise<BuiltinProvider> {
  const { endpoint, choice, settingsModel, configuredModel } = await resolveProviderSettings(input)
  const model =
    input.model ??
    input.profile?.model ??
    choice.model ??
    settingsModel ??
    configuredModel ??
    (endpoint.provider === 'anthropic' ? DEFAULT_BUILTIN_MODEL : undefined)
  if (!model) {
    throw new AppError('usage', `no model chosen for provider "${endpoint.provider}"`, {
      hint: 'pass --model, or set model: in the profile or providers: of hangar.yaml',
    })
  }
  return { ...endpoint, model, source: choice.source, reason: choice.reason }
}

async function resolveProviderSettings(input: Omit<BuiltinProviderInput, 'model'>) {
  const { config, profile, env, credentials, userId } = input
  const stored = await credentials.list(userId)
  const choice = chooseBuiltinProvider({
    config,
    profile,
    profileName: input.profileName,
    userDefault: await credentials.builtinDefault(userId),
    env,
  })
  if (!choice) {
    throw new AppError('unavailable', BUILTIN_NO_PROVIDER, { retryable: false, hint: BUILTIN_PROVIDER_FIX })
  }
  const { provider } = choice
  const operator = operatorEndpoint(provider, config, env)
  const chosen = await chooseUpstream({ provider, operator, config, credentials, userId, stored })
  const { baseUrl, apiKey } = chosen
  // A provider Hangar has no default for is only known by a base URL: without one there is nowhere to go
  // (and no other provider's endpoint or key may stand in for it).
  if (resolveBaseUrl(provider, baseUrl) === undefined) {
    throw new AppError('unavailable', `the model provider "${provider}" has no base URL`, {
      retryable: false,
      hint: `add providers.${provider}.baseUrl to hangar.yaml, or set a base URL for "${provider}" in the provider settings`,
    })
  }
  // Keyless endpoints must be local ones (Ollama, vLLM).
  if (!apiKey && !(baseUrl && isLoopback(baseUrl))) {
    // The operator's key never goes to a base URL a user set: say so rather than "set the variable".
    throw new AppError(
      'unavailable',
      chosen.userSet
        ? `no API key for provider "${provider}": the base URL in your provider settings goes only with a key of your own`
        : `no API key for provider "${provider}"`,
      {
        retryable: false,
        hint: chosen.userSet
          ? `store your key for "${provider}" in the provider settings, or remove your base URL to use the instance's endpoint`
          : `set ${operator.keyEnv ?? 'its apiKeyEnv'} or store a key in the provider settings`,
      },
    )
  }
  const settings = stored.find((credential) => credential.provider === provider)
  return {
    endpoint: { provider, baseUrl, apiKey, userSet: chosen.userSet },
    choice,
    settingsModel: settings?.model ?? undefined,
    configuredModel: config.providers[provider]?.model,
  }
}
