// Projects in the store, on SQLite and on a real PostgreSQL: unique names and paths, grants, and the
// project of conversations, runs and pending actions (a removed project's id stays on them).
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import type { User } from './repositories/users-repository.js'
import type { Store } from './store.js'

describe.each(STORE_ENGINES)('projects repository ($name)', (engine) => {
  let testStore: TestStore
  let store: Store
  let owner: User
  let member: User

  beforeEach(async () => {
    testStore = await engine.open()
    store = testStore.store
    owner = await store.users.create({ name: 'owner', role: 'owner' })
    member = await store.users.create({ name: 'member', role: 'member' })
  })
  afterEach(async () => {
    await testStore.dispose()
  })

  it('creates, finds, lists, renames and deletes projects; names and paths are unique', async () => {
    const app = await store.projects.create({ name: 'app', path: '/srv/app', kind: 'git' })
    expect(app).toMatchObject({ name: 'app', path: '/srv/app', kind: 'git', defaultAgent: null })
    expect(app.id).toMatch(/^prj_/)
    const docs = await store.projects.create({
      name: 'docs',
      path: '/srv/docs',
      kind: 'folder',
      defaultAgent: 'builtin',
    })
    expect((await store.projects.list()).map((project) => project.name)).toEqual(['app', 'docs'])
    expect((await store.projects.findByName('docs'))?.id).toBe(docs.id)
    expect((await store.projects.findByPath('/srv/app'))?.id).toBe(app.id)
    await expect(store.projects.create({ name: 'app', path: '/srv/other', kind: 'git' })).rejects.toThrow()
    await expect(store.projects.create({ name: 'other', path: '/srv/app', kind: 'git' })).rejects.toThrow()
    expect(await store.projects.update(app.id, { name: 'web', defaultAgent: 'codex' })).toMatchObject({
      name: 'web',
      defaultAgent: 'codex',
    })
    expect(await store.projects.delete(app.id)).toBe(true)
    expect(await store.projects.get(app.id)).toBeUndefined()
    expect(await store.projects.delete(app.id)).toBe(false)
  })

  it('grants and revokes members; a project removed takes its grants with it', async () => {
    const app = await store.projects.create({ name: 'app', path: '/srv/app', kind: 'git' })
    const docs = await store.projects.create({ name: 'docs', path: '/srv/docs', kind: 'folder' })
    expect(await store.projects.grant(app.id, member.id)).toBe(true)
    expect(await store.projects.grant(app.id, member.id)).toBe(false)
    expect(await store.projects.isGranted(app.id, member.id)).toBe(true)
    expect(await store.projects.isGranted(docs.id, member.id)).toBe(false)
    expect((await store.projects.listGranted(member.id)).map((project) => project.id)).toEqual([app.id])
    expect((await store.projects.members()).get(app.id)).toEqual([member.id])
    expect(await store.projects.revoke(app.id, member.id)).toBe(true)
    expect(await store.projects.revoke(app.id, member.id)).toBe(false)
    expect(await store.projects.listGranted(member.id)).toEqual([])
    await store.projects.grant(docs.id, member.id)
    await store.projects.delete(docs.id)
    expect(await store.projects.listGranted(member.id)).toEqual([])
    expect((await store.projects.members()).size).toBe(0)
  })

  it('keeps the project of conversations, runs and actions, even after the project is removed', async () => {
    const app = await store.projects.create({ name: 'app', path: '/srv/app', kind: 'git' })
    const scope = store.forUser(owner.id)
    const conversation = await scope.conversations.create({
      title: 't',
      profile: 'builtin',
      project: 'app',
      projectId: app.id,
    })
    expect(conversation.projectId).toBe(app.id)
    const legacy = await scope.conversations.create({ title: 'old', profile: 'builtin', project: 'x' })
    expect(legacy.projectId).toBeNull()
    const run = await scope.runs.create({
      agent: 'builtin',
      adapter: 'builtin',
      prompt: 'p',
      cwd: '/srv/app',
      projectId: app.id,
    })
    expect((await scope.runs.get(run.id))?.projectId).toBe(app.id)
    expect(await store.projects.activeRun(app.id, ['queued'])).toEqual({ id: run.id, status: 'queued' })
    const action = {
      tool: 'write_file',
      input: {},
      inputHash: 'h',
      summary: 's',
      classification: 'safe_create' as const,
      origin: 'chat' as const,
      expiresAt: '2999-01-01T00:00:00.000Z',
    }
    // An action takes its conversation's project, else its run's.
    expect((await scope.actions.create({ ...action, conversationId: conversation.id })).projectId).toBe(
      app.id,
    )
    expect((await scope.actions.create({ ...action, runId: run.id })).projectId).toBe(app.id)
    expect((await scope.actions.create(action)).projectId).toBeNull()
    await store.projects.delete(app.id)
    expect((await scope.conversations.get(conversation.id))?.projectId).toBe(app.id)
    expect((await scope.runs.get(run.id))?.projectId).toBe(app.id)
  })
})
