// `hangar agents` and `hangar run` as a new user tries them: the built binary, the real CLIs on PATH, an
// API key and base URL in the environment (pointing at the mock model), a git project as the cwd.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { groupAlive } from '../../src/adapters/supervisor.js'
import { openStore } from '../../src/store/store.js'
import {
  DEFAULT_FILE_CONTENT,
  FINAL_TEXT,
  type MockModelServer,
  startMockModelServer,
} from '../fixtures/mock-model-server.js'
import { cleanEnv, HANGAR_BIN, runHangar } from '../helpers/hangar-cli.js'
import {
  loopbackOnlyEnv,
  privateScratchRoot,
  startRefusingProxy,
  TEST_API_KEY,
  realCliPath,
  waitFor,
} from '../helpers/real-cli-cases.js'
import { node24Binary } from '../helpers/test-clis.js'

interface Envelope {
  v: number
  runId: string
  seq: number
  type: string
  [field: string]: unknown
}

describe('hangar run with real CLIs', () => {
  let mock: MockModelServer
  let proxy: Awaited<ReturnType<typeof startRefusingProxy>>
  let root: string
  let dataDir: string
  let env: NodeJS.ProcessEnv

  beforeAll(async () => {
    mock = await startMockModelServer()
    proxy = await startRefusingProxy()
    root = await privateScratchRoot('hangar-run')
    dataDir = path.join(root, 'data')
    await mkdir(path.join(root, 'home'), { recursive: true })
    env = cleanEnv({
      PATH: realCliPath(),
      HOME: path.join(root, 'home'),
      HANGAR_DATA_DIR: dataDir,
      HANGAR_NODE24: node24Binary(),
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_API_KEY: TEST_API_KEY,
      CLAUDE_CODE_MAX_RETRIES: '1',
      ...loopbackOnlyEnv(proxy.url),
    })
  }, 180_000)

  afterAll(async () => {
    await mock?.close()
    await proxy?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  async function project(): Promise<string> {
    const directory = path.join(root, `project-${Math.random().toString(36).slice(2, 8)}`)
    await mkdir(directory)
    execFileSync('git', ['init', '-q'], { cwd: directory })
    return directory
  }

  // `agents --refresh` starts every pinned CLI for its version, a few seconds each on a loaded machine.
  it('lists the installed CLIs with versions and sign-in state', async () => {
    const result = await runHangar(['agents', '--refresh'], { env, timeoutMs: 120_000 })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(/^✓ claude-code 2\.1\.330 \(auth: ok\)$/m)
    expect(result.stdout).toMatch(/^✗ codex 0\.169\.0 \(installed, not authenticated: .*OPENAI_API_KEY.*\)$/m)
    expect(result.stdout).toMatch(/^✗ cursor-agent \(not installed, unverified against the real CLI\)$/m)
    const json = JSON.parse((await runHangar(['agents', '--json'], { env })).stdout) as {
      id: string
      installed: boolean
      version: string | null
      auth: { state: string; source?: string }
      capabilities: { streaming: boolean }
      versionWarning: string | null
    }[]
    expect(json.map((adapter) => adapter.id)).toEqual([
      'claude-code',
      'codex',
      'gemini',
      'opencode',
      'copilot',
      'openclaw',
      'cursor-agent',
      // The built-in agent is listed too (issue 20 item 3), ready here: the environment gives it a key.
      'builtin',
    ])
    expect(json.find((adapter) => adapter.id === 'builtin')).toMatchObject({ ready: true, problem: null })
    expect(json.find((adapter) => adapter.id === 'claude-code')).toMatchObject({
      installed: true,
      version: '2.1.330',
      auth: { state: 'ok', source: 'ANTHROPIC_API_KEY' },
    })
    expect(json.find((adapter) => adapter.id === 'openclaw')).toMatchObject({
      installed: true,
      capabilities: { streaming: false },
    })
    expect(JSON.stringify(json)).not.toContain(TEST_API_KEY)
    // Issue 18 item 9: the pinned CLIs are the tested ones, so none gets an untested-version warning.
    const installed = json.filter((adapter) => adapter.installed)
    expect(installed.length).toBeGreaterThanOrEqual(6)
    expect(installed.map((adapter) => [adapter.id, adapter.versionWarning])).toEqual(
      installed.map((adapter) => [adapter.id, null]),
    )
  }, 180_000)

  it('runs the first signed-in CLI in place and shows what it did', async () => {
    const cwd = await project()
    const result = await runHangar(['run', 'Please create a file. FILE=hello.txt'], {
      env,
      cwd,
      timeoutMs: 90_000,
    })
    expect(result.code, result.stderr).toBe(0)
    expect(await readFile(path.join(cwd, 'hello.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
    expect(result.stdout.trim()).toBe(FINAL_TEXT)
    expect(result.stderr).toMatch(/^▶ claude-code \(claude-code\) in /m)
    expect(result.stderr).toMatch(/^ {2}✎ create hello\.txt$/m)
    expect(result.stderr).toMatch(/^✓ succeeded .*\(run run_[0-9A-Z]+\)$/m)
    // The mock's model is in no price table: the proxy meters the tokens, and the cost is Claude's own
    // report (it showed none before), marked as the agent's, in the run's line and in `hangar runs list`.
    expect(result.stderr).toMatch(/^✓ succeeded · \d+ in \/ \d+ out tokens · \$\d+\.\d{4} \(agent\) /m)
    const runId = /\(run (run_[0-9A-Z]+)\)$/m.exec(result.stderr)![1]!
    const listed = await runHangar(['runs', 'list', '--limit', '5'], { env, cwd })
    expect(listed.stdout).toMatch(/^ID +STATUS +AGENT +CREATED +TOOK +TOKENS +COST +REASON$/m)
    expect(listed.stdout).toMatch(
      new RegExp(
        `^${runId} +succeeded +claude-code +\\S+ +\\d+s +[\\d.]+k? +\\$\\d+\\.\\d{4} \\(agent\\)`,
        'm',
      ),
    )
    const shown = JSON.parse((await runHangar(['runs', 'show', runId, '--json'], { env, cwd })).stdout)
    expect(shown.usage).toMatchObject({ costSource: 'agent', costUsd: expect.any(Number) })
  })

  it('prints one envelope per line with --json, and --resume continues the session', async () => {
    const cwd = await project()
    const first = await runHangar(
      ['run', '--agent', 'claude-code', '--json', 'Please create a file. FILE=a.txt'],
      {
        env,
        cwd,
        timeoutMs: 90_000,
      },
    )
    expect(first.code, first.stderr).toBe(0)
    const envelopes = first.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Envelope)
    expect(envelopes.map((envelope) => envelope.seq)).toEqual(envelopes.map((_, index) => index + 1))
    expect(envelopes.every((envelope) => envelope.v === 1 && envelope.runId === envelopes[0]!.runId)).toBe(
      true,
    )
    expect(envelopes[0]).toMatchObject({
      type: 'run-start',
      agent: 'claude-code',
      adapter: 'claude-code',
      proxied: true,
    })
    const end = envelopes.at(-1)!
    expect(end).toMatchObject({ type: 'run-end', status: 'succeeded', sessionId: expect.any(String) })

    const second = await runHangar(['run', '--resume', end.runId, '--json', 'Another one. FILE=b.txt'], {
      env,
      cwd: path.join(root, 'home'),
      timeoutMs: 90_000,
    })
    expect(second.code, second.stderr).toBe(0)
    expect(existsSync(path.join(cwd, 'b.txt'))).toBe(true)
    const secondEnd = JSON.parse(second.stdout.trim().split('\n').at(-1)!) as Envelope
    expect(secondEnd).toMatchObject({ type: 'run-end', status: 'succeeded' })

    const store = await openStore({ dataDir })
    try {
      const owner = (await store.users.findOwner())!
      const resumed = await store.forUser(owner.id).runs.get(secondEnd.runId)
      expect(resumed).toMatchObject({ continues: end.runId, cwd, status: 'succeeded' })
    } finally {
      await store.close()
    }
  })

  it('reads the prompt from stdin', async () => {
    const cwd = await project()
    const result = await runHangar(['run', '--agent', 'claude-code'], {
      env,
      cwd,
      input: 'Please create a file. FILE=stdin.txt\n',
      timeoutMs: 90_000,
    })
    expect(result.code, result.stderr).toBe(0)
    expect(existsSync(path.join(cwd, 'stdin.txt'))).toBe(true)
  })

  it('exits 1 with the reason when the model refuses the key', async () => {
    const cwd = await project()
    const result = await runHangar(['run', '--agent', 'claude-code', 'FAIL=401'], {
      env,
      cwd,
      timeoutMs: 90_000,
    })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^✗ failed: .*(401|authenticate)/im)
    expect(result.stderr).not.toMatch(/\n\s+at /)
  })

  it('gives a profile its skills through the native folder, and removes them afterwards', async () => {
    const cwd = await project()
    await mkdir(path.join(cwd, 'skills', 'house-review'), { recursive: true })
    await writeFile(
      path.join(cwd, 'skills', 'house-review', 'SKILL.md'),
      '---\nname: house-review\ndescription: Checks the zebra-striped naming rule\n---\nAlways check zebra stripes.\n',
    )
    await writeFile(
      path.join(cwd, 'hangar.yaml'),
      'agents:\n  reviewer:\n    adapter: claude-code\n    skills: [./skills/house-review]\n',
    )
    const before = mock.requests.length
    const result = await runHangar(
      ['run', '--agent', 'reviewer', '--json', 'Please create a file. FILE=r.txt'],
      {
        env,
        cwd,
        timeoutMs: 90_000,
      },
    )
    expect(result.code, result.stderr).toBe(0)
    const start = JSON.parse(result.stdout.split('\n')[0]!) as Envelope
    expect(start).toMatchObject({
      type: 'run-start',
      agent: 'reviewer',
      adapter: 'claude-code',
      skills: { strategy: 'native', names: ['house-review'] },
    })
    // Claude found it in .claude/skills and told the model about it.
    expect(mock.requests.slice(before).some((request) => request.rawBody.includes('zebra-striped'))).toBe(
      true,
    )
    expect(existsSync(path.join(cwd, '.claude'))).toBe(false)
    expect(execFileSync('git', ['status', '--porcelain'], { cwd }).toString()).not.toContain('.claude')
  })

  it('exits 2 for an unknown agent', async () => {
    const result = await runHangar(['run', '--agent', 'nosuch', 'hi'], { env, cwd: path.join(root, 'home') })
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/hangar: error: unknown agent "nosuch"/)
  })

  it('cancels cleanly on Ctrl-C: exit 130, run cancelled, no agent process left', async () => {
    const cwd = await project()
    const child = spawn(
      process.execPath,
      [HANGAR_BIN, 'run', '--agent', 'claude-code', 'Please create a file. FILE=x.txt HANG'],
      {
        env,
        cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
    expect(await waitFor(() => existsSync(path.join(cwd, 'x.txt')), 60_000)).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 500))
    child.kill('SIGINT')
    expect(await exited).toBe(130)
    expect(stderr).toMatch(/^✗ cancelled/m)

    const store = await openStore({ dataDir })
    try {
      const owner = (await store.users.findOwner())!
      const [latest] = await store.forUser(owner.id).runs.list({ limit: 1 })
      expect(latest?.status).toBe('cancelled')
      expect(groupAlive(latest!.agentPgid!)).toBe(false)
    } finally {
      await store.close()
    }
  })
})
