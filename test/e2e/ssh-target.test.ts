// A profile with an SSH target, against a real OpenSSH server on loopback: the conversation's worktree
// is shipped to the host, the (fake) agent CLI runs there — editing files and committing — and its work
// comes back; a connection dropped during sync-back fails finalize, leaves the local worktree untouched
// and holds a dependent run until a retried finalize releases it; a cancel reaches the host's process.
import { existsSync } from 'node:fs'
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { cleanEnv, type RunningDaemon, runHangar, startDaemon } from '../helpers/hangar-cli.js'
import { startSshd, type TestSshd } from '../helpers/sshd.js'
import { makeTempDir } from '../helpers/store-engines.js'
import { gitIn } from '../helpers/git-fixture.js'
import { createApiClient } from '../helpers/api-client.js'

const FAKE_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/bin')

interface RunJson {
  id: string
  status: string
  reason: string | null
  conversationId: string | null
  workspaceFinalize: 'ok' | 'failed' | null
  finalizeReason: string | null
}

interface WorkspaceJson {
  id: string
  conversationId: string | null
  path: string
  branch: string | null
}

describe('SSH target', () => {
  let sshd: TestSshd
  let root: string
  let project: string
  let hostDir: string
  let dataDir: string
  let dropFlag: string
  let env: NodeJS.ProcessEnv
  let daemon: RunningDaemon
  let token: string

  const { api, waitForStatus } = createApiClient(() => ({ url: daemon.url, token }))

  async function send(conversationId: string, text: string): Promise<RunJson> {
    const { status, json } = await api<RunJson>('POST', `/api/conversations/${conversationId}/messages`, {
      text,
    })
    expect(status, JSON.stringify(json)).toBe(202)
    return waitForStatus<RunJson>(json.id)
  }

  async function workspaceOf(conversationId: string): Promise<WorkspaceJson> {
    const { json } = await api<WorkspaceJson[]>('GET', '/api/workspaces')
    const found = json.find((workspace) => workspace.conversationId === conversationId)
    if (!found) throw new Error(`no workspace for ${conversationId}`)
    return found
  }

  beforeAll(async () => {
    sshd = await startSshd()
    root = await makeTempDir('hangar-ssh-')
    project = path.join(root, 'project')
    hostDir = path.join(root, 'host', 'hangar')
    dataDir = path.join(root, 'data')
    dropFlag = path.join(root, 'drop-sync-back')
    await mkdir(project)
    gitIn(project, 'init', '-q', '-b', 'main')
    await writeFile(path.join(project, 'README.md'), '# project\n')
    await writeFile(
      path.join(project, 'hangar.yaml'),
      [
        'targets:',
        `  box: { ssh: "${sshd.user}@127.0.0.1", dir: "${hostDir}", port: ${sshd.port}, identityFile: "${sshd.identityFile}" }`,
        'agents:',
        '  remote: { adapter: cursor-agent, target: box }',
      ].join('\n'),
    )
    gitIn(project, 'add', '-A')
    gitIn(project, 'commit', '-qm', 'initial')
    // An ssh that drops the connection a few bytes into a sync-back while the flag file exists.
    const ssh = path.join(root, 'ssh-maybe-dropping')
    await writeFile(
      ssh,
      [
        '#!/bin/sh',
        `if [ -e '${dropFlag}' ]; then case "$*" in *back.XXXXXX*) ssh "$@" | head -c 100; exit 255 ;; esac; fi`,
        'exec ssh "$@"',
        '',
      ].join('\n'),
    )
    await chmod(ssh, 0o755)
    env = cleanEnv({
      PATH: [FAKE_BIN, path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: root,
      HANGAR_SSH_COMMAND: `${ssh} -F ${sshd.configFile}`,
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

  it('runs the agent on the host and brings its files and commit back into the worktree', async () => {
    const { json: conversation } = await api<{ id: string }>('POST', '/api/conversations', {
      agent: 'remote',
    })
    const run = await send(conversation.id, 'FILE=src/remote.txt COMMIT=agent-commit')
    expect(run.status, run.reason ?? '').toBe('succeeded')
    expect(run.workspaceFinalize).toBe('ok')

    const workspace = await workspaceOf(conversation.id)
    expect(await readFile(path.join(workspace.path, 'src', 'remote.txt'), 'utf8')).toBe('hello from mock\n')
    expect(gitIn(workspace.path, 'log', '-1', '--format=%s')).toBe('agent-commit')
    expect(gitIn(workspace.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe(`hangar/${conversation.id}`)
    expect(existsSync(path.join(project, 'src', 'remote.txt'))).toBe(false)

    // The run's stream (it has ended, so the SSE response ends after run-end) says where it ran.
    const stream = await fetch(`${daemon.url}/api/runs/${run.id}/events`, {
      headers: { authorization: `Bearer ${token}` },
    })
    const events = (await stream.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as { type: string; cwd?: string })
    const start = events.find((event) => event.type === 'run-start')
    expect(start?.cwd).toMatch(new RegExp(`^${sshd.user}@127\\.0\\.0\\.1:${hostDir}/workspaces/`))

    // A second run of the conversation: the host already has the base, the uncommitted file travels.
    await writeFile(path.join(workspace.path, 'local-note.txt'), 'written between runs\n')
    const second = await send(conversation.id, 'FILE=second.txt')
    expect(second.status, second.reason ?? '').toBe('succeeded')
    expect(await readFile(path.join(workspace.path, 'second.txt'), 'utf8')).toBe('hello from mock\n')
    expect(await readFile(path.join(workspace.path, 'local-note.txt'), 'utf8')).toBe('written between runs\n')
    expect(gitIn(workspace.path, 'status', '--porcelain')).toContain('second.txt')
  })

  it('fails finalize when the connection drops during sync-back, holds dependents, and a retried finalize releases them', async () => {
    const { json: conversation } = await api<{ id: string }>('POST', '/api/conversations', {
      agent: 'remote',
    })
    await writeFile(dropFlag, '')
    // Removed here too, so a failure in this test does not cascade into the ones after it.
    onTestFinished(() => rm(dropFlag, { force: true }))
    const run = await send(conversation.id, 'FILE=dropped.txt COMMIT=lost-for-now')
    expect(run.status).toBe('failed')
    expect(run.workspaceFinalize).toBe('failed')
    expect(run.reason).toContain('workspace finalize failed')
    const workspace = await workspaceOf(conversation.id)
    const before = gitIn(workspace.path, 'rev-parse', 'HEAD')
    expect(existsSync(path.join(workspace.path, 'dropped.txt'))).toBe(false)
    expect(gitIn(workspace.path, 'status', '--porcelain')).toBe('')

    const { json: dependent } = await api<RunJson>('POST', '/api/runs', {
      agent: 'cursor-agent',
      prompt: 'FILE=after.txt',
      dependsOn: [run.id],
    })
    // Several scheduler passes later it is still held, not failed with dependency_failed.
    await new Promise((resolve) => setTimeout(resolve, 2500))
    expect((await api<RunJson>('GET', `/api/runs/${dependent.id}`)).json.status).toBe('queued')
    expect(gitIn(workspace.path, 'rev-parse', 'HEAD')).toBe(before)

    await rm(dropFlag)
    const retried = await runHangar(['runs', 'finalize', run.id, '--json', '--data-dir', dataDir], {
      env,
      cwd: project,
    })
    expect(retried.code, retried.stderr).toBe(0)
    const finalized = JSON.parse(retried.stdout) as RunJson
    expect(finalized.status).toBe('succeeded')
    expect(finalized.workspaceFinalize).toBe('ok')
    expect(gitIn(workspace.path, 'log', '-1', '--format=%s')).toBe('lost-for-now')
    expect(await readFile(path.join(workspace.path, 'dropped.txt'), 'utf8')).toBe('hello from mock\n')
    expect((await waitForStatus(dependent.id)).status).toBe('succeeded')

    const again = await api<{ error: { code: string } }>('POST', `/api/runs/${run.id}/finalize`)
    expect(again.status).toBe(409)
  })

  it('cancelling a run reaches the agent process on the host', async () => {
    const { json: conversation } = await api<{ id: string }>('POST', '/api/conversations', {
      agent: 'remote',
    })
    await rm(path.join(root, 'agent.pid'), { force: true })
    const { json: started } = await api<RunJson>('POST', `/api/conversations/${conversation.id}/messages`, {
      text: 'FILE=hang.txt HANG=1',
    })
    await waitForStatus(started.id, ['running'])
    const pidFile = path.join(root, 'agent.pid')
    const deadline = Date.now() + 20_000
    while (!existsSync(pidFile) || !(await readFile(pidFile, 'utf8'))) {
      if (Date.now() > deadline) throw new Error('the agent never started on the host')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const pid = Number(await readFile(pidFile, 'utf8'))
    const cancelled = await api<RunJson>('POST', `/api/runs/${started.id}/cancel`)
    expect(cancelled.status).toBe(200)
    expect((await waitForStatus(started.id)).status).toBe('cancelled')
    expect(
      existsSync(`/proc/${pid}`) && !(await readFile(`/proc/${pid}/stat`, 'utf8')).includes(') Z '),
    ).toBe(false)
  })

  it('hangar run with the profile works in place, and no git remote exists anywhere', async () => {
    const result = await runHangar(['run', '--agent', 'remote', '--data-dir', dataDir, 'FILE=from-cli.txt'], {
      env,
      cwd: project,
      // Ships, launches over ssh and syncs back: as long as the API runs above may take.
      timeoutMs: 90_000,
    })
    expect(result.code, result.stderr).toBe(0)
    expect(await readFile(path.join(project, 'from-cli.txt'), 'utf8')).toBe('hello from mock\n')
    for (const repository of [project, path.join(hostDir, 'cache.git')])
      expect(gitIn(repository, 'remote')).toBe('')
    const { json: workspaces } = await api<WorkspaceJson[]>('GET', '/api/workspaces')
    for (const workspace of workspaces) expect(gitIn(workspace.path, 'remote')).toBe('')
  }, 120_000)
})
