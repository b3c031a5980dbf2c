import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { cursorAgentAdapter } from './defs/cursor-agent.js'
import { loadDetection } from './detection-cache.js'
import { describeDetection, detectAll } from './detection.js'
import { createAdapterRegistry } from './registry.js'
import type { AdapterDef, AuthState } from './types.js'

function fakeAdapter(id: AdapterDef['id'], binary: string, auth: AuthState = { state: 'ok' }): AdapterDef {
  return {
    specificationVersion: 'adapter-v1',
    id,
    displayName: id,
    binaries: [binary],
    configDir: `.${binary}`,
    versionArgs: ['--version'],
    parseVersion: (output) => /(\d+\.\d+\.\d+)/.exec(output)?.[1] ?? null,
    capabilities: {
      streaming: true,
      resume: true,
      surgicalEdit: true,
      nativeSkillLoading: false,
      permissionMode: 'strict',
      contextWindowHint: null,
    },
    skills: { kind: 'prompt' },
    endpointFamilies: ['anthropic'],
    verified: id !== 'cursor-agent',
    testedVersions: '~1.2.0',
    probeAuth: async () => auth,
    buildLaunch: () => ({ command: binary, args: [], env: {}, stdin: null, files: [] }),
    createParser: () => ({
      line: () => [],
      sessionId: () => undefined,
      finish: () => ({ events: [], outcome: { completed: true } }),
    }),
  }
}

async function fakeBin(directory: string, name: string, script: string): Promise<void> {
  const file = path.join(directory, name)
  await writeFile(file, `#!/bin/sh\n${script}\n`)
  await chmod(file, 0o755)
}

async function setup() {
  const root = await mkdtemp(path.join(os.tmpdir(), 'hangar-detect-'))
  const bin = path.join(root, 'bin')
  const home = path.join(root, 'home')
  await mkdir(bin)
  await mkdir(path.join(home, '.good'), { recursive: true })
  // Fails when probed with the user's real HOME: probes must run in a throwaway one.
  await fakeBin(bin, 'good', '[ "$HOME" = "$REAL_HOME" ] && exit 9; echo "good 1.2.3 (build 7)"')
  await fakeBin(bin, 'broken', 'echo "segfault" >&2; exit 3')
  await fakeBin(bin, 'hanging', '/bin/sleep 30')
  // Slower than the timeout on the first, crowded pass; answers when asked again alone, with more time.
  await fakeBin(bin, 'slow', '/bin/sleep 2; echo "slow 4.5.6"')
  return { root, bin, home, env: { PATH: bin, REAL_HOME: home } }
}

