// What a person sees from the CLI and the foreground daemon: one error prefix (Commander's `error:` and
// Hangar's `hangar: error:` both appeared), hints that never nest parentheses, `hangar feeds nope` and
// `hangar env nope` exiting alike (they gave 1 and 2), exit codes in `hangar run --help`, and a daemon
// that printed a JSON line for every HTTP request and nothing when it stopped.
import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { cleanEnv, runHangar, startDaemon, waitForOutput } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

/** Every line that reports an error starts with the one prefix; none nests parentheses. */
function expectHangarError(stderr: string, pattern: RegExp): void {
  const lines = stderr.trim().split('\n')
  expect(lines, stderr).toHaveLength(1)
  expect(lines[0]).toMatch(/^hangar: error: /)
  expect(lines[0]).toMatch(pattern)
  expect(lines[0]).not.toMatch(/\([^)]*\(/)
}

async function project(): Promise<{ dir: string; dataDir: string }> {
  const dir = await makeTempDir()
  await writeFile(path.join(dir, 'hangar.yaml'), 'agents:\n  reviewer:\n    adapter: claude-code\n')
  return { dir, dataDir: await makeTempDir() }
}

describe('cli messages', () => {
  it("says Commander's usage errors with Hangar's prefix, exit 2", async () => {
    const unknown = await runHangar(['frobnicate'])
    expect(unknown.code).toBe(2)
    expectHangarError(unknown.stderr, /unknown command 'frobnicate'; see hangar --help$/)
    const typo = await runHangar(['runs', 'lis'])
    expect(typo.code).toBe(2)
    expectHangarError(typo.stderr, /did you mean list\? See hangar runs --help$/)
    const flag = await runHangar(['runs', 'list', '--bogus'])
    expect(flag.code).toBe(2)
    expectHangarError(flag.stderr, /unknown option '--bogus'; see hangar runs list --help$/)
  })

  it('gives a hint after a semicolon, never in nested parentheses', async () => {
    const dir = await makeTempDir()
    const inside = path.join(dir, 'data')
    await mkdir(path.join(dir, '.git'))
    await writeFile(path.join(dir, '.git', 'HEAD'), 'ref: refs/heads/main\n')
    const result = await runHangar(['runs', 'list', '--data-dir', inside], { cwd: dir })
    expect(result.code).toBe(2)
    expectHangarError(result.stderr, /inside the project .*; keep the data dir outside the project/)
  })

  it('refuses an unknown profile in hangar feeds and hangar env alike, with or without a daemon', async () => {
    const { dir, dataDir } = await project()
    const env = cleanEnv({ HANGAR_DATA_DIR: dataDir })
    const expected = /unknown agent profile "nope"; use one of reviewer, or an adapter id$/
    for (const command of ['feeds', 'env']) {
      const result = await runHangar([command, 'nope'], { env, cwd: dir })
      expect(result.code, `${command}: ${result.stderr}`).toBe(2)
      expectHangarError(result.stderr, expected)
    }
    const daemon = await startDaemon([], { env, cwd: dir })
    try {
      for (const command of ['feeds', 'env']) {
        const result = await runHangar([command, 'nope'], { env, cwd: dir })
        expect(result.code, `${command} with a daemon: ${result.stderr}`).toBe(2)
        expectHangarError(result.stderr, expected)
      }
    } finally {
      await daemon.stop()
    }
  }, 60_000)

  it('lists the exit codes in hangar run --help and says what --isolate does outside git', async () => {
    const help = await runHangar(['run', '--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/^Exit codes:$/m)
    for (const code of [0, 1, 2, 3, 130]) expect(help.stdout).toMatch(new RegExp(`^ {2}${code} +\\S`, 'm'))
    expect(help.stdout.replace(/\s+/g, ' ')).toMatch(/outside git a full copy of the directory/)
  })

  it('keeps request logs at debug, is readable when asked, and says when it stopped', async () => {
    const { dir, dataDir } = await project()
    const quiet = await startDaemon([], { env: cleanEnv({ HANGAR_DATA_DIR: dataDir }), cwd: dir })
    await fetch(`${quiet.url}/api/health`)
    await fetch(`${quiet.url}/api/nothing-here`)
    // Right after it is ready, while it may still be detecting agents: a clean stop all the same (it used
    // to exit 130 and leave daemon.json behind until detection had finished).
    expect(await quiet.stop('SIGINT')).toBe(0)
    expect(existsSync(path.join(dataDir, 'daemon.json'))).toBe(false)
    expect(quiet.stdout()).toMatch(/^Stopping \(SIGINT\)/m)
    expect(quiet.stdout()).toMatch(/^✓ stopped$/m)
    expect(quiet.stderr()).not.toMatch(/"msg":"request"/)

    const verbose = await startDaemon([], {
      env: cleanEnv({ HANGAR_DATA_DIR: dataDir, HANGAR_LOG_LEVEL: 'debug', HANGAR_LOG_FORMAT: 'pretty' }),
      cwd: dir,
    })
    await fetch(`${verbose.url}/api/health`)
    await waitForOutput(verbose.stderr, 'path=/api/health', 20_000)
    expect(verbose.stderr()).toMatch(
      /^\d\d:\d\d:\d\d DEBUG \[http\] request requestId=\S+ method=GET path=\/api\/health status=200 ms=/m,
    )
    expect(verbose.stderr()).not.toMatch(/^\{/m)
    expect(await verbose.stop('SIGTERM')).toBe(0)
    expect(verbose.stdout()).toMatch(/^✓ stopped$/m)
  }, 90_000)
})
