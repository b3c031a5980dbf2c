// Issue 18 item 1 on an SSH target: a run whose agent hangs on the host is stopped by its profile's
// idleTimeout the way a cancel stops it — the agent's process on the host is signalled, the workspace
// still comes back — and the run ends `failed` with the timeout error. A real OpenSSH server on loopback
// and the fake Cursor CLI (the model plays no part here).
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApiClient } from '../helpers/api-client.js'
import { gitIn } from '../helpers/git-fixture.js'
import { cleanEnv, type RunningDaemon, startDaemon } from '../helpers/hangar-cli.js'
import { startSshd, type TestSshd } from '../helpers/sshd.js'
import { makeTempDir } from '../helpers/store-engines.js'

const FAKE_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/bin')

interface RunJson {
  id: string
  status: string
  reason: string | null
  workspaceFinalize: 'ok' | 'failed' | null
}

/** True while the process exists and is not a zombie. */
async function running(pid: number): Promise<boolean> {
  if (!existsSync(`/proc/${pid}`)) return false
  return !(await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ') Z ')).includes(') Z ')
}

describe('run limits on an SSH target', () => {
  let sshd: TestSshd
  let root: string
  let daemon: RunningDaemon
  let token: string
  const { api, waitForStatus } = createApiClient(() => ({ url: daemon.url, token }))

  beforeAll(async () => {
    sshd = await startSshd()
    root = await makeTempDir('hangar-ssh-limits-')
    const project = path.join(root, 'project')
    const dataDir = path.join(root, 'data')
    await mkdir(project)
    gitIn(project, 'init', '-q', '-b', 'main')
    await writeFile(path.join(project, 'README.md'), '# project\n')
    await writeFile(
      path.join(project, 'hangar.yaml'),
      [
        'targets:',
        `  box: { ssh: "${sshd.user}@127.0.0.1", dir: "${path.join(root, 'host')}", port: ${sshd.port}, identityFile: "${sshd.identityFile}" }`,
        'agents:',
        '  remote: { adapter: cursor-agent, target: box, idleTimeout: 12s }',
      ].join('\n'),
    )
    gitIn(project, 'add', '-A')
    gitIn(project, 'commit', '-qm', 'initial')
    const env = cleanEnv({
      PATH: [FAKE_BIN, path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: root,
      HANGAR_SSH_COMMAND: `ssh -F ${sshd.configFile}`,
      FAKE_CURSOR_PIDFILE: path.join(root, 'agent.pid'),
    })
    daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: project })
    token = (JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string }).token
  }, 60_000)

  afterAll(async () => {
    await daemon?.stop()
    await sshd?.stop()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('stops an agent hung on the host once it is quiet for its idleTimeout, and brings the workspace back', async () => {
    const { json: conversation } = await api<{ id: string }>('POST', '/api/conversations', {
      agent: 'remote',
    })
    // The fake agent makes its tool call, then hangs without a word until it is signalled.
    const { json: started } = await api<RunJson>('POST', `/api/conversations/${conversation.id}/messages`, {
      text: 'FILE=hang.txt HANG=1',
    })
    const pidFile = path.join(root, 'agent.pid')
    const deadline = Date.now() + 60_000
    while (!existsSync(pidFile) || !(await readFile(pidFile, 'utf8'))) {
      if (Date.now() > deadline) throw new Error('the agent never started on the host')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const pid = Number(await readFile(pidFile, 'utf8'))

    const ended = await waitForStatus<RunJson>(started.id, ['succeeded', 'failed', 'cancelled'], 120_000)
    expect(ended.status).toBe('failed')
    expect(ended.reason).toBe('no agent output or model traffic for 12s (idleTimeout)')
    // Stopped as a cancel stops it: the process on the host is gone, and the sync-back still ran.
    expect(await running(pid)).toBe(false)
    expect(ended.workspaceFinalize).toBe('ok')
  }, 180_000)
})
