// SSH runs lost the agent's work when the process running them died: recovery only marked the run
// `interrupted`, the shipped state was recorded only after a *failed* finalize (so `hangar runs finalize`
// refused), and the next ship ran `git checkout -f && git clean -fd` over the host copy. Against a real
// OpenSSH server on loopback and real Claude Code on the mock model: the agent writes a file on the host
// and then hangs; the daemon (or a `hangar run`) is SIGKILLed; the work must come back — by start-up
// recovery, or by a retried finalize when recovery could not reach the host — and until it has, no run
// may start on that workspace, in a conversation or in place.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { remoteKey } from '../../src/workspaces/ssh/workspace-sync.js'
import { DEFAULT_FILE_CONTENT } from '../fixtures/mock-model/directives.js'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { createApiClient } from '../helpers/api-client.js'
import { gitIn } from '../helpers/git-fixture.js'
import { cleanEnv, HANGAR_BIN, type RunningDaemon, runHangar, startDaemon } from '../helpers/hangar-cli.js'
import {
  loopbackOnlyEnv,
  privateScratchRoot,
  realCliPath,
  startRefusingProxy,
  TEST_API_KEY,
  waitFor,
} from '../helpers/real-cli-cases.js'
import { startSshd, type TestSshd } from '../helpers/sshd.js'

interface RunJson {
  id: string
  status: string
  reason: string | null
  workspaceFinalize: 'ok' | 'failed' | 'pending' | null
  finalizeReason: string | null
}

interface Envelope {
  type: string
  [field: string]: unknown
}

const HANGING_WRITE = (file: string) => `Please create a file. FILE=${file} HANG`

