// Issue 21: Hangar run like real software. `hangar up --detach` starts the daemon in its own session with
// its output in <data-dir>/logs/hangar.log and prints where it runs once it serves; `hangar status` says
// how it is (exit 3 when it is not running); `hangar down` stops it cleanly — with a run going, the real
// Claude Code on the mock model, that run ends interrupted with its events stored, its process group gone,
// and daemon.json removed. The built daemon, real processes.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { groupAlive } from '../../src/adapters/supervisor.js'
import { processGone } from '../../src/cli/daemon-process.js'
import { openStore } from '../../src/store/store.js'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { createApiClient } from '../helpers/api-client.js'
import { type FeedProject, startFeedProject } from '../helpers/feed-project.js'
import { cleanEnv, runHangar } from '../helpers/hangar-cli.js'
import { loopbackOnlyEnv, realCliPath, startRefusingProxy, TEST_API_KEY } from '../helpers/real-cli-cases.js'

interface DaemonJson {
  url: string
  pid: number
  token: string
}

interface StatusJson {
  running: boolean
  url?: string
  pid?: number
  version?: string
  engine?: string
  dataDir: string
  uptimeSeconds?: number
  runs?: { running: number; queued: number }
}

// Each command is a Node start-up of the whole CLI; a detached start also waits for the daemon to serve.
const CLI_TIMEOUT_MS = 120_000

