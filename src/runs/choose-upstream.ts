// The one rule for which key goes to which endpoint, used by the proxy (for CLIs and the built-in agent)
// and by the built-in agent's direct connection. A key Hangar holds goes only to the endpoint configured
// with it:
// - a base URL the user set goes with that user's own vaulted key, or with none — never the operator's;
// - the user's vaulted key without a base URL of theirs goes to the endpoint the operator configured for
//   that provider (hangar.yaml `baseUrl`, else the usual *_BASE_URL variable), else the provider's default;
// - otherwise the operator's key (hangar.yaml `apiKeyEnv`, else the usual variable) with the operator's
//   endpoint.
// Operator endpoints are trusted (they may be local); a user's is checked on the string here and, after
// DNS, on every connection (providers/guarded-connection.ts).
import type { HangarConfig } from '../core/config.js'
import { checkProviderBaseUrl } from '../providers/base-url-policy.js'
import type { CredentialsService, ProviderCredentialView } from '../store/credentials-service.js'

type Environment = Readonly<Record<string, string | undefined>>

/** The usual variables of the providers Hangar knows; hangar.yaml's `apiKeyEnv` replaces the key's. */
const BASE_URL_ENV: Readonly<Record<string, string>> = {
  anthropic: 'ANTHROPIC_BASE_URL',
  openai: 'OPENAI_BASE_URL',
  gemini: 'GOOGLE_GEMINI_BASE_URL',
}
const KEY_ENV: Readonly<Record<string, string>> = {
  anthropic: 'ANTHROPIC_API_KEY',
  openai: 'OPENAI_API_KEY',
  openrouter: 'OPENROUTER_API_KEY',
  gemini: 'GEMINI_API_KEY',
}

function nonEmpty(value: string | null | undefined): string | undefined {
  const trimmed = value?.trim()
  return trimmed ? trimmed : undefined
}

/** The endpoint the operator configured for a provider: hangar.yaml first, then the environment. */
export function operatorEndpoint(
  provider: string,
  config: Pick<HangarConfig, 'providers'>,
  env: Environment,
): { baseUrl: string | undefined; apiKey: string | undefined; keyEnv: string | undefined } {
  const configured = config.providers[provider]
  const baseUrlEnv = BASE_URL_ENV[provider]
  const keyEnv = configured?.apiKeyEnv ?? KEY_ENV[provider]
  return {
    baseUrl: nonEmpty(configured?.baseUrl) ?? (baseUrlEnv ? nonEmpty(env[baseUrlEnv]) : undefined),
    apiKey: keyEnv ? nonEmpty(env[keyEnv]) : undefined,
    keyEnv,
  }
}

export interface ChosenUpstream {
  /** Undefined: the caller's default for the provider (the operator configured none). */
  baseUrl: string | undefined
  apiKey: string | undefined
  /**
   * The base URL is one the user set: its connections must go through the guarded lookup, and nothing but
   * the user's own key may travel with it.
   */
  userSet: boolean
}

export async function chooseUpstream(input: {
  provider: string
  /** What the operator configured for this provider (operatorEndpoint, or the CLI family's endpoint). */
  operator: { baseUrl: string | undefined; apiKey: string | undefined }
  config: Pick<HangarConfig, 'allowPrivateNetworks'>
  credentials: CredentialsService
  userId: string
  /** The user's provider settings when the caller has read them already. */
  stored?: readonly ProviderCredentialView[]
}): Promise<ChosenUpstream> {
  const { provider, credentials, userId } = input
  const stored = input.stored ?? (await credentials.list(userId))
  const settings = stored.find((entry) => entry.provider === provider)
  const vaulted = settings?.keyConfigured ? await credentials.revealKey(userId, provider) : null
  const userBaseUrl = nonEmpty(settings?.baseUrl)
  if (userBaseUrl) {
    // Also checked when saved; checked again here since the policy or the stored row may have changed.
    checkProviderBaseUrl(userBaseUrl, { allowLocal: input.config.allowPrivateNetworks })
    return { baseUrl: userBaseUrl, apiKey: vaulted ?? undefined, userSet: true }
  }
  if (vaulted) return { baseUrl: input.operator.baseUrl, apiKey: vaulted, userSet: false }
  return { baseUrl: input.operator.baseUrl, apiKey: input.operator.apiKey, userSet: false }
}
