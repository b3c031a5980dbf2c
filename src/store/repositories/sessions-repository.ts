// Sign-in state: browser/CLI sessions and one-time login or invite links. Both store only a hash.
import type { LoginLinksTable, SessionsTable } from '../schema.js'
import { nowIso, type RepositoryContext } from './context.js'

export interface SessionRecord {
  id: string
  userId: string
  kind: 'browser' | 'cli'
  createdAt: string
  expiresAt: string
  revokedAt: string | null
}

function toSession(row: SessionsTable): SessionRecord {
  return {
    id: row.id,
    userId: row.user_id,
    kind: row.kind,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
  }
}

export function createSessionsRepository(context: RepositoryContext, userId: string) {
  const { db } = context
  return {
    async create(input: {
      id: string
      kind: SessionRecord['kind']
      secretHash: string
      expiresAt: string
    }): Promise<SessionRecord> {
      const row: SessionsTable = {
        id: input.id,
        user_id: userId,
        kind: input.kind,
        secret_hash: input.secretHash,
        created_at: nowIso(context),
        expires_at: input.expiresAt,
        last_seen_at: null,
        revoked_at: null,
      }
      await db.insertInto('sessions').values(row).execute()
      return toSession(row)
    },
    async revoke(id: string): Promise<boolean> {
      const result = await db
        .updateTable('sessions')
        .set({ revoked_at: nowIso(context) })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
    async createLoginLink(input: {
      id: string
      purpose: LoginLinksTable['purpose']
      secretHash: string
      expiresAt: string
    }): Promise<void> {
      await db
        .insertInto('login_links')
        .values({
          id: input.id,
          user_id: userId,
          purpose: input.purpose,
          secret_hash: input.secretHash,
          created_at: nowIso(context),
          expires_at: input.expiresAt,
          used_at: null,
        })
        .execute()
    },
  }
}

export type SessionsRepository = ReturnType<typeof createSessionsRepository>
