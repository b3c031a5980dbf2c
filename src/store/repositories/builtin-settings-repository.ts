// The built-in agent's default provider and model of one user (at most one row).
import { nowIso, type RepositoryContext } from './context.js'

export interface BuiltinDefault {
  provider: string
  model: string | null
  updatedAt: string
}

export function createBuiltinSettingsRepository(context: RepositoryContext, userId: string) {
  const { db } = context
  return {
    async get(): Promise<BuiltinDefault | undefined> {
      const row = await db
        .selectFrom('builtin_settings')
        .selectAll()
        .where('user_id', '=', userId)
        .executeTakeFirst()
      return row && { provider: row.provider, model: row.model, updatedAt: row.updated_at }
    },
    async put(input: { provider: string; model: string | null }): Promise<BuiltinDefault> {
      const now = nowIso(context)
      await db
        .insertInto('builtin_settings')
        .values({ user_id: userId, provider: input.provider, model: input.model, updated_at: now })
        .onConflict((conflict) =>
          conflict
            .column('user_id')
            .doUpdateSet({ provider: input.provider, model: input.model, updated_at: now }),
        )
        .execute()
      return { provider: input.provider, model: input.model, updatedAt: now }
    },
    async clear(): Promise<boolean> {
      const result = await db.deleteFrom('builtin_settings').where('user_id', '=', userId).executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },
  }
}
