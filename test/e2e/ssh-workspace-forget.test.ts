// Removing a workspace removes its copies on SSH targets too: a conversation's worktree shipped to a real
// OpenSSH host on loopback (the fake agent CLI runs there), then removed through the REST API — or its
// conversation deleted — leaves nothing of it on the host: neither `<dir>/workspaces/<key>` nor the
// sandbox home kept for it. Runs brought their changes back first, so no run still holds a ship record.
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { remoteKey } from '../../src/workspaces/ssh/workspace-sync.js'
import { createApiClient } from '../helpers/api-client.js'
import { initRepo } from '../helpers/git-fixture.js'
import { cleanEnv, type RunningDaemon, startDaemon } from '../helpers/hangar-cli.js'
import { sshTargetYaml, startSshd, type TestSshd } from '../helpers/sshd.js'
import { makeTempDir } from '../helpers/store-engines.js'

const FAKE_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/bin')

interface RunJson {
  id: string
  status: string
  reason: string | null
  workspaceFinalize: 'ok' | 'failed' | null
}

interface WorkspaceJson {
  id: string
  conversationId: string | null
  path: string
}

describe('removing a workspace shipped to an SSH target', () => {
  let sshd: TestSshd
  let root: string
  let hostDir: string
  let daemon: RunningDaemon
  let token: string

  const { api, waitForStatus } = createApiClient(() => ({ url: daemon.url, token }))

  /** A conversation whose workspace a run on the host worked in; and where that copy is on the host. */
  async function shippedConversation(): Promise<{
    conversationId: string
    workspace: WorkspaceJson
    hostCopy: string
  }> {
    const { json: conversation } = await api<{ id: string }>('POST', '/api/conversations', {
      agent: 'remote',
    })
    const { status, json } = await api<RunJson>('POST', `/api/conversations/${conversation.id}/messages`, {
      text: 'FILE=remote.txt',
    })
    expect(status, JSON.stringify(json)).toBe(202)
    const run = await waitForStatus<RunJson>(json.id)
    expect(run.status, run.reason ?? '').toBe('succeeded')
    expect(run.workspaceFinalize).toBe('ok')
    const { json: workspaces } = await api<WorkspaceJson[]>('GET', '/api/workspaces')
    const workspace = workspaces.find((candidate) => candidate.conversationId === conversation.id)!
    expect(await readFile(path.join(workspace.path, 'remote.txt'), 'utf8')).toBe('hello from mock\n')
    const key = remoteKey(workspace.path)
    const hostCopy = path.join(hostDir, 'workspaces', key)
    expect(existsSync(path.join(hostCopy, 'remote.txt'))).toBe(true)
    // What a sandboxed agent would have kept there for this workspace goes with it.
    await mkdir(path.join(hostDir, 'sandbox-homes', key, '.config'), { recursive: true })
    return { conversationId: conversation.id, workspace, hostCopy }
  }

  beforeAll(async () => {
    sshd = await startSshd()
    root = await makeTempDir('hangar-ssh-forget-')
    const project = path.join(root, 'project')
    hostDir = path.join(root, 'host', 'hangar')
    await initRepo(project, {
      'README.md': '# project\n',
      'hangar.yaml': [
        'targets:',
        sshTargetYaml(sshd, 'box', hostDir),
        'agents:',
        '  remote: { adapter: cursor-agent, target: box }',
      ].join('\n'),
    })
    const env = cleanEnv({
      PATH: [FAKE_BIN, path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: root,
      HANGAR_SSH_COMMAND: sshd.sshCommand,
    })
    const dataDir = path.join(root, 'data')
    daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: project })
    token = (JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string }).token
  }, 60_000)

  afterAll(async () => {
    await daemon?.stop()
    await sshd?.stop()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('DELETE /api/workspaces/:id removes the copy on the host and its sandbox home', async () => {
    const { workspace, hostCopy } = await shippedConversation()

    const { status, json } = await api<{ removedFiles: boolean; hostCopies?: unknown }>(
      'DELETE',
      `/api/workspaces/${workspace.id}`,
    )

    expect(status, JSON.stringify(json)).toBe(200)
    expect(json.removedFiles).toBe(true)
    expect(json.hostCopies).toEqual([{ target: 'box', removed: true }])
    expect(existsSync(workspace.path)).toBe(false)
    expect(existsSync(hostCopy)).toBe(false)
    expect(existsSync(path.join(hostDir, 'sandbox-homes', path.basename(hostCopy)))).toBe(false)
    // The host keeps what other workspaces share (its cache of commits).
    expect(existsSync(path.join(hostDir, 'cache.git'))).toBe(true)
  }, 120_000)

  it('deleting the conversation removes the copy of its workspace on the host', async () => {
    const { conversationId, workspace, hostCopy } = await shippedConversation()

    const { status, json } = await api<unknown>('DELETE', `/api/conversations/${conversationId}`)

    expect(status, JSON.stringify(json)).toBeLessThan(300)
    expect(existsSync(workspace.path)).toBe(false)
    expect(existsSync(hostCopy)).toBe(false)
  }, 120_000)
})
