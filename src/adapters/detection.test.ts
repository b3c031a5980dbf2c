import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { describeDetection, detectAll, loadDetection } from './detection.js'
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
      permissionMode: true,
      contextWindowHint: null,
    },
    skills: { kind: 'prompt' },
    endpointFamilies: ['anthropic'],
    verified: id !== 'cursor-agent',
    probeAuth: async () => auth,
    buildLaunch: () => ({ command: binary, args: [], env: {}, stdin: null, files: [] }),
    createParser: () => ({ line: () => [], finish: () => ({ events: [], outcome: { completed: true } }) }),
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

  it('probes --version in a throwaway HOME, not the user’s', async () => {
    const { home, env } = await setup()
    const [detected] = await detectAll([fakeAdapter('claude-code', 'good')], { env, home })
    expect(detected?.problem).toBeNull()
    expect(detected?.version).toBe('1.2.3')
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
