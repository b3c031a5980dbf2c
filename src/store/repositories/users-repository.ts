// Users are the one system-wide table: every other repository is scoped to a user id.
import { newId } from '../../core/ids.js'
import type { UsersTable } from '../schema.js'
import { nowIso, type RepositoryContext, toCount } from './context.js'

export interface User {
  id: string
  name: string
  role: 'owner' | 'member'
  createdAt: string
  disabledAt: string | null
}

function toUser(row: UsersTable): User {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    createdAt: row.created_at,
    disabledAt: row.disabled_at,
  }
}

export function createUsersRepository(context: RepositoryContext) {
  const { db } = context
  return {
    async create(input: { name: string; role: User['role'] }): Promise<User> {
      const row: UsersTable = {
        id: newId('usr'),
        name: input.name,
        role: input.role,
        created_at: nowIso(context),
        disabled_at: null,
      }
      await db.insertInto('users').values(row).execute()
      return toUser(row)
    },
    async findById(id: string): Promise<User | undefined> {
      const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()
      return row && toUser(row)
    },
    async findByName(name: string): Promise<User | undefined> {
      const row = await db.selectFrom('users').selectAll().where('name', '=', name).executeTakeFirst()
      return row && toUser(row)
    },
    async findOwner(): Promise<User | undefined> {
      const row = await db
        .selectFrom('users')
        .selectAll()
        .where('role', '=', 'owner')
        .orderBy('created_at')
        .executeTakeFirst()
      return row && toUser(row)
    },
    async list(): Promise<User[]> {
      const rows = await db.selectFrom('users').selectAll().orderBy('created_at').execute()
      return rows.map(toUser)
    },
    async count(): Promise<number> {
      const row = await db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll().as('count'))
        .executeTakeFirst()
      return toCount(row?.count as string | number | undefined)
    },
  }
}

export type UsersRepository = ReturnType<typeof createUsersRepository>
