// Issue 20 item 3: the detection cache ignored what decides sign-in. After setting ANTHROPIC_API_KEY as the
// hint says, `hangar agents` still said "not authenticated" (and `hangar run` silently took the built-in
// agent); after removing it, `hangar up` still said "auth: ok". The cache is now keyed on the variables each
// sign-in probe reads (by hash) and its credential files' mtimes, and `hangar up` / `hangar run` say when
// their answer is cached. The built-in agent is listed, "needs a provider" until it has one, and a run
// naming no agent never picks one that cannot run. Runs the built binary with the real Claude Code CLI.
import { execFileSync } from 'node:child_process'
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanEnv, type RunningDaemon, runHangar, startDaemon, waitForOutput } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'
import { testCliBin } from '../helpers/test-clis.js'

const KEY = 'sk-ant-api03-auth-cache-e2e-secret-0001'
const NOT_SIGNED_IN =
  /^✗ claude-code 2\.1\.\d+ \(installed, not authenticated: run `claude` and sign in, or set ANTHROPIC_API_KEY\)$/m
const SIGNED_IN = /^✓ claude-code 2\.1\.\d+ \(auth: ok/m

describe('agent detection follows sign-in (issue 20 item 3)', () => {
  let root: string
  let project: string
  let dataDir: string
  let environment: (key?: string) => NodeJS.ProcessEnv
  const daemons: RunningDaemon[] = []

  beforeAll(async () => {
    root = await makeTempDir('hangar-auth-cache-')
    project = path.join(root, 'project')
    dataDir = path.join(root, 'data')
    const home = path.join(root, 'home')
    const bin = path.join(root, 'bin')
    await mkdir(project)
    await mkdir(home)
    await mkdir(bin)
    execFileSync('git', ['init', '-q'], { cwd: project })
    await writeFile(path.join(project, 'README.md'), 'auth cache\n')
    // Claude Code alone on the PATH (beside node): every other CLI is "not installed".
    await symlink(testCliBin('claude'), path.join(bin, 'claude'))
    environment = (key) =>
      cleanEnv({
        PATH: [bin, path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
        HOME: home,
        ANTHROPIC_API_KEY: key,
        ANTHROPIC_AUTH_TOKEN: undefined,
        ANTHROPIC_BASE_URL: undefined,
        CLAUDE_CODE_OAUTH_TOKEN: undefined,
        CLAUDE_CONFIG_DIR: undefined,
        OPENAI_API_KEY: undefined,
        OPENAI_BASE_URL: undefined,
        OPENROUTER_API_KEY: undefined,
      })
  })
  afterAll(async () => {
    for (const daemon of daemons) await daemon.stop()
    if (root) await rm(root, { recursive: true, force: true })
  })

  const agents = (key?: string) =>
    runHangar(['agents', '--data-dir', dataDir], { env: environment(key), cwd: project, timeoutMs: 90_000 })

  it('flips Claude Code to authenticated when ANTHROPIC_API_KEY is set, and back when removed, without --refresh', async () => {
    const first = await agents()
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toMatch(NOT_SIGNED_IN)
    expect(first.stderr).toContain('(detected just now)')
    // The built-in agent is listed, and not "ready" without a provider: it says how to give it one.
    expect(first.stdout).toMatch(
      /^✗ builtin \(needs a provider: store a provider key in Settings → Providers/m,
    )
    expect(first.stdout).toContain("in the daemon's environment")

    const again = await agents()
    expect(again.stdout).toMatch(NOT_SIGNED_IN)
    expect(again.stderr).toMatch(
      /^\(cached \d{4}-\d\d-\d\dT[^;]+; hangar agents --refresh to detect again\)$/m,
    )

    const withKey = await agents(KEY)
    expect(withKey.code, withKey.stderr).toBe(0)
    expect(withKey.stdout).toMatch(SIGNED_IN)
    expect(withKey.stdout).toMatch(
      /^✓ builtin \(provider: anthropic, ANTHROPIC_API_KEY in the daemon's environment\)$/m,
    )
    expect(withKey.stderr).toContain('(detected just now)')
    // The cache keeps the variable's name and a hash, never the key.
    expect(await readFile(path.join(dataDir, 'agents.json'), 'utf8')).not.toContain(KEY)

    const withoutKey = await agents()
    expect(withoutKey.stdout).toMatch(NOT_SIGNED_IN)
    expect(withoutKey.stderr).toContain('(detected just now)')
  })

  it('hangar up says when its answer is cached, and does not keep "auth: ok" after the key is gone', async () => {
    await agents(KEY)
    const signedIn = await startDaemon(['--data-dir', dataDir], {
      env: environment(KEY),
      cwd: project,
      timeoutMs: 90_000,
    })
    daemons.push(signedIn)
    const out = await waitForOutput(signedIn.stdout, 'hangar agents --refresh to detect again)', 90_000)
    expect(out).toMatch(SIGNED_IN)
    expect(out).toMatch(/^\(cached \d{4}-/m)
    await signedIn.stop()

    const signedOut = await startDaemon(['--data-dir', dataDir], {
      env: environment(),
      cwd: project,
      timeoutMs: 90_000,
    })
    daemons.push(signedOut)
    const after = await waitForOutput(signedOut.stdout, '(detected just now)', 90_000)
    expect(after).toMatch(NOT_SIGNED_IN)
    expect(after).not.toMatch(SIGNED_IN)
    expect(after).toMatch(/^✗ builtin \(needs a provider: /m)
    await signedOut.stop()
  })

  it('hangar run says its agents are cached, lists builtin among valid names, and never defaults to an agent that cannot run', async () => {
    await agents()
    const unknown = await runHangar(['run', '--data-dir', dataDir, '--agent', 'nosuch', 'hi'], {
      env: environment(),
      cwd: project,
      timeoutMs: 90_000,
    })
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(
      /^agents \(cached \d{4}-[^;]+; hangar agents --refresh to detect again\)$/m,
    )
    expect(unknown.stderr).toMatch(/unknown agent "nosuch".*an adapter id: claude-code, .*builtin/)

    // Claude Code is not signed in and the built-in agent has no provider: nothing is picked silently.
    const nothing = await runHangar(['run', '--data-dir', dataDir, 'hi'], {
      env: environment(),
      cwd: project,
      timeoutMs: 90_000,
    })
    expect(nothing.code).not.toBe(0)
    expect(nothing.stderr).toContain('no agent can run here')
    expect(nothing.stderr).toContain('Settings → Providers')
    expect(nothing.stderr).not.toMatch(/\n\s+at /)
  })
})
