// Agent profiles created in the UI or API (hangar.yaml profiles are config, not rows).
import { newId } from '../../core/ids.js'
import type { AgentProfilesTable } from '../schema.js'
import { nowIso, type RepositoryContext } from './context.js'

export interface StoredProfile {
  id: string
  name: string
  definition: Record<string, unknown>
  createdAt: string
  updatedAt: string
}

function toProfile(row: AgentProfilesTable): StoredProfile {
  return {
    id: row.id,
    name: row.name,
    definition: JSON.parse(row.definition) as Record<string, unknown>,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

export function createProfilesRepository(context: RepositoryContext, userId: string) {
  const { db } = context
  return {
    async list(): Promise<StoredProfile[]> {
      const rows = await db
        .selectFrom('agent_profiles')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy('name')
        .execute()
      return rows.map(toProfile)
    },
    async get(name: string): Promise<StoredProfile | undefined> {
      const row = await db
        .selectFrom('agent_profiles')
        .selectAll()
        .where('user_id', '=', userId)
        .where('name', '=', name)
        .executeTakeFirst()
      return row && toProfile(row)
    },
    async put(name: string, definition: Record<string, unknown>): Promise<StoredProfile> {
      const now = nowIso(context)
      const existing = await this.get(name)
      if (existing) {
        await db
          .updateTable('agent_profiles')
          .set({ definition: JSON.stringify(definition), updated_at: now })
          .where('id', '=', existing.id)
          .execute()
      } else {
        await db
          .insertInto('agent_profiles')
          .values({
            id: newId('prof'),
            user_id: userId,
            name,
            definition: JSON.stringify(definition),
            created_at: now,
            updated_at: now,
          })
          .execute()
      }
      return (await this.get(name))!
    },
    async delete(name: string): Promise<boolean> {
      const result = await db
        .deleteFrom('agent_profiles')
        .where('user_id', '=', userId)
        .where('name', '=', name)
        .executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },
  }
}

export type ProfilesRepository = ReturnType<typeof createProfilesRepository>
