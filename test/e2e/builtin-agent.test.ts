// The built-in agent as a new user meets it: only ANTHROPIC_API_KEY (pointed at the mock model) or only a
// local OpenAI-compatible endpoint; `hangar run --agent builtin` proposes, `hangar actions` decides, and
// the continuation run finishes the turn.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStore } from '../../src/store/store.js'
import {
  DEFAULT_FILE_CONTENT,
  FINAL_TEXT,
  type MockModelServer,
  startMockModelServer,
} from '../fixtures/mock-model-server.js'
import { cleanEnv, HANGAR_BIN, runHangar } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

interface ActionJson {
  id: string
  status: string
  tool: string
  classification: string
  summary: string
  runId: string
}

describe('built-in agent', () => {
  let mock: MockModelServer
  let root: string
  let dataDir: string
  let env: NodeJS.ProcessEnv

  beforeAll(async () => {
    mock = await startMockModelServer()
    root = await makeTempDir('hangar-builtin-')
    dataDir = path.join(root, 'data')
    // PATH without any agent CLI: the built-in agent is what a user with none gets.
    env = cleanEnv({
      PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: path.join(root, 'home'),
      HANGAR_DATA_DIR: dataDir,
      ANTHROPIC_API_KEY: 'sk-ant-test-builtin-0123456789',
      ANTHROPIC_BASE_URL: mock.url,
    })
    await mkdir(path.join(root, 'home'))
  })

  afterAll(async () => {
    await mock?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  /** Where the CLI commands run: not around the data dir (a data dir inside the project is refused). */
  const home = () => path.join(root, 'home')

  async function project(): Promise<string> {
    const directory = path.join(root, `project-${Math.random().toString(36).slice(2, 8)}`)
    await mkdir(directory)
    execFileSync('git', ['init', '-q'], { cwd: directory })
    return directory
  }

  const pending = async () => {
    const listed = await runHangar(['actions', 'list', '--json'], { env, cwd: home() })
    expect(listed.code, listed.stderr).toBe(0)
    return JSON.parse(listed.stdout) as ActionJson[]
  }

  it('proposes a write without making it, and applies it on confirm', async () => {
    const cwd = await project()
    const run = await runHangar(['run', 'Please create a file. FILE=hello.txt'], {
      env,
      cwd,
      timeoutMs: 60_000,
    })
    expect(run.code, run.stderr).toBe(3)
    expect(run.stderr).toMatch(/^▶ builtin \(builtin, claude-sonnet-4-6\)/m)
    expect(run.stderr).toMatch(
      /^\? Create hello\.txt.*\(safe_create\) — decide with: hangar actions confirm\|reject act_/m,
    )
    expect(run.stderr).toMatch(/^✗ awaiting_confirmation: 1 proposal\(s\) wait for a decision/m)
    expect(existsSync(path.join(cwd, 'hello.txt'))).toBe(false)
    // The model got our tools and the SDK's auth header with the key.
    const first = mock.requests.find((request) => request.family === 'anthropic')!
    expect(JSON.stringify(first.body)).toContain('write_file')

    const [action] = await pending()
    expect(action).toMatchObject({ status: 'pending', tool: 'write_file', classification: 'safe_create' })
    const confirm = await runHangar(['actions', 'confirm', action!.id], {
      env,
      cwd: home(),
      timeoutMs: 60_000,
    })
    expect(confirm.code, confirm.stderr).toBe(0)
    expect(confirm.stderr).toContain(`${action!.id} is now applied`)
    expect(confirm.stdout.trim()).toBe(FINAL_TEXT)
    expect(await readFile(path.join(cwd, 'hello.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
    expect(await pending()).toEqual([])

    // Deciding again the same way returns the stored outcome; the other way is a conflict.
    const again = await runHangar(['actions', 'confirm', action!.id], { env, cwd: home() })
    expect(again.code).toBe(0)
    expect(again.stderr).toContain('was already applied')
    const reject = await runHangar(['actions', 'reject', action!.id], { env, cwd: home() })
    expect(reject.code, reject.stderr).toBe(1)
    expect(reject.stderr).toMatch(/hangar: error: action act_\w+ was already applied/)

    const store = await openStore({ dataDir })
    try {
      const owner = (await store.users.findOwner())!
      const runs = await store.forUser(owner.id).runs.list()
      const continuation = runs.find((candidate) => candidate.continues === action!.runId)
      expect(continuation?.status).toBe('succeeded')
      const audit = await store.forUser(owner.id).audit.list({ action: 'action.apply' })
      // The CLI with no daemon decides as the owner in person.
      expect(audit[0]).toMatchObject({
        targetId: action!.id,
        actor: `user:${owner.id}`,
        details: { outcome: 'applied' },
      })
    } finally {
      await store.close()
    }
  })

  it('tells the model about a rejection, with the reason, and changes nothing', async () => {
    const cwd = await project()
    expect(
      (await runHangar(['run', '--agent', 'builtin', 'FILE=nope.txt'], { env, cwd, timeoutMs: 60_000 })).code,
    ).toBe(3)
    const [action] = await pending()
    const before = mock.requests.length
    const reject = await runHangar(['actions', 'reject', action!.id, '--reason', 'not this file'], {
      env,
      cwd: home(),
      timeoutMs: 60_000,
    })
    expect(reject.code, reject.stderr).toBe(0)
    expect(existsSync(path.join(cwd, 'nope.txt'))).toBe(false)
    const next = mock.requests.slice(before).find((request) => request.family === 'anthropic')!
    expect(next.rawBody).toContain('The user rejected this write_file call: not this file')
  })

  it('applies safe proposals itself with --yes', async () => {
    const cwd = await project()
    const run = await runHangar(['run', '--agent', 'builtin', '--yes', 'FILE=auto.txt'], {
      env,
      cwd,
      timeoutMs: 60_000,
    })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toMatch(/^ {2}✎ create auto\.txt$/m)
    expect(await readFile(path.join(cwd, 'auto.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
  })

  it('reports a conflict when the file changed after the proposal', async () => {
    const cwd = await project()
    expect(
      (await runHangar(['run', '--agent', 'builtin', 'FILE=race.txt'], { env, cwd, timeoutMs: 60_000 })).code,
    ).toBe(3)
    await writeFile(path.join(cwd, 'race.txt'), 'written by a person meanwhile\n')
    const [action] = await pending()
    const confirm = await runHangar(['actions', 'confirm', action!.id], {
      env,
      cwd: home(),
      timeoutMs: 60_000,
    })
    expect(confirm.stderr).toContain(`${action!.id} is now conflict`)
    expect(await readFile(path.join(cwd, 'race.txt'), 'utf8')).toBe('written by a person meanwhile\n')
  })

  it('lets exactly one of two concurrent confirms apply', async () => {
    const cwd = await project()
    expect(
      (await runHangar(['run', '--agent', 'builtin', 'FILE=once.txt'], { env, cwd, timeoutMs: 60_000 })).code,
    ).toBe(3)
    const [action] = await pending()
    const [one, two] = await Promise.all([
      runHangar(['actions', 'confirm', action!.id], { env, cwd: home(), timeoutMs: 60_000 }),
      runHangar(['actions', 'confirm', action!.id], { env, cwd: home(), timeoutMs: 60_000 }),
    ])
    const outputs = [one.stderr, two.stderr]
    expect(outputs.filter((text) => text.includes('is now applied'))).toHaveLength(1)
    expect(outputs.filter((text) => text.includes('was already applied'))).toHaveLength(1)
    const store = await openStore({ dataDir })
    try {
      const owner = (await store.users.findOwner())!
      const runs = await store.forUser(owner.id).runs.list()
      expect(runs.filter((candidate) => candidate.continues === action!.runId)).toHaveLength(1)
      const audit = await store.forUser(owner.id).audit.list({ action: 'action.apply', limit: 1000 })
      expect(audit.filter((event) => event.targetId === action!.id)).toHaveLength(1)
    } finally {
      await store.close()
    }
  })

  it('supersedes open proposals when the user sends a new message', async () => {
    const cwd = await project()
    const first = await runHangar(['run', '--agent', 'builtin', '--json', 'FILE=old.txt'], {
      env,
      cwd,
      timeoutMs: 60_000,
    })
    expect(first.code).toBe(3)
    const runId = (JSON.parse(first.stdout.split('\n')[0]!) as { runId: string }).runId
    const [action] = await pending()
    const second = await runHangar(['run', '--resume', runId, 'Never mind, just say hi. NOTOOL'], {
      env,
      cwd: home(),
      timeoutMs: 60_000,
    })
    expect(second.code, second.stderr).toBe(0)
    const all = JSON.parse(
      (await runHangar(['actions', 'list', '--all', '--json'], { env, cwd: home() })).stdout,
    ) as ActionJson[]
    expect(all.find((candidate) => candidate.id === action!.id)?.status).toBe('superseded')
    expect(existsSync(path.join(cwd, 'old.txt'))).toBe(false)
  })

  it('works with only a local OpenAI-compatible endpoint and no key', async () => {
    const cwd = await project()
    const localEnv = {
      ...env,
      ANTHROPIC_API_KEY: undefined,
      ANTHROPIC_BASE_URL: undefined,
      OPENAI_BASE_URL: `${mock.url}/v1`,
    }
    const run = await runHangar(
      ['run', '--agent', 'builtin', '--model', 'llama3.2', '--yes', 'FILE=local.txt'],
      {
        env: localEnv,
        cwd,
        timeoutMs: 60_000,
      },
    )
    expect(run.code, run.stderr).toBe(0)
    expect(await readFile(path.join(cwd, 'local.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
    const request = mock.requests.filter((candidate) => candidate.family === 'openai-chat').at(-1)!
    expect(request.headers.authorization).toBeUndefined()
    expect(JSON.stringify(request.body)).toContain('llama3.2')
  })

  it('says clearly when no model provider is configured', async () => {
    const cwd = await project()
    const bare = { ...env, ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: undefined }
    const run = await runHangar(['run', '--agent', 'builtin', 'hi'], { env: bare, cwd })
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/no model provider.*ANTHROPIC_API_KEY/)
  })

  it('continues a conversation after its process was killed in the middle of a run', async () => {
    const cwd = await project()
    const child = spawn(process.execPath, [HANGAR_BIN, 'run', '--agent', 'builtin', '--json', 'HANG'], {
      env,
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    const exited = new Promise<void>((resolve) => child.on('close', () => resolve()))
    const requestsBefore = mock.requests.length
    while (mock.requests.length === requestsBefore || !stdout.includes('run-start')) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    child.kill('SIGKILL')
    await exited
    const runId = (JSON.parse(stdout.split('\n')[0]!) as { runId: string }).runId

    const resumed = await runHangar(['run', '--resume', runId, 'Start over and just answer. NOTOOL'], {
      env,
      cwd: home(),
      timeoutMs: 60_000,
    })
    expect(resumed.code, resumed.stderr).toBe(0)
    const store = await openStore({ dataDir })
    try {
      const owner = (await store.users.findOwner())!
      expect((await store.forUser(owner.id).runs.get(runId))?.status).toBe('interrupted')
    } finally {
      await store.close()
    }
  })

  it('cancels on Ctrl-C while the model is answering', async () => {
    const cwd = await project()
    const child = spawn(process.execPath, [HANGAR_BIN, 'run', '--agent', 'builtin', 'HANG'], {
      env,
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
    const requestsBefore = mock.requests.length
    while (mock.requests.length === requestsBefore) await new Promise((resolve) => setTimeout(resolve, 50))
    child.kill('SIGINT')
    expect(await exited).toBe(130)
  })
})
