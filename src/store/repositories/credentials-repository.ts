// Provider credentials per user. The key is stored only as a vault envelope; encrypting and decrypting is
// the caller's job (the repository never sees plaintext).
import { newId } from '../../core/ids.js'
import type { ProviderCredentialsTable } from '../schema.js'
import { nowIso, type RepositoryContext } from './context.js'

export interface ProviderCredential {
  id: string
  provider: string
  keyEnvelope: string | null
  keyLast4: string | null
  model: string | null
  baseUrl: string | null
  createdAt: string
  updatedAt: string
}

function toCredential(row: ProviderCredentialsTable): ProviderCredential {
  return {
    id: row.id,
    provider: row.provider,
    keyEnvelope: row.key_envelope,
    keyLast4: row.key_last4,
    model: row.model,
    baseUrl: row.base_url,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

export interface CredentialChanges {
  /** `null` clears the key; `undefined` keeps it. */
  keyEnvelope?: string | null
  keyLast4?: string | null
  model?: string | null
  baseUrl?: string | null
}

export function createCredentialsRepository(context: RepositoryContext, userId: string) {
  const { db } = context
  return {
    async get(provider: string): Promise<ProviderCredential | undefined> {
      const row = await db
        .selectFrom('provider_credentials')
        .selectAll()
        .where('user_id', '=', userId)
        .where('provider', '=', provider)
        .executeTakeFirst()
      return row && toCredential(row)
    },
    async list(): Promise<ProviderCredential[]> {
      const rows = await db
        .selectFrom('provider_credentials')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy('provider')
        .execute()
      return rows.map(toCredential)
    },
    async upsert(provider: string, changes: CredentialChanges): Promise<ProviderCredential> {
      const now = nowIso(context)
      const existing = await this.get(provider)
      if (existing) {
        await db
          .updateTable('provider_credentials')
          .set({
            ...(changes.keyEnvelope !== undefined && { key_envelope: changes.keyEnvelope }),
            ...(changes.keyLast4 !== undefined && { key_last4: changes.keyLast4 }),
            ...(changes.model !== undefined && { model: changes.model }),
            ...(changes.baseUrl !== undefined && { base_url: changes.baseUrl }),
            updated_at: now,
          })
          .where('id', '=', existing.id)
          .execute()
      } else {
        await db
          .insertInto('provider_credentials')
          .values({
            id: newId('cred'),
            user_id: userId,
            provider,
            key_envelope: changes.keyEnvelope ?? null,
            key_last4: changes.keyLast4 ?? null,
            model: changes.model ?? null,
            base_url: changes.baseUrl ?? null,
            created_at: now,
            updated_at: now,
          })
          .execute()
      }
      return (await this.get(provider))!
    },
    async delete(provider: string): Promise<boolean> {
      const result = await db
        .deleteFrom('provider_credentials')
        .where('user_id', '=', userId)
        .where('provider', '=', provider)
        .executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },
  }
}

/** For `hangar secrets rewrap`: every stored envelope of every user, and a way to replace one. */
export function createCredentialEnvelopes(context: RepositoryContext) {
  const { db } = context
  return {
    async list(): Promise<{ id: string; userId: string; provider: string; keyEnvelope: string }[]> {
      const rows = await db
        .selectFrom('provider_credentials')
        .select(['id', 'user_id', 'provider', 'key_envelope'])
        .where('key_envelope', 'is not', null)
        .orderBy('id')
        .execute()
      return rows.map((row) => ({
        id: row.id,
        userId: row.user_id,
        provider: row.provider,
        keyEnvelope: row.key_envelope!,
      }))
    },
    async replace(id: string, previous: string, next: string): Promise<boolean> {
      // Conditional on the previous value so a concurrent key change is never overwritten.
      const result = await db
        .updateTable('provider_credentials')
        .set({ key_envelope: next })
        .where('id', '=', id)
        .where('key_envelope', '=', previous)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
  }
}

export type CredentialsRepository = ReturnType<typeof createCredentialsRepository>
