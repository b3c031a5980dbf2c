// Which model the built-in agent talks to, and with which key: the profile's provider and model, else the
// user's stored provider settings, else what the environment offers (ANTHROPIC_API_KEY, OPENAI_BASE_URL…).
// Keys come from the vault (per user) or the environment; keyless endpoints only when local providers
// are allowed.
import type { HangarConfig, ProfileConfig } from '../core/config.js'
import { AppError } from '../core/errors.js'
import { checkProviderBaseUrl } from '../providers/base-url-policy.js'
import { createLlmClient } from '../providers/create-llm-client.js'
import type { LlmClient } from '../providers/types.js'
import type { CredentialsService } from '../store/credentials-service.js'

export const DEFAULT_BUILTIN_MODEL = 'claude-sonnet-4-6'

const DEFAULT_KEY_ENV: Record<string, string> = {
  anthropic: 'ANTHROPIC_API_KEY',
  openai: 'OPENAI_API_KEY',
  openrouter: 'OPENROUTER_API_KEY',
  gemini: 'GEMINI_API_KEY',
}
const DEFAULT_BASE_URL_ENV: Record<string, string> = {
  anthropic: 'ANTHROPIC_BASE_URL',
  openai: 'OPENAI_BASE_URL',
}

export interface BuiltinModel {
  client: LlmClient
  provider: string
  model: string
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
}

/** The provider, endpoint and key the built-in agent uses (the proxy's upstream when it is proxied). */
export interface BuiltinProvider {
  provider: string
  baseUrl: string | undefined
  apiKey: string | undefined
  model: string
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
      })
  return { client, provider: chosen.provider, model: chosen.model }
}

/**
 * The provider, endpoint and key alone — what the proxy needs as the built-in agent's upstream, where the
 * model is the client's business.
 */
export async function resolveBuiltinEndpoint(
  input: Omit<BuiltinProviderInput, 'model'>,
): Promise<Omit<BuiltinProvider, 'model'>> {
  return (await resolveProviderSettings(input)).endpoint
}

export async function resolveBuiltinProvider(input: BuiltinProviderInput): Promise<BuiltinProvider> {
  const { endpoint, settingsModel, configuredModel } = await resolveProviderSettings(input)
  const model =
    input.model ??
    input.profile?.model ??
    settingsModel ??
    configuredModel ??
    (endpoint.provider === 'anthropic' ? DEFAULT_BUILTIN_MODEL : undefined)
  if (!model) {
    throw new AppError('usage', `no model chosen for provider "${endpoint.provider}"`, {
      hint: 'pass --model, or set model: in the profile or providers: of hangar.yaml',
    })
  }
  return { ...endpoint, model }
}

async function resolveProviderSettings(input: Omit<BuiltinProviderInput, 'model'>) {
  const { config, profile, env, credentials, userId } = input
  const stored = await credentials.list(userId)
  const provider =
    profile?.provider ??
    stored.find((credential) => credential.keyConfigured)?.provider ??
    (env.ANTHROPIC_API_KEY ? 'anthropic' : undefined) ??
    (env.OPENAI_API_KEY || env.OPENAI_BASE_URL ? 'openai' : undefined) ??
    (env.OPENROUTER_API_KEY ? 'openrouter' : undefined) ??
    Object.keys(config.providers)[0]
  if (!provider) {
    throw new AppError('unavailable', 'the built-in agent has no model provider', {
      retryable: false,
      hint: 'set ANTHROPIC_API_KEY, or OPENAI_BASE_URL for a local OpenAI-compatible server, or add providers: to hangar.yaml',
    })
  }
  const configured = config.providers[provider]
  const settings = stored.find((credential) => credential.provider === provider)
  const baseUrlEnv = DEFAULT_BASE_URL_ENV[provider]
  const baseUrl = settings?.baseUrl ?? configured?.baseUrl ?? (baseUrlEnv ? env[baseUrlEnv] : undefined)
  const vaulted = settings?.keyConfigured ? await credentials.revealKey(userId, provider) : null
  const keyEnv = configured?.apiKeyEnv ?? DEFAULT_KEY_ENV[provider]
  const apiKey = vaulted ?? (keyEnv ? env[keyEnv] : undefined) ?? undefined
  // A user's own base URL is an SSRF risk (the operator's, from hangar.yaml or the environment, is not):
  // private addresses only with providers.allowPrivateNetworks. Keyless endpoints must be local ones.
  if (settings?.baseUrl) checkProviderBaseUrl(settings.baseUrl, { allowLocal: config.allowPrivateNetworks })
  if (!apiKey && !(baseUrl && isLoopback(baseUrl))) {
    throw new AppError('unavailable', `no API key for provider "${provider}"`, {
      retryable: false,
      hint: `set ${keyEnv ?? 'its apiKeyEnv'} or store a key in the provider settings`,
    })
  }
  return {
    endpoint: { provider, baseUrl: baseUrl || undefined, apiKey: apiKey || undefined },
    settingsModel: settings?.model ?? undefined,
    configuredModel: configured?.model,
  }
}