describe('SSH runs interrupted by a crash', () => {
  let sshd: TestSshd
  let mock: MockModelServer
  let refusing: Awaited<ReturnType<typeof startRefusingProxy>>
  let root: string
  let project: string
  let hostDir: string
  let dataDir: string
  let dropFlag: string
  let env: NodeJS.ProcessEnv
  let daemon: RunningDaemon | undefined
  let token: string

  const { api, waitForStatus } = createApiClient(() => ({ url: daemon!.url, token }))

  async function startTheDaemon(): Promise<void> {
    daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: project, timeoutMs: 60_000 })
    token = (JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string }).token
  }

  async function killTheDaemon(): Promise<void> {
    daemon!.child.kill('SIGKILL')
    await daemon!.stop()
    daemon = undefined
  }

  async function workspacePath(conversationId: string): Promise<string> {
    const { json } = await api<{ conversationId: string | null; path: string }[]>('GET', '/api/workspaces')
    const found = json.find((workspace) => workspace.conversationId === conversationId)
    if (!found) throw new Error(`no workspace for ${conversationId}`)
    return found.path
  }

  const hostCopy = (localDir: string) => path.join(hostDir, 'workspaces', remoteKey(localDir))

  async function untilFileExists(file: string, what: string): Promise<void> {
    if (!(await waitFor(() => existsSync(file), 120_000))) throw new Error(`${what} never appeared: ${file}`)
  }

  async function untilRun(runId: string, done: (run: RunJson) => boolean, what: string): Promise<RunJson> {
    const deadline = Date.now() + 120_000
    for (;;) {
      const { json } = await api<RunJson>('GET', `/api/runs/${runId}`)
      if (done(json)) return json
      if (Date.now() > deadline) throw new Error(`${what}: run is ${JSON.stringify(json)}`)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }

  async function eventsOf(runId: string): Promise<Envelope[]> {
    const stream = await fetch(`${daemon!.url}/api/runs/${runId}/events`, {
      headers: { authorization: `Bearer ${token}` },
    })
    return (await stream.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as Envelope)
  }

  /** A conversation whose first run wrote `file` on the host and hangs; the daemon is then SIGKILLed. */
  async function crashMidRun(file: string): Promise<{ conversationId: string; run: RunJson; local: string }> {
    if (!daemon) await startTheDaemon()
    const { json: conversation } = await api<{ id: string }>('POST', '/api/conversations', { agent: 'far' })
    const { status, json: started } = await api<RunJson>(
      'POST',
      `/api/conversations/${conversation.id}/messages`,
      { text: HANGING_WRITE(file) },
    )
    expect(status, JSON.stringify(started)).toBe(202)
    const local = await workspacePath(conversation.id)
    await untilFileExists(path.join(hostCopy(local), file), 'the agent’s file on the host')
    // Recorded when the workspace was shipped, before the agent started: what a finalize needs.
    const running = (await api<RunJson>('GET', `/api/runs/${started.id}`)).json
    expect(running.status).toBe('running')
    expect(running.workspaceFinalize).toBe('pending')
    await killTheDaemon()
    return { conversationId: conversation.id, run: started, local }
  }

  beforeAll(async () => {
    sshd = await startSshd()
    mock = await startMockModelServer()
    refusing = await startRefusingProxy()
    root = await privateScratchRoot('ssh-crash')
    project = path.join(root, 'project')
    hostDir = path.join(root, 'host', 'hangar')
    dataDir = path.join(root, 'data')
    dropFlag = path.join(root, 'drop-sync-back')
    await mkdir(project, { recursive: true })
    await mkdir(path.join(root, 'home'))
    gitIn(project, 'init', '-q', '-b', 'main')
    await writeFile(path.join(project, 'README.md'), '# project\n')
    await writeFile(
      path.join(project, 'hangar.yaml'),
      [
        'targets:',
        `  box: { ssh: "${sshd.user}@127.0.0.1", dir: "${hostDir}", port: ${sshd.port}, identityFile: "${sshd.identityFile}" }`,
        'agents:',
        '  far: { adapter: claude-code, target: box }',
        '  near: { adapter: claude-code }',
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
      PATH: realCliPath(),
      HOME: path.join(root, 'home'),
      // The host is this machine, as this user: keep Claude's state out of the real home there too.
      CLAUDE_CONFIG_DIR: path.join(root, 'claude-config'),
      HANGAR_SSH_COMMAND: `${ssh} -F ${sshd.configFile}`,
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_API_KEY: TEST_API_KEY,
      CLAUDE_CODE_MAX_RETRIES: '1',
      ...loopbackOnlyEnv(refusing.url),
    })
    await startTheDaemon()
  }, 120_000)

  afterAll(async () => {
    await daemon?.stop()
    await sshd?.stop()
    await mock?.close()
    await refusing?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('brings the work back by start-up recovery, logs it, and the next message wipes nothing', async () => {
    const { conversationId, run, local } = await crashMidRun('crash.txt')
    expect(existsSync(path.join(local, 'crash.txt'))).toBe(false)

    await startTheDaemon()
    const recovered = await untilRun(run.id, (current) => current.workspaceFinalize === 'ok', 'recovery')
    expect(recovered.status).toBe('interrupted')
    expect(await readFile(path.join(local, 'crash.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
    // The event log says what GET /api/runs/:id says.
    const events = await eventsOf(run.id)
    const finalized = events.filter((event) => event.type === 'finalize-end')
    expect(finalized.at(-1)).toMatchObject({ finalize: 'ok', status: recovered.status })

    const { status, json: next } = await api<RunJson>(
      'POST',
      `/api/conversations/${conversationId}/messages`,
      {
        text: 'Please create a file. FILE=after.txt',
      },
    )
    expect(status, JSON.stringify(next)).toBe(202)
    const ended = await waitForStatus<RunJson>(next.id, undefined, 120_000)
    expect(ended.status, ended.reason ?? '').toBe('succeeded')
    expect(await readFile(path.join(local, 'after.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
    expect(await readFile(path.join(local, 'crash.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
    expect(await readFile(path.join(hostCopy(local), 'crash.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
  }, 400_000)

  it('keeps the run retryable when recovery cannot bring the work back, gates the workspace, and a retried finalize does', async () => {
    const { conversationId, run, local } = await crashMidRun('unreachable.txt')
    await writeFile(dropFlag, '')
    try {
      await startTheDaemon()
      const failed = await untilRun(run.id, (current) => current.finalizeReason !== null, 'a failed recovery')
      expect(failed.status).toBe('interrupted')
      expect(['pending', 'failed']).toContain(failed.workspaceFinalize)
      expect(existsSync(path.join(local, 'unreachable.txt'))).toBe(false)
      expect(await readFile(path.join(hostCopy(local), 'unreachable.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)

      // The workspace is gated: the next message is refused, naming the way out.
      const refused = await api<{ error: { code: string; message: string } }>(
        'POST',
        `/api/conversations/${conversationId}/messages`,
        { text: 'Please create a file. FILE=too-early.txt' },
      )
      expect(refused.status).toBe(409)
      expect(refused.json.error.message).toContain(`hangar runs finalize ${run.id}`)
    } finally {
      await rm(dropFlag, { force: true })
    }

    const retried = await runHangar(['runs', 'finalize', run.id, '--json', '--data-dir', dataDir], {
      env,
      cwd: project,
      timeoutMs: 120_000,
    })
    expect(retried.code, retried.stderr).toBe(0)
    const finalized = JSON.parse(retried.stdout) as RunJson
    expect(finalized.workspaceFinalize).toBe('ok')
    expect(finalized.status).toBe('interrupted')
    expect(await readFile(path.join(local, 'unreachable.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
    const events = await eventsOf(run.id)
    expect(events.filter((event) => event.type === 'finalize-end').at(-1)).toMatchObject({
      finalize: 'ok',
      status: 'interrupted',
    })
    const again = await api<{ error: { code: string } }>('POST', `/api/runs/${run.id}/finalize`)
    expect(again.status).toBe(409)
  }, 400_000)

  it('gates in-place runs on a directory whose host copy holds a killed `hangar run`’s work', async () => {
    if (!daemon) await startTheDaemon()
    // `hangar run` works in place in the project: the workspace shipped is the project itself.
    const cli: ChildProcess = spawn(
      process.execPath,
      [HANGAR_BIN, 'run', '--agent', 'far', '--json', '--data-dir', dataDir, HANGING_WRITE('inplace.txt')],
      { env, cwd: project, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let output = ''
    cli.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
    cli.stderr!.on('data', () => {})
    const exited = new Promise((resolve) => cli.once('close', resolve))
    try {
      await untilFileExists(path.join(hostCopy(project), 'inplace.txt'), 'the agent’s file on the host')
    } finally {
      cli.kill('SIGKILL')
      await exited
    }
    const runId = (JSON.parse(output.split('\n')[0]!) as { runId: string }).runId

    // Another in-place run, local this time, on the same directory: refused (CLI and API).
    const local = await runHangar(
      ['run', '--agent', 'near', '--data-dir', dataDir, 'Please create a file. FILE=local.txt'],
      { env, cwd: project, timeoutMs: 60_000 },
    )
    expect(local.code).not.toBe(0)
    expect(local.stderr).toContain(`hangar runs finalize ${runId}`)
    const viaApi = await api<{ error: { message: string } }>('POST', '/api/runs', {
      agent: 'near',
      prompt: 'Please create a file. FILE=local.txt',
    })
    expect(viaApi.status).toBe(409)
    expect(viaApi.json.error.message).toContain(`hangar runs finalize ${runId}`)
    // And a run that would ship the project over the host copy.
    const remote = await runHangar(
      ['run', '--agent', 'far', '--data-dir', dataDir, 'Please create a file. FILE=other.txt'],
      { env, cwd: project, timeoutMs: 60_000 },
    )
    expect(remote.code).not.toBe(0)
    expect(remote.stderr).toContain(`hangar runs finalize ${runId}`)
    // A Hangar with another store knows nothing of that run: the host copy's own mark refuses its ship.
    const stranger = await runHangar(
      [
        'run',
        '--agent',
        'far',
        '--data-dir',
        path.join(root, 'other-data'),
        'Please create a file. FILE=other.txt',
      ],
      { env, cwd: project, timeoutMs: 60_000 },
    )
    expect(stranger.code).not.toBe(0)
    expect(`${stranger.stdout}${stranger.stderr}`).toContain(`hangar runs finalize ${runId}`)
    expect(existsSync(path.join(project, 'local.txt'))).toBe(false)
    expect(await readFile(path.join(hostCopy(project), 'inplace.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)

    // The finalize takes the run from its dead owner and brings the work back.
    const retried = await runHangar(['runs', 'finalize', runId, '--json', '--data-dir', dataDir], {
      env,
      cwd: project,
      timeoutMs: 120_000,
    })
    expect(retried.code, retried.stderr).toBe(0)
    expect((JSON.parse(retried.stdout) as RunJson).workspaceFinalize).toBe('ok')
    expect(await readFile(path.join(project, 'inplace.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)

    const after = await runHangar(
      ['run', '--agent', 'near', '--data-dir', dataDir, 'Please create a file. FILE=local.txt'],
      { env, cwd: project, timeoutMs: 120_000 },
    )
    expect(after.code, after.stderr).toBe(0)
    expect(await readFile(path.join(project, 'local.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
    expect(await readFile(path.join(project, 'inplace.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
  }, 400_000)
})
