// Projects: the owner registers directories of the daemon's host (POST /api/projects, `hangar projects
// add`) and grants them to members. Every path that makes a conversation or a run (REST, MCP, the CLI)
// asks this service which project it works on and whether the caller may use it: the owner may use every
// project, a member only those granted. With no project registered, everything works as before projects
// (on the daemon's directory). Removing a project never touches its files; it is refused while one of its
// runs is queued or running, and its conversations stay readable but take no new message.
import { AppError } from '../core/errors.js'
import type { Project } from '../core/api-types.js'
import type { Store } from '../store/store.js'
import { isInside } from '../workspaces/allowed-roots.js'
import { gitRoot } from '../workspaces/git.js'
import { BUSY_RUN_STATUSES } from '../workspaces/workspace-service.js'
import { assertProjectName, checkProjectDirectory, nameFromDirectory, uniqueName } from './project-paths.js'

export interface ProjectServiceOptions {
  store: Store
  dataDir: string
}

export interface NewProject {
  path: string
  name?: string | undefined
  defaultAgent?: string | undefined
}

export function createProjectService(options: ProjectServiceOptions) {
  const { store } = options

  async function isOwner(userId: string): Promise<boolean> {
    return (await store.users.findById(userId))?.role === 'owner'
  }

  async function assertOwner(userId: string, what: string): Promise<void> {
    if (!(await isOwner(userId)))
      throw new AppError('forbidden', `only the owner can ${what}`, { hint: 'ask the owner of this Hangar' })
  }

  /** The project, when the caller may see it; anything else (unknown, not granted) is not found. */
  async function visible(userId: string, projectId: string): Promise<Project> {
    const project = await store.projects.get(projectId)
    if (project && ((await isOwner(userId)) || (await store.projects.isGranted(project.id, userId))))
      return project
    throw new AppError('not_found', `no project ${projectId}`, {
      hint: 'see GET /api/projects (hangar projects list)',
    })
  }

  async function usable(userId: string): Promise<Project[]> {
    return (await isOwner(userId)) ? store.projects.list() : store.projects.listGranted(userId)
  }

  function describe(projects: Project[]): string {
    return projects.length ? projects.map((project) => `${project.name} (${project.id})`).join(', ') : 'none'
  }

  async function audit(userId: string, actor: string, action: string, project: Project, extra = {}) {
    await store.forUser(userId).audit.append({
      actor,
      action,
      targetType: 'project',
      targetId: project.id,
      details: { name: project.name, path: project.path, ...extra },
    })
  }

  async function assertNameFree(name: string, except?: string): Promise<void> {
    const existing = await store.projects.findByName(name)
    if (existing && existing.id !== except)
      throw new AppError('conflict', `a project named ${name} exists already (${existing.id})`, {
        hint: 'choose another name',
      })
  }

  /** The project holding `directory` (a real path): the innermost when projects nest. */
  async function containing(directory: string): Promise<Project | undefined> {
    return (await store.projects.list())
      .filter((project) => isInside(project.path, directory))
      .sort((a, b) => b.path.length - a.path.length)[0]
  }

  return {
    isOwner,
    containing,
    /** The caller's projects: all of them (with their members) for the owner, the granted ones else. */
    async list(userId: string): Promise<Project[]> {
      if (!(await isOwner(userId))) return store.projects.listGranted(userId)
      const members = await store.projects.members()
      return (await store.projects.list()).map((project) => ({
        ...project,
        members: members.get(project.id) ?? [],
      }))
    },

    async get(userId: string, projectId: string): Promise<Project> {
      return visible(userId, projectId)
    },

    /** The real paths of every registered project: allowed roots of runs. */
    async paths(): Promise<string[]> {
      return (await store.projects.list()).map((project) => project.path)
    },

    async add(userId: string, actor: string, input: NewProject): Promise<Project> {
      await assertOwner(userId, 'add projects')
      const checked = await checkProjectDirectory(input.path, options.dataDir)
      const existing = await store.projects.findByPath(checked.path)
      if (existing) {
        throw new AppError(
          'conflict',
          `${checked.path} is registered already as project ${existing.name} (${existing.id})`,
        )
      }
      let name: string
      if (input.name !== undefined) {
        assertProjectName(input.name)
        await assertNameFree(input.name)
        name = input.name
      } else {
        name = await uniqueName(nameFromDirectory(checked.path), async (candidate) =>
          Boolean(await store.projects.findByName(candidate)),
        )
      }
      let project: Project
      try {
        project = await store.projects.create({ name, ...checked, defaultAgent: input.defaultAgent ?? null })
      } catch (error) {
        // Another request registered the same name or path in between (the unique constraints held).
        if (
          await store.projects
            .findByPath(checked.path)
            .then((found) => found ?? store.projects.findByName(name))
        )
          throw new AppError('conflict', `project ${name} (${checked.path}) is registered already`)
        throw error
      }
      await audit(userId, actor, 'project.add', project)
      return { ...project, members: [] }
    },

    /**
     * `hangar up`'s offer on a first start: the daemon's directory, when it is a git repository, becomes
     * the first project — unless projects were ever added or removed (a removal is not undone).
     */
    async offerFirst(userId: string, actor: string, directory: string): Promise<Project | null> {
      if ((await store.projects.list()).length > 0 || !(await gitRoot(directory))) return null
      const audit = store.forUser(userId).audit
      for (const action of ['project.add', 'project.remove'])
        if ((await audit.list({ action, limit: 1 })).length > 0) return null
      try {
        return await this.add(userId, actor, { path: directory })
      } catch (error) {
        // Another daemon starting on the same store registered it first.
        if (error instanceof AppError && error.code === 'conflict') return null
        throw error
      }
    },

    async update(
      userId: string,
      actor: string,
      projectId: string,
      changes: {
        name?: string | undefined
        defaultAgent?: string | null | undefined
        check?: string | null | undefined
      },
    ): Promise<Project> {
      await assertOwner(userId, 'change projects')
      const project = await visible(userId, projectId)
      if (changes.name !== undefined) {
        assertProjectName(changes.name)
        await assertNameFree(changes.name, project.id)
      }
      const updated = (await store.projects.update(project.id, changes))!
      await audit(userId, actor, 'project.update', updated, { changes })
      const members = await store.projects.members()
      return { ...updated, members: members.get(project.id) ?? [] }
    },

    /** Unregisters it (its files stay); refused while one of its runs is queued or running. */
    async remove(userId: string, actor: string, projectId: string): Promise<void> {
      await assertOwner(userId, 'remove projects')
      const project = await visible(userId, projectId)
      const busy = await store.projects.activeRun(project.id, BUSY_RUN_STATUSES)
      if (busy) {
        throw new AppError('conflict', `project ${project.name} has a run ${busy.status} (${busy.id})`, {
          hint: `wait for it to end or cancel it with hangar runs cancel ${busy.id}, then try again`,
        })
      }
      await store.projects.delete(project.id)
      await audit(userId, actor, 'project.remove', project)
    },

    async grant(userId: string, actor: string, projectId: string, memberId: string): Promise<Project> {
      await assertOwner(userId, 'grant projects')
      const project = await visible(userId, projectId)
      const member = await store.users.findById(memberId)
      if (!member) throw new AppError('not_found', `no user ${memberId}`, { hint: 'see hangar users list' })
      if (member.role === 'owner')
        throw new AppError('invalid_request', `${member.name} is the owner, who has every project already`)
      if (await store.projects.grant(project.id, member.id))
        await audit(userId, actor, 'project.grant', project, { member: member.id })
      return (await this.list(userId)).find((candidate) => candidate.id === project.id)!
    },

    async revoke(userId: string, actor: string, projectId: string, memberId: string): Promise<Project> {
      await assertOwner(userId, 'revoke projects')
      const project = await visible(userId, projectId)
      if (await store.projects.revoke(project.id, memberId))
        await audit(userId, actor, 'project.revoke', project, { member: memberId })
      return (await this.list(userId)).find((candidate) => candidate.id === project.id)!
    },

    /**
     * The project a new conversation works on: the one asked for (which the caller must be granted), the
     * only one when there is exactly one, or null when none is registered (the daemon's directory, as
     * before projects). With several and none named, an `invalid_request` naming the caller's.
     */
    async forNewConversation(userId: string, projectId: string | undefined): Promise<Project | null> {
      if (projectId) return visible(userId, projectId)
      const all = await store.projects.list()
      if (all.length === 0) return null
      if (all.length === 1) return assertUsable(userId, all[0]!)
      throw new AppError('invalid_request', `projectId is required: there are ${all.length} projects`, {
        hint: `name one of yours: ${describe(await usable(userId))}`,
        details: { field: 'projectId', projects: (await usable(userId)).map((project) => project.id) },
      })
    },

    /**
     * A conversation's project, for its next run: it must still be registered (a removed project's
     * conversations are read-only) and granted to the caller. Null for a conversation made before projects.
     */
    async forConversation(userId: string, conversation: { id: string; projectId: string | null }) {
      if (!conversation.projectId) return null
      const project = await store.projects.get(conversation.projectId)
      if (!project) {
        throw new AppError(
          'conflict',
          `conversation ${conversation.id} belongs to a removed project (${conversation.projectId})`,
          {
            hint: 'its history stays readable; start a new conversation in a registered project',
          },
        )
      }
      return assertUsable(userId, project)
    },

    /**
     * The project a run without a conversation works on: the one asked for, else the one holding its
     * directory. With projects registered, a member's run must work in a project granted to them.
     */
    async forRun(
      userId: string,
      run: { projectId?: string | undefined; cwd: string },
    ): Promise<Project | null> {
      if (run.projectId) return visible(userId, run.projectId)
      const project = await containing(run.cwd)
      if (project) return assertUsable(userId, project)
      if ((await isOwner(userId)) || (await store.projects.list()).length === 0) return null
      throw new AppError('forbidden', `${run.cwd} is in no project granted to you`, {
        hint: `work in one of your projects: ${describe(await usable(userId))}`,
      })
    },
  }

  async function assertUsable(userId: string, project: Project): Promise<Project> {
    if ((await isOwner(userId)) || (await store.projects.isGranted(project.id, userId))) return project
    throw new AppError('forbidden', `project ${project.name} is not granted to you`, {
      hint: 'ask the owner to grant it (PUT /api/projects/:id/members/:userId)',
    })
  }
}

export type ProjectService = ReturnType<typeof createProjectService>