describe('detection', () => {
  it('reports installed, broken, hanging and missing CLIs without one blocking the others', async () => {
    const { home, env } = await setup()
    const adapters = [
      fakeAdapter('claude-code', 'good'),
      fakeAdapter('codex', 'broken'),
      fakeAdapter('gemini', 'hanging'),
      fakeAdapter('cursor-agent', 'absent'),
      fakeAdapter('opencode', 'slow'),
    ]
    const detected = await detectAll(adapters, { env, home, versionTimeoutMs: 1500 })
    expect(detected.map((adapter) => [adapter.id, adapter.installed, adapter.version])).toEqual([
      ['claude-code', true, '1.2.3'],
      ['codex', true, null],
      ['gemini', true, null],
      ['cursor-agent', false, null],
      ['opencode', true, '4.5.6'],
    ])
    expect(detected[4]?.problem).toBeNull()
    expect(detected[0]).toMatchObject({ configDirFound: true, problem: null, auth: { state: 'ok' } })
    expect(detected[1]?.problem).toContain('exited with 3')
    // Given a second chance of 4 × 1.5 s alone, and still silent.
    expect(detected[2]?.problem).toBe('--version did not answer within 6 s')
    expect(describeDetection(detected[0]!)).toBe('✓ claude-code 1.2.3 (auth: ok)')
    expect(describeDetection(detected[3]!)).toBe(
      '✗ cursor-agent (not installed, unverified against the real CLI)',
    )
  })

  it('says how to sign in when the CLI is installed but not authenticated', async () => {
    const { home, env } = await setup()
    const [detected] = await detectAll(
      [fakeAdapter('gemini', 'good', { state: 'missing', hint: 'run gemini and sign in' })],
      { env, home },
    )
    expect(describeDetection(detected!)).toBe(
      '✗ gemini 1.2.3 (installed, not authenticated: run gemini and sign in)',
    )
  })

  it('caches results in the data dir for 24 hours, and detects again on refresh or a new PATH', async () => {
    const { root, bin, home, env } = await setup()
    const dataDir = path.join(root, 'data')
    await mkdir(dataDir)
    const adapters = [fakeAdapter('claude-code', 'good')]
    const now = new Date('2026-06-01T00:00:00Z')
    const first = await loadDetection(adapters, { env, home, dataDir, now })
    expect(first.fromCache).toBe(false)
    await fakeBin(bin, 'good', 'echo "good 9.9.9"')
    const cached = await loadDetection(adapters, {
      env,
      home,
      dataDir,
      now: new Date(now.getTime() + 3600_000),
    })
    expect(cached).toMatchObject({ fromCache: true })
    expect(cached.adapters[0]?.version).toBe('1.2.3')
    const stale = await loadDetection(adapters, {
      env,
      home,
      dataDir,
      now: new Date(now.getTime() + 25 * 3600_000),
    })
    expect(stale.adapters[0]?.version).toBe('9.9.9')
    const refreshed = await loadDetection(adapters, { env, home, dataDir, now, refresh: true })
    expect(refreshed.fromCache).toBe(false)
    const otherPath = await loadDetection(adapters, { env: { PATH: '/nonexistent' }, home, dataDir, now })
    expect(otherPath.adapters[0]?.installed).toBe(false)
  })

  it('detects again when a variable or file the sign-in probe read changes, without --refresh', async () => {
    const { root, home, env } = await setup()
    const dataDir = path.join(root, 'data')
    await mkdir(dataDir)
    const credentials = path.join(home, '.good', 'token.json')
    const adapter: AdapterDef = {
      ...fakeAdapter('claude-code', 'good'),
      probeAuth: async (input) =>
        input.env.GOOD_API_KEY || (await input.exists(credentials))
          ? { state: 'ok' }
          : { state: 'missing', hint: 'set GOOD_API_KEY' },
    }
    const load = (environment: Record<string, string>) =>
      loadDetection([adapter], { env: environment, home, dataDir })
    expect((await load(env)).adapters[0]?.auth.state).toBe('missing')
    expect(await load(env)).toMatchObject({ fromCache: true })
    const withKey = await load({ ...env, GOOD_API_KEY: 'sk-good-secret-value' })
    expect(withKey).toMatchObject({ fromCache: false, adapters: [{ auth: { state: 'ok' } }] })
    expect(await load({ ...env, GOOD_API_KEY: 'sk-good-secret-value' })).toMatchObject({ fromCache: true })
    // The cache holds the variable's name, never its value.
    expect(await readFile(path.join(dataDir, 'agents.json'), 'utf8')).not.toContain('sk-good-secret-value')
    expect((await load(env)).adapters[0]?.auth.state).toBe('missing')
    await writeFile(credentials, '{}')
    expect(await load(env)).toMatchObject({ fromCache: false, adapters: [{ auth: { state: 'ok' } }] })
    await rm(credentials)
    expect(await load(env)).toMatchObject({ fromCache: false, adapters: [{ auth: { state: 'missing' } }] })
  })

  it('detects again only the adapter whose sign-in inputs changed; the others stay cached', async () => {
    const { root, bin, home, env } = await setup()
    const dataDir = path.join(root, 'data')
    await mkdir(dataDir)
    await fakeBin(bin, 'other', 'echo "other 1.0.0"')
    const keyed = (id: AdapterDef['id'], binary: string, variable: string): AdapterDef => ({
      ...fakeAdapter(id, binary),
      probeAuth: async (input) => (input.env[variable] ? { state: 'ok' } : { state: 'missing' }),
    })
    const adapters = [keyed('claude-code', 'good', 'GOOD_API_KEY'), keyed('codex', 'other', 'OTHER_API_KEY')]
    await loadDetection(adapters, { env, home, dataDir })
    // Both CLIs are upgraded; only Claude Code's key is set.
    await fakeBin(bin, 'good', 'echo "good 2.0.0"')
    await fakeBin(bin, 'other', 'echo "other 2.0.0"')
    const after = await loadDetection(adapters, { env: { ...env, GOOD_API_KEY: 'k' }, home, dataDir })
    expect(after.fromCache).toBe(false)
    expect(after.adapters.map((adapter) => [adapter.id, adapter.version, adapter.auth.state])).toEqual([
      ['claude-code', '2.0.0', 'ok'],
      ['codex', '1.0.0', 'missing'],
    ])
    expect(
      await loadDetection(adapters, { env: { ...env, GOOD_API_KEY: 'k' }, home, dataDir }),
    ).toMatchObject({
      fromCache: true,
    })
  })

  it('probes each CLI once when several callers find no cache at the same time', async () => {
    const { root, bin, home, env } = await setup()
    const dataDir = path.join(root, 'data')
    await mkdir(dataDir)
    const probes = path.join(root, 'probes')
    await fakeBin(bin, 'counted', `echo probed >> "${probes}"; echo "counted 1.0.0"`)
    const adapters = [fakeAdapter('claude-code', 'counted')]
    const results = await Promise.all(
      Array.from({ length: 5 }, () => loadDetection(adapters, { env, home, dataDir })),
    )
    expect(results.map((result) => result.adapters[0]?.version)).toEqual(Array(5).fill('1.0.0'))
    expect((await readFile(probes, 'utf8')).trim().split('\n')).toEqual(['probed'])
    // A refresh probes again, whatever is cached or under way.
    await loadDetection(adapters, { env, home, dataDir, refresh: true })
    expect((await readFile(probes, 'utf8')).trim().split('\n')).toHaveLength(2)
  })

  it('probes --version in a throwaway HOME, not the user’s', async () => {
    const { home, env } = await setup()
    const [detected] = await detectAll([fakeAdapter('claude-code', 'good')], { env, home })
    expect(detected?.problem).toBeNull()
    expect(detected?.version).toBe('1.2.3')
  })
})

