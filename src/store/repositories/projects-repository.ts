// Projects are system-wide (like users): the owner registers them and grants them to members. Who may see
// or use one is decided in the project service (src/projects/project-service.ts), never here.
import type { Project } from '../../core/api-types.js'
import { newId } from '../../core/ids.js'
import type { ProjectsTable } from '../schema.js'
import { nowIso, type RepositoryContext } from './context.js'

export type { Project }

function toProject(row: ProjectsTable): Project {
  return {
    id: row.id,
    name: row.name,
    path: row.path,
    kind: row.kind,
    defaultAgent: row.default_agent,
    check: row.check_command ?? null,
    createdAt: row.created_at,
  }
}

export function createProjectsRepository(context: RepositoryContext) {
  const { db } = context
  return {
    async create(input: {
      name: string
      path: string
      kind: Project['kind']
      defaultAgent?: string | null
    }): Promise<Project> {
      const row: ProjectsTable = {
        id: newId('prj'),
        name: input.name,
        path: input.path,
        kind: input.kind,
        default_agent: input.defaultAgent ?? null,
        created_at: nowIso(context),
      }
      await db.insertInto('projects').values(row).execute()
      return toProject(row)
    },
    async get(id: string): Promise<Project | undefined> {
      const row = await db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst()
      return row && toProject(row)
    },
    async findByName(name: string): Promise<Project | undefined> {
      const row = await db.selectFrom('projects').selectAll().where('name', '=', name).executeTakeFirst()
      return row && toProject(row)
    },
    async findByPath(projectPath: string): Promise<Project | undefined> {
      const row = await db
        .selectFrom('projects')
        .selectAll()
        .where('path', '=', projectPath)
        .executeTakeFirst()
      return row && toProject(row)
    },
    /** Every project, oldest first. */
    async list(): Promise<Project[]> {
      const rows = await db.selectFrom('projects').selectAll().orderBy('created_at').orderBy('id').execute()
      return rows.map(toProject)
    },
    /** The projects granted to `userId`, oldest first. */
    async listGranted(userId: string): Promise<Project[]> {
      const rows = await db
        .selectFrom('projects')
        .innerJoin('project_members', 'project_members.project_id', 'projects.id')
        .selectAll('projects')
        .where('project_members.user_id', '=', userId)
        .orderBy('projects.created_at')
        .orderBy('projects.id')
        .execute()
      return rows.map(toProject)
    },
    async update(
      id: string,
      changes: { name?: string; defaultAgent?: string | null; check?: string | null },
    ): Promise<Project | undefined> {
      if (changes.name !== undefined || changes.defaultAgent !== undefined || changes.check !== undefined) {
        await db
          .updateTable('projects')
          .set({
            ...(changes.name !== undefined && { name: changes.name }),
            ...(changes.defaultAgent !== undefined && { default_agent: changes.defaultAgent }),
            ...(changes.check !== undefined && { check_command: changes.check }),
          })
          .where('id', '=', id)
          .execute()
      }
      return this.get(id)
    },
    /** Removes the row and its grants; conversations and runs keep the id. */
    async delete(id: string): Promise<boolean> {
      await db.deleteFrom('project_members').where('project_id', '=', id).execute()
      const result = await db.deleteFrom('projects').where('id', '=', id).executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },
    /** Grants the project to a user; granting twice is no change (false). */
    async grant(projectId: string, userId: string): Promise<boolean> {
      const result = await db
        .insertInto('project_members')
        .values({ project_id: projectId, user_id: userId, created_at: nowIso(context) })
        .onConflict((conflict) => conflict.columns(['project_id', 'user_id']).doNothing())
        .executeTakeFirst()
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0
    },
    async revoke(projectId: string, userId: string): Promise<boolean> {
      const result = await db
        .deleteFrom('project_members')
        .where('project_id', '=', projectId)
        .where('user_id', '=', userId)
        .executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },
    async isGranted(projectId: string, userId: string): Promise<boolean> {
      const row = await db
        .selectFrom('project_members')
        .select('user_id')
        .where('project_id', '=', projectId)
        .where('user_id', '=', userId)
        .executeTakeFirst()
      return row !== undefined
    },
    /** A run of any user working on the project that has not ended (the first found), if any. */
    async activeRun(
      projectId: string,
      statuses: readonly string[],
    ): Promise<{ id: string; status: string } | undefined> {
      return db
        .selectFrom('runs')
        .select(['id', 'status'])
        .where('project_id', '=', projectId)
        .where('status', 'in', [...statuses])
        .executeTakeFirst()
    },
    /** The user ids each project is granted to (projects with none are absent). */
    async members(): Promise<Map<string, string[]>> {
      const rows = await db
        .selectFrom('project_members')
        .select(['project_id', 'user_id'])
        .orderBy('created_at')
        .execute()
      const byProject = new Map<string, string[]>()
      for (const row of rows)
        byProject.set(row.project_id, [...(byProject.get(row.project_id) ?? []), row.user_id])
      return byProject
    },
  }
}

export type ProjectsRepository = ReturnType<typeof createProjectsRepository>
