// Provider keys per user, write-only: stored as vault envelopes, shown as "configured ••••1234". When
// the instance has no key (PostgreSQL without HANGAR_SECRET_KEYS) only key operations fail — with
// `vault_unavailable` — and keyless providers keep working.
import { AppError } from '../core/errors.js'
import { KNOWN_PROVIDERS } from '../core/provider-names.js'
import { actorOf, type Principal } from './auth-service.js'
import type { BuiltinDefault } from './repositories/builtin-settings-repository.js'
import type { ProviderCredential } from './repositories/credentials-repository.js'
import type { Store } from './store.js'
import type { Vault } from './vault.js'

export const PROVIDER_KEY_PURPOSE = 'provider-key'

/** What an API may show of a credential: never the key or its envelope. */
export interface ProviderCredentialView {
  provider: string
  keyConfigured: boolean
  keyLast4: string | null
  model: string | null
  baseUrl: string | null
  updatedAt: string
}

export function toCredentialView(credential: ProviderCredential): ProviderCredentialView {
  return {
    provider: credential.provider,
    keyConfigured: credential.keyEnvelope !== null,
    keyLast4: credential.keyLast4,
    model: credential.model,
    baseUrl: credential.baseUrl,
    updatedAt: credential.updatedAt,
  }
}

export type VaultState = { vault: Vault } | { vault: null; reason: string }

