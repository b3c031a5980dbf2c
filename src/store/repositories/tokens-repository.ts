// Personal access tokens (kind `user`) and proxy tokens (kind `proxy`), scoped to their owner. Only the
// lookup id and a hash of the secret are stored; the token itself is shown once by the caller.
import type { PersonalAccessTokensTable } from '../schema.js'
import { fromJson, nowIso, type RepositoryContext } from './context.js'

export type TokenScope = 'api' | 'approve'
export type TokenKind = 'user' | 'proxy'

export interface AccessTokenRecord {
  id: string
  userId: string
  name: string
  kind: TokenKind
  scopes: TokenScope[]
  profile: string | null
  /** A run's own proxy token: revoked when the run ends; not listed with the user's tokens. */
  runId: string | null
  createdAt: string
  expiresAt: string
  lastUsedAt: string | null
  revokedAt: string | null
}

export function toAccessTokenRecord(row: PersonalAccessTokensTable): AccessTokenRecord {
  return {
    id: row.id,
    userId: row.user_id,
    name: row.name,
    kind: row.kind,
    scopes: fromJson<TokenScope[]>(row.scopes) ?? ['api'],
    profile: row.profile,
    runId: row.run_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  }
}

export interface NewAccessToken {
  id: string
  name: string
  kind: TokenKind
  scopes: TokenScope[]
  profile?: string | null
  runId?: string | null
  secretHash: string
  expiresAt: string
}

export function createTokensRepository(context: RepositoryContext, userId: string) {
  const { db } = context
  return {
    async create(input: NewAccessToken): Promise<AccessTokenRecord> {
      const row: PersonalAccessTokensTable = {
        id: input.id,
        user_id: userId,
        name: input.name,
        kind: input.kind,
        scopes: JSON.stringify(input.scopes),
        profile: input.profile ?? null,
        run_id: input.runId ?? null,
        secret_hash: input.secretHash,
        created_at: nowIso(context),
        expires_at: input.expiresAt,
        last_used_at: null,
        revoked_at: null,
      }
      await db.insertInto('personal_access_tokens').values(row).execute()
      return toAccessTokenRecord(row)
    },
    /** The user's tokens; a run's own proxy tokens (they come and go with runs) are left out. */
    async list(options: { kind?: TokenKind; includeRevoked?: boolean } = {}): Promise<AccessTokenRecord[]> {
      let query = db
        .selectFrom('personal_access_tokens')
        .selectAll()
        .where('user_id', '=', userId)
        .where('run_id', 'is', null)
      if (options.kind) query = query.where('kind', '=', options.kind)
      if (!options.includeRevoked) query = query.where('revoked_at', 'is', null)
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').execute()
      return rows.map(toAccessTokenRecord)
    },
    async get(id: string): Promise<AccessTokenRecord | undefined> {
      const row = await db
        .selectFrom('personal_access_tokens')
        .selectAll()
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst()
      return row && toAccessTokenRecord(row)
    },
    /** Revokes a run's proxy tokens when the run ends. */
    async revokeForRun(runId: string): Promise<void> {
      await db
        .updateTable('personal_access_tokens')
        .set({ revoked_at: nowIso(context) })
        .where('user_id', '=', userId)
        .where('run_id', '=', runId)
        .where('revoked_at', 'is', null)
        .execute()
    },
    /** Revokes once; revoking again returns the record unchanged. Undefined when not this user's. */
    async revoke(id: string): Promise<AccessTokenRecord | undefined> {
      await db
        .updateTable('personal_access_tokens')
        .set({ revoked_at: nowIso(context) })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .execute()
      return this.get(id)
    },
  }
}

export type TokensRepository = ReturnType<typeof createTokensRepository>
