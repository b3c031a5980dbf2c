// Issue 20 item 1: projects are first-class. The REST API of a daemon (in this process, on both engines):
// registering directories with clear refusals, members granted by the owner, conversations and runs that
// belong to a project and work on a worktree (git) or a copy (folder) of it, removal that keeps files and
// history, registered projects as allowed roots, and the audit log.
import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Conversation, PendingAction, Project, Run } from '../../src/core/api-types.js'
import { isTerminalRunStatus } from '../../src/core/events.js'
import type { User } from '../../src/store/repositories/users-repository.js'
import { gitRepo, type InProcessDaemon, startInProcessDaemon } from '../helpers/in-process-daemon.js'
import { STORE_ENGINES } from '../helpers/store-engines.js'

interface ErrorJson {
  error: { code: string; message: string }
}

describe.each(STORE_ENGINES)('projects over REST ($name)', { timeout: 120_000 }, (engine) => {
  let daemon: InProcessDaemon
  let member: User
  let memberToken: string
  let repo: string
  let folder: string
  const projects: Record<string, Project> = {}

  beforeAll(async () => {
    daemon = await startInProcessDaemon(engine, 'hangar-projects-api-')
    member = await daemon.runtime.store.users.create({ name: 'member', role: 'member' })
    memberToken = await daemon.tokenFor(member)
    repo = path.join(daemon.root, 'my repo')
    folder = path.join(daemon.root, 'notes')
    await mkdir(repo)
    gitRepo(repo)
    await mkdir(folder)
    await writeFile(path.join(folder, 'todo.md'), 'write tests\n')
  })
  afterAll(async () => {
    await daemon?.close()
  })

  it('keeps the behaviour before projects while none is registered', async () => {
    const { api } = daemon
    expect((await api<{ projects: Project[] }>('GET', '/api/projects')).json).toEqual({ projects: [] })
    const created = await api<Conversation>('POST', '/api/conversations', { agent: 'builtin' })
    expect(created.status).toBe(201)
    expect(created.json).toMatchObject({ projectId: null, project: 'daemon-dir' })
  })

  it('refuses a path that is missing, not a directory, not absolute or the data dir, saying why', async () => {
    const { api } = daemon
    const file = path.join(daemon.root, 'file.txt')
    await writeFile(file, 'x')
    const cases: [string, RegExp][] = [
      [path.join(daemon.root, 'nowhere'), /nowhere does not exist on the daemon's host/],
      [file, /file\.txt is not a directory/],
      ['relative/dir', /is not an absolute path/],
      [path.join(daemon.dataDir, 'workspaces'), /is inside Hangar's data dir/],
      [daemon.dataDir, /is inside Hangar's data dir/],
      [daemon.root, /holds Hangar's data dir .*: runs there could read its keys and sessions/],
    ]
    await mkdir(path.join(daemon.dataDir, 'workspaces'), { recursive: true })
    for (const [requested, message] of cases) {
      const answer = await api<ErrorJson>('POST', '/api/projects', { path: requested })
      expect(answer.status, requested).toBe(400)
      expect(answer.json.error.code).toBe('invalid_request')
      expect(answer.json.error.message, requested).toMatch(message)
    }
    const badName = await api<ErrorJson>('POST', '/api/projects', { path: repo, name: '-bad name' })
    expect(badName.status).toBe(400)
    expect(badName.json.error.message).toContain('letters, digits, ".", "_" and "-"')
    expect((await api<{ projects: Project[] }>('GET', '/api/projects')).json.projects).toEqual([])
  })

  it('registers a git repository and a plain folder; a duplicate path or name is a conflict', async () => {
    const { api } = daemon
    const git = await api<Project>('POST', '/api/projects', { path: repo })
    expect(git.status).toBe(201)
    // The name comes from the directory, made valid.
    expect(git.json).toMatchObject({
      name: 'my-repo',
      path: repo,
      kind: 'git',
      defaultAgent: null,
      members: [],
    })
    expect(git.json.id).toMatch(/^prj_/)
    projects.git = git.json
    const plain = await api<Project>('POST', '/api/projects', {
      path: `${folder}/`,
      name: 'notes',
      defaultAgent: 'builtin',
    })
    expect(plain.status).toBe(201)
    expect(plain.json).toMatchObject({ name: 'notes', path: folder, kind: 'folder', defaultAgent: 'builtin' })
    projects.folder = plain.json
    const samePath = await api<ErrorJson>('POST', '/api/projects', { path: repo, name: 'other' })
    expect(samePath.status).toBe(409)
    expect(samePath.json.error).toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('my-repo'),
    })
    const sameName = await api<ErrorJson>('POST', '/api/projects', { path: daemon.daemonDir, name: 'notes' })
    expect(sameName.status).toBe(409)
    expect(sameName.json.error.message).toContain('a project named notes exists already')
    const listed = await api<{ projects: Project[] }>('GET', '/api/projects')
    expect(listed.json.projects.map((project) => project.name)).toEqual(['my-repo', 'notes'])
  })

  it('lets only the owner add, change, remove and grant projects', async () => {
    const { api } = daemon
    const attempts: [string, string, unknown?][] = [
      ['POST', '/api/projects', { path: daemon.daemonDir }],
      ['PATCH', `/api/projects/${projects.git!.id}`, { name: 'mine' }],
      ['DELETE', `/api/projects/${projects.git!.id}`],
      ['PUT', `/api/projects/${projects.git!.id}/members/${member.id}`],
      ['DELETE', `/api/projects/${projects.git!.id}/members/${member.id}`],
    ]
    for (const [method, route, body] of attempts) {
      const answer = await api<ErrorJson>(method, route, body, memberToken)
      expect(answer.status, `${method} ${route}`).toBe(403)
      expect(answer.json.error.message).toMatch(/^only the owner can/)
    }
    const renamed = await api<Project>('PATCH', `/api/projects/${projects.git!.id}`, {
      name: 'app',
      defaultAgent: 'builtin',
    })
    expect(renamed.json).toMatchObject({ name: 'app', defaultAgent: 'builtin' })
    projects.git = renamed.json
  })

  it('shows a member only the projects granted to them; the owner sees who has each', async () => {
    const { api } = daemon
    expect((await api<{ projects: Project[] }>('GET', '/api/projects', undefined, memberToken)).json).toEqual(
      {
        projects: [],
      },
    )
    const granted = await api<Project>('PUT', `/api/projects/${projects.folder!.id}/members/${member.id}`)
    expect(granted.json.members).toEqual([member.id])
    const seen = (await api<{ projects: Project[] }>('GET', '/api/projects', undefined, memberToken)).json
    expect(seen.projects.map((project) => project.id)).toEqual([projects.folder!.id])
    // The members of a project are the owner's to know.
    expect(seen.projects[0]).not.toHaveProperty('members')
    const owner = (await api<{ projects: Project[] }>('GET', '/api/projects')).json.projects
    expect(owner.find((project) => project.id === projects.folder!.id)?.members).toEqual([member.id])
    const toOwner = await api<ErrorJson>(
      'PUT',
      `/api/projects/${projects.git!.id}/members/${daemon.runtime.owner.id}`,
    )
    expect(toOwner.status).toBe(400)
    const revoked = await api<Project>('DELETE', `/api/projects/${projects.folder!.id}/members/${member.id}`)
    expect(revoked.json.members).toEqual([])
    expect((await api<{ projects: Project[] }>('GET', '/api/projects', undefined, memberToken)).json).toEqual(
      {
        projects: [],
      },
    )
  })

  it('requires projectId for a conversation once there are several, naming them', async () => {
    const { api } = daemon
    const missing = await api<ErrorJson>('POST', '/api/conversations', { agent: 'builtin' })
    expect(missing.status).toBe(400)
    expect(missing.json.error.message).toContain('projectId is required: there are 2 projects')
    expect(missing.json.error.message).toContain(`app (${projects.git!.id})`)
    expect(missing.json.error.message).toContain(`notes (${projects.folder!.id})`)
    const unknown = await api<ErrorJson>('POST', '/api/conversations', { projectId: 'prj_nope' })
    expect(unknown.status).toBe(404)
  })

  it('works on a worktree of a git project and a copy of a folder project; runs carry the project', async () => {
    const { api } = daemon
    for (const [project, kind] of [
      [projects.git!, 'worktree'],
      [projects.folder!, 'copy'],
    ] as const) {
      // The project's default agent is the conversation's when none is named.
      const conversation = await api<Conversation>('POST', '/api/conversations', { projectId: project.id })
      expect(conversation.status).toBe(201)
      expect(conversation.json).toMatchObject({
        projectId: project.id,
        project: project.name,
        profile: 'builtin',
      })
      const message = await api<Run>('POST', `/api/conversations/${conversation.json.id}/messages`, {
        text: 'look around',
      })
      expect(message.status).toBe(202)
      expect(message.json.projectId).toBe(project.id)
      const workspaces = await api<{ conversationId: string; kind: string; projectPath: string }[]>(
        'GET',
        '/api/workspaces',
      )
      const workspace = workspaces.json.find((candidate) => candidate.conversationId === conversation.json.id)
      expect(workspace).toMatchObject({ kind, projectPath: project.path })
      // Stopped if still going: the built-in agent, with no model here, may have failed on its own already.
      await daemon.runtime.scheduler
        .cancel(daemon.runtime.owner.id, message.json.id)
        .catch((error: { code?: string; details?: { status?: string } }) => {
          if (error.code !== 'conflict' || !isTerminalRunStatus(error.details?.status ?? '')) throw error
        })
    }
    expect(existsSync(path.join(daemon.dataDir, 'workspaces'))).toBe(true)
    // The project switcher's list: one project's conversations.
    const listed = await api<Conversation[]>('GET', `/api/conversations?projectId=${projects.folder!.id}`)
    expect(listed.json.length).toBeGreaterThan(0)
    expect(listed.json.every((conversation) => conversation.projectId === projects.folder!.id)).toBe(true)
  })

  it('makes registered projects allowed roots, and names the project of a run by its directory', async () => {
    const { api } = daemon
    const inside = await api<Run>('POST', '/api/runs', { agent: 'builtin', prompt: 'p', cwd: folder })
    expect(inside.status).toBe(201)
    expect(inside.json.projectId).toBe(projects.folder!.id)
    await daemon.runtime.scheduler.cancel(daemon.runtime.owner.id, inside.json.id)
    const relative = await api<Run>('POST', '/api/runs', {
      agent: 'builtin',
      prompt: 'p',
      projectId: projects.git!.id,
    })
    expect(relative.status).toBe(201)
    expect(relative.json).toMatchObject({ projectId: projects.git!.id, cwd: repo })
    await daemon.runtime.scheduler.cancel(daemon.runtime.owner.id, relative.json.id)
    const escape = await api<ErrorJson>('POST', '/api/runs', {
      agent: 'builtin',
      prompt: 'p',
      projectId: projects.git!.id,
      cwd: '../notes',
    })
    expect(escape.status).toBe(400)
    expect(escape.json.error.message).toContain('is outside project app')
  })

  it('refuses to remove a project with a run going; removal keeps files, history and the id', async () => {
    const { api } = daemon
    const conversation = await api<Conversation>('POST', '/api/conversations', {
      projectId: projects.folder!.id,
    })
    // A run of the project held running (no scheduler picks a stored run up by itself).
    const runs = daemon.runtime.store.forUser(member.id).runs
    const run = await runs.create({
      agent: 'builtin',
      adapter: 'builtin',
      prompt: 'p',
      cwd: folder,
      projectId: projects.folder!.id,
      status: 'running',
    })
    const busy = await api<ErrorJson>('DELETE', `/api/projects/${projects.folder!.id}`)
    expect(busy.status).toBe(409)
    expect(busy.json.error.message).toContain(`has a run running (${run.id})`)
    await runs.update(run.id, { status: 'cancelled' })
    const removed = await fetch(`${daemon.url}/api/projects/${projects.folder!.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${await daemon.tokenFor(daemon.runtime.owner)}` },
    })
    expect(removed.status).toBe(204)
    expect(existsSync(path.join(folder, 'todo.md'))).toBe(true)
    const kept = await api<Conversation>('GET', `/api/conversations/${conversation.json.id}`)
    expect(kept.json.projectId).toBe(projects.folder!.id)
    const next = await api<ErrorJson>('POST', `/api/conversations/${conversation.json.id}/messages`, {
      text: 'again',
    })
    expect(next.status).toBe(409)
    expect(next.json.error.message).toContain('belongs to a removed project')
    // No longer an allowed root.
    const outside = await api<ErrorJson>('POST', '/api/runs', { agent: 'builtin', prompt: 'p', cwd: folder })
    expect(outside.status).toBe(400)
    expect(outside.json.error.message).toContain('is outside the allowed roots')
    // With one project left, a conversation defaults to it.
    const only = await api<Conversation>('POST', '/api/conversations', { agent: 'builtin' })
    expect(only.json.projectId).toBe(projects.git!.id)
  })

  it('records adding, granting and removing projects in the audit log', async () => {
    const audit = await daemon.runtime.store.forUser(daemon.runtime.owner.id).audit.list({ limit: 100 })
    const actions = audit.filter((event) => event.targetType === 'project').map((event) => event.action)
    expect(actions).toEqual(
      expect.arrayContaining([
        'project.add',
        'project.update',
        'project.grant',
        'project.revoke',
        'project.remove',
      ]),
    )
    const removal = audit.find((event) => event.action === 'project.remove')
    expect(removal).toMatchObject({ targetId: projects.folder!.id, details: { name: 'notes', path: folder } })
    expect(removal?.actor).toMatch(/^pat:/)
  })

  it('names the project of an approval', async () => {
    const scope = daemon.runtime.store.forUser(daemon.runtime.owner.id)
    const conversation = (await daemon.api<Conversation>('POST', '/api/conversations', { agent: 'builtin' }))
      .json
    await scope.actions.create({
      conversationId: conversation.id,
      tool: 'write_file',
      input: { path: 'src/a.ts', content: 'x' },
      inputHash: 'h',
      summary: 'write src/a.ts',
      classification: 'safe_create',
      origin: 'chat',
      expiresAt: '2999-01-01T00:00:00.000Z',
      precondition: { path: 'src/a.ts', sha256: null },
    })
    const pending = await daemon.api<PendingAction[]>('GET', '/api/actions?status=pending')
    expect(pending.json.find((action) => action.conversationId === conversation.id)).toMatchObject({
      projectId: projects.git!.id,
      precondition: { path: 'src/a.ts' },
    })
  })
})