// Issue 18 item 9: a CLI installed where the daemon's PATH does not look (nvm, a service manager) was
// "not installed" with no way out, although its config dir was there; a version nobody tested ran silently.
describe('detection beyond PATH', () => {
  const fakeCursor = fileURLToPath(new URL('../../test/fixtures/bin/cursor-agent', import.meta.url))
  // The fake's wrapper needs `node`; the fake itself is on no directory of this PATH.
  const nodeOnly = { PATH: path.dirname(process.execPath) }

  it('finds a CLI only through adapters.<id>.path, and spawns that exact file', async () => {
    const { home } = await setup()
    const [detected] = await detectAll([cursorAgentAdapter], {
      env: nodeOnly,
      home,
      paths: { 'cursor-agent': { path: fakeCursor } },
    })
    expect(detected).toMatchObject({
      installed: true,
      path: fakeCursor,
      executable: { path: fakeCursor },
      version: '2026.09.01-fake0001',
      problem: null,
      versionWarning: null,
    })
    const [unconfigured] = await detectAll([cursorAgentAdapter], { env: nodeOnly, home })
    expect(unconfigured?.installed).toBe(false)
  })

  it('says a configured path that does not exist or cannot run, without failing detection', async () => {
    const { root, home } = await setup()
    const missing = path.join(root, 'nowhere', 'cursor-agent')
    const notExecutable = path.join(root, 'plain-file')
    await writeFile(notExecutable, 'not a program\n')
    const [gone, plain] = await Promise.all([
      detectAll([cursorAgentAdapter], { env: nodeOnly, home, paths: { 'cursor-agent': { path: missing } } }),
      detectAll([cursorAgentAdapter], {
        env: nodeOnly,
        home,
        paths: { 'cursor-agent': { path: notExecutable } },
      }),
    ])
    expect(gone[0]).toMatchObject({ installed: false, executable: null })
    expect(gone[0]?.problem).toBe(
      `adapters.cursor-agent.path: ${missing} (hangar.yaml) does not exist; fix the path, or remove it to search the daemon's PATH`,
    )
    expect(plain[0]?.problem).toBe(
      `adapters.cursor-agent.path: ${notExecutable} (hangar.yaml) is not an executable file`,
    )
    expect(describeDetection(gone[0]!)).toContain(
      '✗ cursor-agent (not installed: adapters.cursor-agent.path: ',
    )
  })

  it('names the config dir and the fix when the CLI is set up but not on the PATH', async () => {
    const { home, env } = await setup()
    await mkdir(path.join(home, '.absent'))
    const [detected] = await detectAll([fakeAdapter('claude-code', 'absent')], { env, home })
    expect(detected).toMatchObject({ installed: false, configDirFound: true })
    expect(describeDetection(detected!)).toBe(
      "✗ claude-code (not installed: config dir ~/.absent found but `absent` is not on the daemon's PATH; " +
        "add its directory to the daemon's PATH, or set adapters.claude-code.path: /full/path/to/absent in hangar.yaml)",
    )
  })

  it('warns about a version outside the tested range, also from the cache', async () => {
    const { root, home, env, bin } = await setup()
    await fakeBin(bin, 'newer', 'echo "newer 1.3.0"')
    const dataDir = path.join(root, 'data')
    await mkdir(dataDir)
    const adapters = [fakeAdapter('claude-code', 'good'), fakeAdapter('codex', 'newer')]
    const fresh = await loadDetection(adapters, { env, home, dataDir })
    expect(fresh.adapters.map((adapter) => adapter.versionWarning)).toEqual([
      null,
      'codex 1.3.0 is outside the versions Hangar was tested with (~1.2.0)',
    ])
    expect(describeDetection(fresh.adapters[1]!)).toBe(
      '✓ codex 1.3.0 (auth: ok; warning: untested version; tested with ~1.2.0)',
    )
    // A release that widened the range: the cached detection is judged against it.
    const widened = adapters.map((adapter) => ({ ...adapter, testedVersions: '^1.2.0' }))
    const cached = await loadDetection(widened, { env, home, dataDir })
    expect(cached.fromCache).toBe(true)
    expect(cached.adapters[1]).toMatchObject({ testedVersions: '^1.2.0', versionWarning: null })
  })
})

describe('registry', () => {
  it('rejects a duplicate adapter id and explains unknown ones', () => {
    expect(() => createAdapterRegistry([fakeAdapter('codex', 'a'), fakeAdapter('codex', 'b')])).toThrow(
      /twice/,
    )
    const registry = createAdapterRegistry([fakeAdapter('codex', 'a')])
    expect(registry.get('codex')?.id).toBe('codex')
    expect(() => registry.require('nope')).toThrow(/unknown agent "nope"/)
  })
})
