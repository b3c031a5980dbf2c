// Issue 18 item 10, "the transcript shows what happened", with real CLIs on the mock model: an edit made
// through the agent's shell tool shows up as a file-change (synthesised from the workspace's diff at run
// end, a file that was already dirty before the run is not claimed), and the CLI's stderr lines are
// `raw {stream: "stderr"}` events that do not raise the stdout-only `output_unrecognized` warning.
import { execFileSync } from 'node:child_process'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { cleanEnv, runHangar } from '../helpers/hangar-cli.js'
import {
  loopbackOnlyEnv,
  privateScratchRoot,
  realCliPath,
  startRefusingProxy,
  TEST_API_KEY,
} from '../helpers/real-cli-cases.js'
import { node24Binary } from '../helpers/test-clis.js'

interface Envelope {
  type: string
  [field: string]: unknown
}

const envelopesOf = (stdout: string): Envelope[] =>
  stdout
    .trim()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Envelope)

describe('the transcript of a real CLI run', () => {
  let mock: MockModelServer
  let proxy: Awaited<ReturnType<typeof startRefusingProxy>>
  let root: string
  let env: NodeJS.ProcessEnv

  beforeAll(async () => {
    mock = await startMockModelServer()
    proxy = await startRefusingProxy()
    root = await privateScratchRoot('run-transcript')
    await mkdir(path.join(root, 'home'), { recursive: true })
    env = cleanEnv({
      PATH: realCliPath(),
      HOME: path.join(root, 'home'),
      HANGAR_DATA_DIR: path.join(root, 'data'),
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
    const git = (...args: string[]) => execFileSync('git', args, { cwd: directory })
    git('init', '-q')
    await writeFile(path.join(directory, 'tracked.txt'), 'committed\n')
    git('add', '.')
    git('-c', 'user.name=t', '-c', 'user.email=t@example.invalid', 'commit', '-qm', 'base')
    return directory
  }

  it('reports a file the agent wrote through its shell tool, and not a file that was dirty before', async () => {
    const cwd = await project()
    // Dirty before the run: a modified tracked file and an untracked one.
    await writeFile(path.join(cwd, 'tracked.txt'), 'edited by the user\n')
    await writeFile(path.join(cwd, 'notes.txt'), 'the user’s scratch\n')
    const result = await runHangar(
      [
        'run',
        '--agent',
        'claude-code',
        '--json',
        'Use the shell. TOOL=Bash FILE=by-shell.txt CONTENT=shelled',
      ],
      { env, cwd, timeoutMs: 120_000 },
    )
    expect(result.code, result.stderr).toBe(0)
    expect(await readFile(path.join(cwd, 'by-shell.txt'), 'utf8')).toBe('shelled\n')
    const events = envelopesOf(result.stdout)
    // The model really asked for the shell tool (not a file tool the parser would report anyway).
    expect(events.find((event) => event.type === 'tool-call')).toMatchObject({ name: 'Bash' })
    const changes = events.filter((event) => event.type === 'file-change')
    expect(changes).toEqual([
      expect.objectContaining({ type: 'file-change', path: 'by-shell.txt', kind: 'create' }),
    ])
    expect(String(changes[0]!.diff)).toContain('+shelled')
    // Synthesised before the run ended.
    expect(events.findIndex((event) => event.type === 'file-change')).toBeLessThan(
      events.findIndex((event) => event.type === 'run-end'),
    )
  }, 240_000)

  it('turns the CLI’s stderr lines into raw stderr events, without the unrecognised-output warning', async () => {
    const cwd = await project()
    // A flag Claude Code does not know: it says so on stderr (echoing the flag) and exits. The flag holds
    // a key-shaped value, which must not reach the event log.
    const secret = 'sk-ant-stderr0123456789abcdefXYZ'
    await writeFile(
      path.join(cwd, 'hangar.yaml'),
      `agents:\n  noisy:\n    adapter: claude-code\n    cliArgs: ["--no-such-flag-for-hangar=${secret}"]\n`,
    )
    const result = await runHangar(['run', '--agent', 'noisy', '--json', 'hello NOTOOL'], {
      env,
      cwd,
      timeoutMs: 120_000,
    })
    expect(result.code).toBe(1)
    const events = envelopesOf(result.stdout)
    const stderr = events.filter((event) => event.type === 'raw' && event.stream === 'stderr')
    expect(stderr.map((event) => event.value).join('\n')).toMatch(/--no-such-flag-for-hangar/)
    expect(events.some((event) => event.type === 'error' && event.code === 'output_unrecognized')).toBe(false)
    expect(result.stdout).not.toContain(secret)
  }, 240_000)
})
