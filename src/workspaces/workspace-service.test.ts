import { existsSync } from 'node:fs'
import { mkdir, readFile, realpath, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { makeTempDir, STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import { AppError } from '../core/errors.js'
import type { User } from '../store/repositories/users-repository.js'
import { currentBranch } from './git.js'
import { keptSandboxHome, pruneSandboxHomes } from '../sandbox/sandbox-home.js'
import { createWorkspaceService, type WorkspaceService } from './workspace-service.js'
import { gitIn } from '../../test/helpers/git-fixture.js'
import { parseConfig } from '../core/config.js'
import { createWorkspaceLifecycle } from './lifecycle/workspace-lifecycle.js'

interface Fixture {
  testStore: TestStore
  service: WorkspaceService
  project: string
  owner: User
  other: User
  newConversation(user?: User): Promise<string>
}

async function errorOf(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(AppError)
  return error as AppError
}

describe.each(STORE_ENGINES)('workspace-service ($name)', (engine) => {
  /** A store, a project (a git repository with a commit unless `git: false`) and the service over both. */
  async function withFixture(
    options: { git?: boolean },
    work: (fixture: Fixture) => Promise<void>,
  ): Promise<void> {
    const testStore = await engine.open()
    const scratch = await realpath(await makeTempDir('hangar-wss-'))
    try {
      const project = path.join(scratch, 'project')
      await mkdir(project)
      await writeFile(path.join(project, 'README.md'), '# project\n')
      if (options.git !== false) {
        gitIn(project, 'init', '-q', '-b', 'main')
        gitIn(project, 'add', '.')
        gitIn(project, 'commit', '-q', '-m', 'first')
      }
      const { store } = testStore
      const owner = await store.users.create({ name: 'owner', role: 'owner' })
      const other = await store.users.create({ name: 'other', role: 'member' })
      const service = createWorkspaceService({
        store,
        dataDir: testStore.dataDir,
        projectDir: project,
        nodeId: 'test-node',
        // As main.ts wires it: a sandboxed agent's home kept for a workspace goes with it.
        afterRemoval: () => pruneSandboxHomes(testStore.dataDir),
      })
      const newConversation = async (user = owner) =>
        (await store.forUser(user.id).conversations.create({ title: 't', profile: 'builtin', project: 'p' }))
          .id
      await work({ testStore, service, project, owner, other, newConversation })
    } finally {
      await testStore.dispose()
      await rm(scratch, { recursive: true, force: true })
    }
  }

  it('makes a conversation one worktree, once, even for two calls at the same time, and reuses it', async () => {
    await withFixture({}, async ({ testStore, service, project, owner, newConversation }) => {
      const conversationId = await newConversation()
      const [first, second] = await Promise.all([
        service.forConversation(owner.id, conversationId),
        service.forConversation(owner.id, conversationId),
      ])
      expect(second!.id).toBe(first!.id)
      expect(await service.list(owner.id)).toHaveLength(1)
      expect(first).toMatchObject({
        conversationId,
        kind: 'worktree',
        branch: `hangar/${conversationId}`,
        createdBranch: true,
        projectPath: project,
        nodeId: 'test-node',
        status: 'active',
        path: path.join(await realpath(testStore.dataDir), 'workspaces', conversationId),
        cwd: path.join(await realpath(testStore.dataDir), 'workspaces', conversationId),
      })
      expect(await currentBranch(first!.path)).toBe(`hangar/${conversationId}`)
      const conversation = await testStore.store.forUser(owner.id).conversations.get(conversationId)
      expect(conversation?.workspaceId).toBe(first!.id)

      await writeFile(path.join(first!.path, 'draft.txt'), 'uncommitted\n')
      const again = await service.forConversation(owner.id, conversationId)
      expect(again.id).toBe(first!.id)
      expect(await readFile(path.join(again.cwd, 'draft.txt'), 'utf8')).toBe('uncommitted\n')
      expect(await service.inspect(owner.id, first!.id)).toMatchObject({ changedFiles: 1, problem: null })

      gitIn(first!.path, 'switch', '-q', '-c', 'someone-else')
      const changed = await errorOf(service.forConversation(owner.id, conversationId))
      expect(changed.code).toBe('conflict')
      expect(changed.message).toContain(`is on branch someone-else, not hangar/${conversationId}`)
      expect((await service.inspect(owner.id, first!.id)).problem).toContain('changed outside Hangar')
    })
  })

  it('answers not_found for another user’s workspaces and conversations', async () => {
    await withFixture({}, async ({ service, owner, other, newConversation }) => {
      const conversationId = await newConversation()
      const workspace = await service.forConversation(owner.id, conversationId)
      // Thunks: each rejection is awaited as soon as it happens.
      for (const attempt of [
        () => service.get(other.id, workspace.id),
        () => service.inspect(other.id, workspace.id),
        () => service.remove(other.id, workspace.id),
        () => service.forConversation(other.id, conversationId),
        () => service.deleteConversation(other.id, conversationId),
        () => service.get(owner.id, 'ws_nope'),
      ]) {
        expect((await errorOf(attempt())).code).toBe('not_found')
      }
      expect(await service.list(other.id)).toEqual([])
      expect((await service.get(owner.id, workspace.id)).status).toBe('active')
    })
  })

  it('refuses to remove a workspace while a run uses it, then removes files and branch', async () => {
    await withFixture({}, async ({ testStore, service, project, owner, newConversation }) => {
      const conversationId = await newConversation()
      const workspace = await service.forConversation(owner.id, conversationId)
      const runs = testStore.store.forUser(owner.id).runs
      const run = await runs.create({
        agent: 'builtin',
        adapter: 'builtin',
        prompt: 'x',
        cwd: workspace.cwd,
        conversationId,
      })
      const home = await keptSandboxHome(testStore.dataDir, 'claude-code', workspace.cwd)
      await mkdir(home)
      const busy = await errorOf(service.remove(owner.id, workspace.id))
      expect(busy).toMatchObject({ code: 'conflict', message: expect.stringContaining(run.id) })
      expect(existsSync(workspace.path)).toBe(true)

      await runs.update(run.id, { status: 'succeeded' })
      const removal = await service.remove(owner.id, workspace.id)
      expect(removal).toMatchObject({
        workspace: { id: workspace.id, status: 'removed' },
        removedFiles: true,
        branch: { name: `hangar/${conversationId}`, deleted: true },
      })
      expect(existsSync(workspace.path)).toBe(false)
      expect(existsSync(home)).toBe(false)
      expect(gitIn(project, 'branch', '--list', `hangar/${conversationId}`)).toBe('')
      expect(
        (await testStore.store.forUser(owner.id).conversations.get(conversationId))?.workspaceId,
      ).toBeNull()
      expect(await service.remove(owner.id, workspace.id)).toMatchObject({ removedFiles: false })
      // The next message makes a new one (the earlier run worked in the removed workspace: not adopted).
      const next = await service.forConversation(owner.id, conversationId)
      expect(next.id).not.toBe(workspace.id)
      expect(next.kind).toBe('worktree')
    })
  })

  it('removes the workspaces of deleted conversations at clean-up, and deletes conversations with theirs', async () => {
    await withFixture({}, async ({ testStore, service, owner, other, newConversation }) => {
      const gone = await newConversation()
      const kept = await newConversation(other)
      const orphan = await service.forConversation(owner.id, gone)
      const living = await service.forConversation(other.id, kept)
      const orphanHome = await keptSandboxHome(testStore.dataDir, 'codex', orphan.cwd)
      const livingHome = await keptSandboxHome(testStore.dataDir, 'codex', living.cwd)
      await mkdir(orphanHome)
      await mkdir(livingHome)
      await testStore.store.forUser(owner.id).conversations.delete(gone)
      expect(await service.cleanupOrphans()).toBe(1)
      expect(existsSync(orphan.path)).toBe(false)
      expect(existsSync(orphanHome)).toBe(false)
      expect(existsSync(livingHome)).toBe(true)
      expect((await service.get(owner.id, orphan.id)).status).toBe('removed')
      expect(existsSync(living.path)).toBe(true)
      expect(await service.cleanupOrphans()).toBe(0)

      const removals = await service.deleteConversation(other.id, kept)
      expect(removals.map((removal) => removal.workspace.id)).toEqual([living.id])
      expect(existsSync(living.path)).toBe(false)
      expect(await testStore.store.forUser(other.id).conversations.get(kept)).toBeUndefined()
    })
  })

  it('copies a project that is not a git repository, and isolates one-off runs', async () => {
    await withFixture({ git: false }, async ({ service, project, owner, newConversation }) => {
      const conversationId = await newConversation()
      const copy = await service.forConversation(owner.id, conversationId)
      expect(copy).toMatchObject({ kind: 'copy', branch: null, createdBranch: false })
      expect(await readFile(path.join(copy.cwd, 'README.md'), 'utf8')).toBe('# project\n')
      const oneOff = await service.isolated(owner.id, project)
      expect(oneOff).toMatchObject({ kind: 'copy', conversationId: null })
      expect(oneOff.path).not.toBe(copy.path)
      expect(await service.remove(owner.id, copy.id)).toMatchObject({ removedFiles: true, branch: null })
      expect(existsSync(copy.path)).toBe(false)
    })
  })

  it('keeps a conversation that ran before it had a workspace where it worked', async () => {
    await withFixture({}, async ({ testStore, service, project, owner, newConversation }) => {
      const conversationId = await newConversation()
      await testStore.store.forUser(owner.id).runs.create({
        agent: 'builtin',
        adapter: 'builtin',
        prompt: 'x',
        cwd: project,
        conversationId,
        status: 'succeeded',
      })
      const inPlace = await service.forConversation(owner.id, conversationId)
      expect(inPlace).toMatchObject({ kind: 'in_place', path: project, cwd: project, branch: null })
      expect(await service.remove(owner.id, inPlace.id)).toMatchObject({ removedFiles: false })
      expect(existsSync(path.join(project, 'README.md'))).toBe(true)

      const isolated = await service.isolated(owner.id, project)
      expect(isolated).toMatchObject({ kind: 'worktree', branch: null, conversationId: null })
      const other = await newConversation()
      const adopted = await service.adopt(owner.id, other, { workspaceId: isolated.id })
      expect(adopted).toMatchObject({ id: isolated.id, conversationId: other })
      expect((await service.forConversation(owner.id, other)).id).toBe(isolated.id)
    })
  })

  // Issue 17 item 1: a member's MCP workspace tools work in a workspace of their own, never the checkout.
  it("makes a user's own workspace once, finds it again, and makes a new one after it was removed", async () => {
    await withFixture({}, async ({ service, project, other }) => {
      expect(await service.findPersonal(other.id)).toBeUndefined()
      const [first, second] = await Promise.all([service.personal(other.id), service.personal(other.id)])
      expect(second!.id).toBe(first!.id)
      expect(first).toMatchObject({
        conversationId: null,
        kind: 'worktree',
        branch: `hangar/${other.id}`,
        projectPath: project,
      })
      expect(first!.cwd).not.toBe(project)
      expect(existsSync(path.join(first!.cwd, 'README.md'))).toBe(true)
      expect((await service.findPersonal(other.id))?.id).toBe(first!.id)
      await service.remove(other.id, first!.id)
      expect(await service.findPersonal(other.id)).toBeUndefined()
      const again = await service.personal(other.id)
      expect(again.id).not.toBe(first!.id)
      expect(again.branch).toBe(`hangar/${other.id}`)
    })
  })
})

describe('workspace-service with a workspace lifecycle', () => {
  it('copies files and takes ports when a workspace is made, and tears down and frees them on removal', async () => {
    const testStore = await STORE_ENGINES[0]!.open()
    const scratch = await realpath(await makeTempDir('hangar-wsl-'))
    try {
      const project = path.join(scratch, 'project')
      await mkdir(project)
      await writeFile(path.join(project, '.gitignore'), '.env\n')
      await writeFile(path.join(project, '.env'), 'KEY=1\n')
      gitIn(project, 'init', '-q', '-b', 'main')
      gitIn(project, 'add', '.')
      gitIn(project, 'commit', '-q', '-m', 'first')
      const { store } = testStore
      const owner = await store.users.create({ name: 'owner', role: 'owner' })
      const yaml = [
        'projects:',
        '  project:',
        '    workspace:',
        '      copy: [".env"]',
        '      ports: 2',
        `      teardown: 'echo "$HANGAR_PORT" > ${path.join(scratch, 'torn')}'`,
      ].join('\n')
      const lifecycle = createWorkspaceLifecycle({
        store,
        config: parseConfig(yaml),
        defaultProject: { name: 'project', dir: project },
        env: { PATH: process.env.PATH },
        portRange: { from: 33_000, to: 33_003 },
      })
      const service = createWorkspaceService({
        store,
        dataDir: testStore.dataDir,
        projectDir: project,
        nodeId: 'test-node',
        lifecycle,
      })
      const workspace = await service.isolated(owner.id, project)
      expect(await readFile(path.join(workspace.cwd, '.env'), 'utf8')).toBe('KEY=1\n')
      expect(await lifecycle.variables(workspace.id)).toEqual({
        HANGAR_PORT: '33000',
        HANGAR_PORT_COUNT: '2',
      })

      // No two free ports are left: the next workspace cannot be made, and nothing of it stays behind.
      const refused = await errorOf(service.isolated(owner.id, project))
      expect(refused.code).toBe('conflict')
      expect(refused.message).toContain('no 2 free consecutive ports left in 33000-33002')
      expect((await service.list(owner.id)).map((listed) => listed.id)).toEqual([workspace.id])
      expect(gitIn(project, 'worktree', 'list').split('\n')).toHaveLength(2)

      // A run's setup step records where the workspace was set up (even with no setup command): teardown runs there.
      await lifecycle.setup(workspace, { target: 'local', dir: workspace.cwd }, { env: {} })
      const removal = await service.remove(owner.id, workspace.id)
      expect(removal.teardown).toEqual([{ target: 'local', exitCode: 0, tail: '' }])
      expect(await readFile(path.join(scratch, 'torn'), 'utf8')).toBe('33000\n')
      expect(await lifecycle.variables(workspace.id)).toEqual({})
      // Its ports are free again.
      const next = await service.isolated(owner.id, project)
      expect(await lifecycle.variables(next.id)).toEqual({ HANGAR_PORT: '33000', HANGAR_PORT_COUNT: '2' })
    } finally {
      await testStore.dispose()
      await rm(scratch, { recursive: true, force: true })
    }
  })
})
