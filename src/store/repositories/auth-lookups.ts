// The only unscoped reads besides users: finding the row behind a presented bearer secret. Callers
// compare the secret hash in constant time and check expiry and revocation themselves.
import type { LoginLinksTable, PersonalAccessTokensTable, SessionsTable } from '../schema.js'
import { nowIso, type RepositoryContext } from './context.js'

export function createAuthLookups(context: RepositoryContext) {
  const { db } = context
  return {
    async findToken(lookupId: string): Promise<PersonalAccessTokensTable | undefined> {
      return db.selectFrom('personal_access_tokens').selectAll().where('id', '=', lookupId).executeTakeFirst()
    },
    async findSession(lookupId: string): Promise<SessionsTable | undefined> {
      return db.selectFrom('sessions').selectAll().where('id', '=', lookupId).executeTakeFirst()
    },
    async touchToken(lookupId: string): Promise<void> {
      await db
        .updateTable('personal_access_tokens')
        .set({ last_used_at: nowIso(context) })
        .where('id', '=', lookupId)
        .execute()
    },
    /**
     * Marks a login link used — once: the conditional UPDATE has one winner even when two requests race.
     * Returns the link when this call consumed it.
     */
    async consumeLoginLink(lookupId: string, secretHash: string): Promise<LoginLinksTable | undefined> {
      const now = nowIso(context)
      return db
        .updateTable('login_links')
        .set({ used_at: now })
        .where('id', '=', lookupId)
        .where('secret_hash', '=', secretHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .returningAll()
        .executeTakeFirst()
    },
  }
}

export type AuthLookups = ReturnType<typeof createAuthLookups>
