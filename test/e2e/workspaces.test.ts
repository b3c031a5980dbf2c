// Workspaces as a user meets them, through a real daemon and the built CLI with the fake `cursor-agent`:
// a conversation works in its own worktree on hangar/<conversation-id> (never in the project), keeps its
// uncommitted files from run to run, refuses a worktree moved to another branch, and goes away with
// `hangar workspaces remove`, with its conversation, or at start-up when its conversation is gone.
import { existsSync } from 'node:fs'
import { readFile, realpath, rm } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAuthService } from '../../src/store/auth-service.js'
import { openStore } from '../../src/store/store.js'
import { cleanEnv, type RunningDaemon, runHangar, startDaemon, waitForOutput } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'
import { gitIn, initRepo } from '../helpers/git-fixture.js'
import { createApiClient } from '../helpers/api-client.js'

const FAKE_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/bin')

interface RunJson {
  id: string
  status: string
  cwd: string
  reason: string | null
}

interface WorkspaceJson {
  id: string
  conversationId: string | null
  kind: string
  path: string
  branch: string | null
  createdBranch: boolean
  status: string
}

describe('workspaces', () => {
  let root: string
  let dataDir: string
  let project: string
  let env: NodeJS.ProcessEnv
  let daemon: RunningDaemon
  let ownerToken: string
  let strangerToken: string

  const { api, waitForStatus } = createApiClient(() => ({ url: daemon.url, token: ownerToken }))
  const finished = (runId: string) => waitForStatus<RunJson>(runId)

  /** Sends a message and waits for its run to succeed. */
  async function say(conversationId: string, text: string): Promise<RunJson> {
    const sent = await api<RunJson>('POST', `/api/conversations/${conversationId}/messages`, { text })
    expect(sent.status, JSON.stringify(sent.json)).toBe(202)
    const run = await finished(sent.json.id)
    expect(run.status, run.reason ?? '').toBe('succeeded')
    return run
  }

  async function newConversation(): Promise<string> {
    const created = await api<{ id: string }>('POST', '/api/conversations', { agent: 'cursor-agent' })
    expect(created.status).toBe(201)
    return created.json.id
  }

  async function workspaceOf(conversationId: string): Promise<WorkspaceJson> {
    const { json } = await api<WorkspaceJson[]>('GET', '/api/workspaces')
    const found = json.find((workspace) => workspace.conversationId === conversationId)
    if (!found) throw new Error(`no workspace of ${conversationId} in ${JSON.stringify(json)}`)
    return found
  }

  const hangar = (args: string[], options: { cwd?: string } = {}) =>
    runHangar([...args, '--data-dir', dataDir], { env, timeoutMs: 60_000, ...options })

  beforeAll(async () => {
    root = await realpath(await makeTempDir('hangar-workspaces-'))
    dataDir = path.join(root, 'data')
    project = path.join(root, 'project')
    await initRepo(project)
    env = cleanEnv({
      PATH: [FAKE_BIN, path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: root,
    })
    daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: project })
    ownerToken = (JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string })
      .token
    // Another user of the same instance, straight in the shared store (SQLite in WAL mode).
    const store = await openStore({ dataDir })
    try {
      const stranger = await store.users.create({ name: 'stranger', role: 'member' })
      strangerToken = (
        await createAuthService({ store }).createToken('system', stranger.id, { name: 'stranger' })
      ).token
    } finally {
      await store.close()
    }
  })

  afterAll(async () => {
    await daemon?.stop()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('runs a conversation in its own worktree on hangar/<id>, keeping uncommitted work between runs', async () => {
    const conversationId = await newConversation()
    const first = await say(conversationId, 'Please create a file. FILE=a.txt')
    const workspace = await workspaceOf(conversationId)
    expect(workspace).toMatchObject({
      kind: 'worktree',
      branch: `hangar/${conversationId}`,
      createdBranch: true,
      status: 'active',
    })
    expect(workspace.path.startsWith(path.join(dataDir, 'workspaces'))).toBe(true)
    expect(first.cwd).toBe(workspace.path)
    expect(existsSync(path.join(workspace.path, 'a.txt'))).toBe(true)
    expect(existsSync(path.join(project, 'a.txt'))).toBe(false)
    expect(gitIn(workspace.path, 'branch', '--show-current')).toBe(`hangar/${conversationId}`)

    await say(conversationId, 'And another. FILE=b.txt')
    expect((await workspaceOf(conversationId)).id).toBe(workspace.id)
    expect(gitIn(workspace.path, 'status', '--short').split('\n').sort()).toEqual(['?? a.txt', '?? b.txt'])
    expect(gitIn(project, 'status', '--short')).toBe('')
    expect(gitIn(project, 'remote')).toBe('')

    const listed = await hangar(['workspaces', 'list', '--json'])
    expect(listed.code, listed.stderr).toBe(0)
    expect(JSON.parse(listed.stdout) as WorkspaceJson[]).toContainEqual(
      expect.objectContaining({ id: workspace.id, conversationId, path: workspace.path }),
    )
    const table = await hangar(['workspaces', 'list'])
    expect(table.stdout).toMatch(/^ID\s+KIND\s+BRANCH\s+CONVERSATION\s+PATH$/m)
    expect(table.stdout).toContain(`hangar/${conversationId}`)
    const shown = await hangar(['workspaces', 'show', workspace.id])
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toMatch(/^changes\s+2 file\(s\) changed or untracked/m)

    // Moved to another branch behind Hangar's back: reported, not reused; fine again once switched back.
    gitIn(workspace.path, 'switch', '-q', '-c', 'elsewhere')
    const refused = await api<{ error: { code: string; message: string } }>(
      'POST',
      `/api/conversations/${conversationId}/messages`,
      { text: 'FILE=c.txt' },
    )
    expect(refused.status).toBe(409)
    expect(refused.json.error.message).toContain(`is on branch elsewhere, not hangar/${conversationId}`)
    expect((await hangar(['workspaces', 'show', workspace.id])).stdout).toMatch(/^problem\s+.*elsewhere/m)
    gitIn(workspace.path, 'switch', '-q', `hangar/${conversationId}`)
    await say(conversationId, 'FILE=c.txt')

    const removed = await hangar(['workspaces', 'remove', workspace.id])
    expect(removed.code, removed.stderr).toBe(0)
    expect(removed.stdout.trim()).toBe(
      `removed worktree ${workspace.path} and branch hangar/${conversationId}`,
    )
    expect(existsSync(workspace.path)).toBe(false)
    expect(gitIn(project, 'branch', '--list', `hangar/${conversationId}`)).toBe('')
    // The next message gets a fresh worktree from the project's HEAD.
    await say(conversationId, 'FILE=d.txt')
    const fresh = await workspaceOf(conversationId)
    expect(fresh.id).not.toBe(workspace.id)
    expect(existsSync(path.join(fresh.path, 'a.txt'))).toBe(false)
    expect(existsSync(path.join(fresh.path, 'd.txt'))).toBe(true)
  })

  it('removes the workspace with its conversation, and hides it from other users', async () => {
    const conversationId = await newConversation()
    await say(conversationId, 'FILE=x.txt')
    const workspace = await workspaceOf(conversationId)

    expect((await api('GET', `/api/workspaces/${workspace.id}`, undefined, strangerToken)).status).toBe(404)
    expect((await api('DELETE', `/api/workspaces/${workspace.id}`, undefined, strangerToken)).status).toBe(
      404,
    )
    expect(
      (await api('DELETE', `/api/conversations/${conversationId}`, undefined, strangerToken)).status,
    ).toBe(404)
    expect((await api<unknown[]>('GET', '/api/workspaces', undefined, strangerToken)).json).toEqual([])
    expect(existsSync(workspace.path)).toBe(true)

    const deleted = await api<{ deleted: boolean; workspaces: { branch: { deleted: boolean } }[] }>(
      'DELETE',
      `/api/conversations/${conversationId}`,
    )
    expect(deleted.status).toBe(200)
    expect(deleted.json).toMatchObject({ deleted: true, workspaces: [{ branch: { deleted: true } }] })
    expect(existsSync(workspace.path)).toBe(false)
    expect(gitIn(project, 'branch', '--list', `hangar/${conversationId}`)).toBe('')
    expect((await api('GET', `/api/conversations/${conversationId}`)).status).toBe(404)
    expect((await api<WorkspaceJson>('GET', `/api/workspaces/${workspace.id}`)).json.status).toBe('removed')
  })

  it('runs hangar run --isolate in a fresh detached worktree, leaving the project as it was', async () => {
    const result = await hangar(['run', '--agent', 'cursor-agent', '--isolate', 'FILE=isolated.txt'], {
      cwd: project,
    })
    expect(result.code, result.stderr).toBe(0)
    const where = /Working in a worktree at (\S+) \(hangar workspaces remove (ws_\w+) removes it\)/.exec(
      result.stderr,
    )
    expect(where, result.stderr).not.toBeNull()
    const [, worktree, id] = where!
    expect(worktree!.startsWith(path.join(dataDir, 'workspaces'))).toBe(true)
    expect(existsSync(path.join(worktree!, 'isolated.txt'))).toBe(true)
    expect(existsSync(path.join(project, 'isolated.txt'))).toBe(false)
    expect(gitIn(project, 'status', '--short')).toBe('')
    expect(gitIn(worktree!, 'branch', '--show-current')).toBe('')
    const removed = await hangar(['workspaces', 'remove', id!])
    expect(removed.stdout.trim()).toBe(`removed worktree ${worktree}`)
  })

  it('removes the workspaces of conversations deleted while no daemon ran, at the next start', async () => {
    const conversationId = await newConversation()
    await say(conversationId, 'FILE=orphan.txt')
    const workspace = await workspaceOf(conversationId)
    await daemon.stop()
    const store = await openStore({ dataDir })
    try {
      const owner = (await store.users.findOwner())!
      await store.forUser(owner.id).conversations.delete(conversationId)
    } finally {
      await store.close()
    }
    // Without a daemon the CLI reads the store itself.
    const listed = await hangar(['workspaces', 'list', '--json'])
    expect(JSON.parse(listed.stdout) as WorkspaceJson[]).toContainEqual(
      expect.objectContaining({ id: workspace.id }),
    )
    daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: project })
    await waitForOutput(daemon.stdout, 'Removed 1 workspace(s) of deleted conversations.')
    expect(existsSync(workspace.path)).toBe(false)
    expect(gitIn(project, 'branch', '--list', `hangar/${conversationId}`)).toBe('')
  })
})