describe('daemon control (up --detach, status, down)', () => {
  let mock: MockModelServer
  let refusing: Awaited<ReturnType<typeof startRefusingProxy>>
  let shop: FeedProject
  let env: NodeJS.ProcessEnv
  const dataDir = () => path.join(shop.root, 'data')
  const daemonFile = () => path.join(dataDir(), 'daemon.json')
  const hangar = (args: string[]) => runHangar(args, { env, cwd: shop.project, timeoutMs: CLI_TIMEOUT_MS })
  const readDaemonJson = async () => JSON.parse(await readFile(daemonFile(), 'utf8')) as DaemonJson

  beforeAll(async () => {
    mock = await startMockModelServer()
    refusing = await startRefusingProxy()
    shop = await startFeedProject('daemon-control', 'unused')
    env = cleanEnv({
      PATH: realCliPath(),
      HOME: shop.home,
      HANGAR_DATA_DIR: path.join(shop.root, 'data'),
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_API_KEY: TEST_API_KEY,
      CLAUDE_CODE_MAX_RETRIES: '1',
      ...loopbackOnlyEnv(refusing.url),
    })
  }, 60_000)

  afterAll(async () => {
    // A test that failed half-way leaves no daemon behind.
    await hangar(['down', '--timeout', '30']).catch(() => {})
    await mock?.close()
    await refusing?.close()
    await shop?.close()
  }, CLI_TIMEOUT_MS)

  it(
    'says it is not running, exit 3, and down has nothing to stop (exit 0)',
    async () => {
      const status = await hangar(['status'])
      expect(status.code).toBe(3)
      expect(status.stdout).toContain(`not running (data dir ${dataDir()})`)
      const json = await hangar(['status', '--json'])
      expect(json.code).toBe(3)
      expect(JSON.parse(json.stdout)).toEqual({ running: false, dataDir: dataDir() })
      const down = await hangar(['down'])
      expect(down.code).toBe(0)
      expect(down.stderr).toContain(`No daemon is running for ${dataDir()}`)
    },
    CLI_TIMEOUT_MS,
  )

  it('starts in the background, tells where it runs, answers status, refuses a second up, stops', async () => {
    const up = await hangar(['up', '--detach', '--port', '0'])
    expect(up.code, up.stderr).toBe(0)
    const url = /listening on (http:\/\/\S+)/.exec(up.stdout)?.[1]
    const pid = Number(/pid (\d+)/.exec(up.stdout)?.[1])
    expect(url).toBeTruthy()
    expect(up.stdout).toMatch(/Sign in: http:\/\/\S+\/login#hgl_/)
    const logFile = path.join(dataDir(), 'logs', 'hangar.log')
    expect(up.stdout).toContain(`Log: ${logFile}`)
    const daemon = await readDaemonJson()
    expect(daemon).toMatchObject({ url, pid })
    // Its own session (fields after the name: state ppid pgrp session): closing the terminal leaves it.
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
    const [, , , session] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    expect(Number(session)).toBe(pid)
    // The link is a credential: it went to the CLI, never into the log.
    const log = await readFile(logFile, 'utf8')
    expect(log).toContain(`✓ listening on ${url}`)
    expect(log).not.toContain('hgl_')

    const second = await hangar(['up', '--detach', '--port', '0'])
    expect(second.code).toBe(1)
    expect(second.stderr).toMatch(/^hangar: error: a daemon is already running for .* \(pid \d+\)/)

    const status = await hangar(['status', '--json'])
    expect(status.code, status.stderr).toBe(0)
    const shown = JSON.parse(status.stdout) as StatusJson
    expect(shown).toMatchObject({
      running: true,
      url,
      pid,
      engine: 'sqlite',
      dataDir: dataDir(),
      runs: { running: 0, queued: 0 },
    })
    expect(shown.version).toMatch(/^\d+\.\d+\.\d+/)
    const text = await hangar(['status'])
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/● running\n {2}url: +http/)

    const down = await hangar(['down'])
    expect(down.code, down.stderr).toBe(0)
    expect(down.stdout).toContain(`✓ stopped the daemon at ${url} (pid ${pid})`)
    expect(processGone(pid)).toBe(true)
    expect(existsSync(daemonFile())).toBe(false)
    expect(await readFile(logFile, 'utf8')).toContain('✓ stopped')
    expect((await hangar(['status'])).code).toBe(3)
  }, 300_000)

  it('stops with a run going: the run ends interrupted with its events stored, no process left', async () => {
    const up = await hangar(['up', '--detach', '--port', '0'])
    expect(up.code, up.stderr).toBe(0)
    const daemon = await readDaemonJson()
    const { api, waitForStatus } = createApiClient(() => ({ url: daemon.url, token: daemon.token }))
    // The mock never answers: Claude Code waits on a model request that stays open.
    const submitted = await api<{ id: string }>('POST', '/api/runs', {
      agent: 'claude-code',
      prompt: 'Wait for me. HANG',
    })
    expect(submitted.status, JSON.stringify(submitted.json)).toBe(201)
    const runId = submitted.json.id
    await waitForStatus(runId, ['running'], 120_000)
    const deadline = Date.now() + 120_000
    while (!mock.requests.some((request) => request.rawBody.includes('HANG'))) {
      if (Date.now() > deadline) throw new Error('Claude Code never asked the model')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const running = await api<{ agentPgid: number | null; status: string }>('GET', `/api/runs/${runId}`)
    const pgid = running.json.agentPgid!
    expect(pgid).toBeGreaterThan(0)
    expect(groupAlive(pgid)).toBe(true)
    const status = await hangar(['status', '--json'])
    expect((JSON.parse(status.stdout) as StatusJson).runs).toEqual({ running: 1, queued: 0 })

    const down = await hangar(['down', '--timeout', '90'])
    expect(down.code, down.stderr).toBe(0)
    expect(processGone(daemon.pid)).toBe(true)
    expect(existsSync(daemonFile())).toBe(false)
    // No orphan: the agent's whole process group went with the daemon.
    expect(groupAlive(pgid)).toBe(false)

    const store = await openStore({ dataDir: dataDir() })
    try {
      const owner = (await store.users.findOwner())!
      const scope = store.forUser(owner.id)
      const run = (await scope.runs.get(runId))!
      // Nobody cancelled it: interrupted, as after a crash, so it can be resumed.
      expect(run.status).toBe('interrupted')
      expect(run.reason).toBe('the daemon stopped before the run finished')
      const events = await scope.runs.listEvents(runId)
      expect(events.at(-1)).toMatchObject({
        type: 'run-end',
        status: 'interrupted',
        reason: 'the daemon stopped before the run finished',
      })
      expect(events.some((event) => event.type === 'run-start')).toBe(true)
      // The proxy's request log, written behind, was flushed by the stop: the hanging request is there.
      const requests = await scope.proxyRequests.listForRun(runId)
      expect(requests.length).toBeGreaterThan(0)
    } finally {
      await store.close()
    }
    // The stop is in the log, after the daemon's own lines.
    const log = await readFile(path.join(dataDir(), 'logs', 'hangar.log'), 'utf8')
    expect(log).toMatch(/Stopping \(SIGTERM\)[\s\S]*✓ stopped\n$/)
  }, 400_000)

  it(
    'kills a daemon that does not stop within --timeout, and says so (exit 1)',
    async () => {
      // A stand-in that ignores SIGTERM, found through a daemon.json as a hung daemon would be.
      const stubborn = spawn(
        process.execPath,
        [
          '-e',
          "process.on('SIGTERM', () => {}); console.log('ready'); setInterval(() => {}, 1000) // hangar",
        ],
        { stdio: ['ignore', 'pipe', 'ignore'] },
      )
      // Its SIGTERM handler is in place once it says so.
      await new Promise((resolve) => stubborn.stdout.once('data', resolve))
      const file = {
        url: 'http://127.0.0.1:1',
        pid: stubborn.pid,
        bootId: 'b',
        token: 'hgs_x',
        startedAt: '',
      }
      await mkdir(dataDir(), { recursive: true })
      await writeFile(daemonFile(), JSON.stringify(file))
      try {
        const down = await hangar(['down', '--timeout', '2'])
        expect(down.code).toBe(1)
        expect(down.stderr).toContain(
          `The daemon (pid ${stubborn.pid}) did not stop within 2 s and was killed (SIGKILL)`,
        )
        expect(processGone(stubborn.pid!)).toBe(true)
      } finally {
        stubborn.kill('SIGKILL')
        await rm(daemonFile(), { force: true })
      }
    },
    CLI_TIMEOUT_MS,
  )

  it(
    'refuses to signal a process that is not a Hangar daemon',
    async () => {
      const other = spawn('sleep', ['600'], { stdio: 'ignore' })
      await new Promise((resolve) => other.once('spawn', resolve))
      await mkdir(dataDir(), { recursive: true })
      await writeFile(daemonFile(), JSON.stringify({ url: 'http://127.0.0.1:1', pid: other.pid, token: 't' }))
      try {
        const down = await hangar(['down'])
        expect(down.code).toBe(1)
        expect(down.stderr).toMatch(/^hangar: error: process \d+ of .*daemon\.json is not a Hangar daemon; /)
        expect(processGone(other.pid!)).toBe(false)
      } finally {
        other.kill('SIGKILL')
        await rm(daemonFile(), { force: true })
      }
    },
    CLI_TIMEOUT_MS,
  )

  it(
    'writes a service unit that starts this installed hangar',
    async () => {
      const printed = await hangar(['service', 'install', '--user', '--print'])
      expect(printed.code, printed.stderr).toBe(0)
      const exec = /^ExecStart="([^"]+)" "([^"]+)" "up"$/m.exec(printed.stdout)
      expect(exec?.[1]).toBe(process.execPath)
      expect(exec?.[2]).toMatch(/\/dist\/bin\/hangar\.js$/)
      expect(existsSync(exec![2]!)).toBe(true)
      expect(printed.stdout).toContain(`Environment="HANGAR_DATA_DIR=${dataDir()}"`)
    },
    CLI_TIMEOUT_MS,
  )

  it(
    'says where the log is when the daemon dies while starting',
    async () => {
      // A port taken by another listener: the detached daemon fails to bind and exits.
      const taken = new URL(mock.url).port
      const up = await hangar(['up', '--detach', '--port', taken])
      expect(up.code).toBe(1)
      const lines = up.stderr.trim().split('\n')
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(
        new RegExp(
          `^hangar: error: the daemon exited with code \\d+ while starting: .*${taken}.*; see .*/logs/hangar\\.log$`,
        ),
      )
      expect(existsSync(daemonFile())).toBe(false)
    },
    CLI_TIMEOUT_MS,
  )
})