export function createCredentialsService(options: {
  store: Store
  vaultState: VaultState
  /** Provider names hangar.yaml declares (with their base URLs), besides the ones Hangar knows. */
  configuredProviders?: readonly string[]
}) {
  const { store, vaultState } = options
  /** A provider Hangar knows, or one hangar.yaml declares: it has a base URL without the user giving one. */
  const isKnownProvider = (provider: string) =>
    (KNOWN_PROVIDERS as readonly string[]).includes(provider) ||
    (options.configuredProviders ?? []).includes(provider)
  // Every key this process learns (stored or decrypted) is registered with the one redactor, so a copy
  // of it in a file, a command's output or a model reply is cut out of tools, messages and events.
  const { redactor } = store

  function requireVault(): Vault {
    if (vaultState.vault) return vaultState.vault
    throw new AppError('vault_unavailable', `provider keys cannot be stored or read: ${vaultState.reason}`, {
      hint: 'set HANGAR_SECRET_KEYS=kid:base64key (generate a key with: openssl rand -base64 32) and restart',
    })
  }

  return {
    vaultAvailable: vaultState.vault !== null,

    async list(userId: string): Promise<ProviderCredentialView[]> {
      return (await store.forUser(userId).credentials.list()).map(toCredentialView)
    },

    isKnownProvider,

    async get(userId: string, provider: string): Promise<ProviderCredentialView | undefined> {
      const credential = await store.forUser(userId).credentials.get(provider)
      return credential && toCredentialView(credential)
    },

    async put(
      principal: Principal | 'system',
      userId: string,
      provider: string,
      input: { apiKey?: string | null; model?: string | null; baseUrl?: string | null },
    ): Promise<ProviderCredentialView> {
      if (input.apiKey === undefined && input.model === undefined && input.baseUrl === undefined) {
        throw new AppError('invalid_request', 'nothing to change: give apiKey, model or baseUrl', {
          details: {
            fields: [{ path: '(body)', message: 'expected at least one of apiKey, model, baseUrl' }],
          },
        })
      }
      if (input.apiKey) redactor.add(input.apiKey)
      const keyChange =
        input.apiKey === undefined
          ? {}
          : input.apiKey === null || input.apiKey === ''
            ? { keyEnvelope: null, keyLast4: null }
            : {
                keyEnvelope: requireVault().encrypt(input.apiKey, { purpose: PROVIDER_KEY_PURPOSE, userId }),
                keyLast4: input.apiKey.length >= 12 ? input.apiKey.slice(-4) : null,
              }
      return store.transaction(async (repositories) => {
        if (!isKnownProvider(provider)) {
          const existing = await repositories.forUser(userId).credentials.get(provider)
          const baseUrl = input.baseUrl === undefined ? existing?.baseUrl : input.baseUrl
          if (!baseUrl) {
            throw new AppError(
              'invalid_request',
              `provider "${provider}" is not one Hangar knows (${KNOWN_PROVIDERS.join(', ')}): give it a baseUrl`,
              { details: { fields: [{ path: 'baseUrl', message: 'required for this provider' }] } },
            )
          }
        }
        const saved = await repositories.forUser(userId).credentials.upsert(provider, {
          ...keyChange,
          ...(input.model !== undefined && { model: input.model }),
          ...(input.baseUrl !== undefined && { baseUrl: input.baseUrl }),
        })
        await repositories.forUser(userId).audit.append({
          actor: actorOf(principal),
          action: 'credential.update',
          targetType: 'provider',
          targetId: provider,
          details: {
            keyChanged: input.apiKey !== undefined,
            ...(input.model !== undefined && { model: input.model }),
            ...(input.baseUrl !== undefined && { baseUrl: input.baseUrl }),
          },
        })
        return toCredentialView(saved)
      })
    },

    async remove(principal: Principal | 'system', userId: string, provider: string): Promise<boolean> {
      return store.transaction(async (repositories) => {
        const removed = await repositories.forUser(userId).credentials.delete(provider)
        if (removed) {
          await repositories.forUser(userId).audit.append({
            actor: actorOf(principal),
            action: 'credential.delete',
            targetType: 'provider',
            targetId: provider,
          })
        }
        return removed
      })
    },

    /** The provider and model the user chose for the built-in agent (profiles naming one win). */
    async builtinDefault(userId: string): Promise<BuiltinDefault | undefined> {
      return store.forUser(userId).builtinSettings.get()
    },

    /**
     * Sets (or, with `provider: null`, clears) the user's default for the built-in agent. The provider must
     * be one Hangar knows, one hangar.yaml declares, or one the user gave settings (a base URL) for.
     */
    async setBuiltinDefault(
      principal: Principal | 'system',
      userId: string,
      input: { provider: string | null; model?: string | null | undefined },
    ): Promise<BuiltinDefault | null> {
      return store.transaction(async (repositories) => {
        const scope = repositories.forUser(userId)
        if (input.provider === null) {
          await scope.builtinSettings.clear()
        } else if (!isKnownProvider(input.provider) && !(await scope.credentials.get(input.provider))) {
          throw new AppError('invalid_request', `provider "${input.provider}" is not one Hangar knows`, {
            hint: `known providers: ${KNOWN_PROVIDERS.join(', ')}; for another (e.g. Ollama) save its base URL in the provider settings first`,
            details: { fields: [{ path: 'provider', message: 'unknown provider' }] },
          })
        }
        const saved =
          input.provider === null
            ? null
            : await scope.builtinSettings.put({ provider: input.provider, model: input.model ?? null })
        await scope.audit.append({
          actor: actorOf(principal),
          action: 'settings.builtin',
          targetType: 'provider',
          targetId: input.provider ?? '(none)',
          details: { model: input.model ?? null },
        })
        return saved
      })
    },

    /** The plaintext key, for the proxy and the built-in agent only. Never returned by an API. */
    async revealKey(userId: string, provider: string): Promise<string | null> {
      const credential = await store.forUser(userId).credentials.get(provider)
      if (!credential?.keyEnvelope) return null
      const key = requireVault().decrypt(credential.keyEnvelope, { purpose: PROVIDER_KEY_PURPOSE, userId })
      redactor.add(key)
      return key
    },

    /**
     * Registers every vaulted key with the redactor (at start-up: keys stored by an earlier process or
     * another node). An envelope this instance cannot open is skipped; it cannot be used here either.
     */
    async registerVaultedKeys(): Promise<number> {
      if (!vaultState.vault) return 0
      let registered = 0
      for (const row of await store.credentialEnvelopes.list()) {
        try {
          redactor.add(
            vaultState.vault.decrypt(row.keyEnvelope, { purpose: PROVIDER_KEY_PURPOSE, userId: row.userId }),
          )
          registered++
        } catch {
          // Under a key that is not in the keyring: `hangar secrets rewrap` reports it.
        }
      }
      return registered
    },

    /** Re-encrypts every envelope that is not under the active key. */
    async rewrapAll(): Promise<{
      rewrapped: number
      current: number
      failed: { id: string; reason: string }[]
    }> {
      const vault = requireVault()
      const summary = { rewrapped: 0, current: 0, failed: [] as { id: string; reason: string }[] }
      for (const row of await store.credentialEnvelopes.list()) {
        if (!vault.needsRewrap(row.keyEnvelope)) {
          summary.current++
          continue
        }
        try {
          const next = vault.rewrap(row.keyEnvelope, { purpose: PROVIDER_KEY_PURPOSE, userId: row.userId })
          if (await store.credentialEnvelopes.replace(row.id, row.keyEnvelope, next)) summary.rewrapped++
        } catch (error) {
          summary.failed.push({
            id: row.id,
            reason: error instanceof AppError ? error.message : 'unknown error',
          })
        }
      }
      return summary
    },
  }
}

export type CredentialsService = ReturnType<typeof createCredentialsService>
