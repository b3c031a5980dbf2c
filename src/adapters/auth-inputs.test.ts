// Issue 20 item 3: the detection cache is keyed on what decides sign-in — the variables and credential
// files each probe reads — by hash, never by value.
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { authFingerprint, type AuthInputs, recordingProbeInput } from './auth-inputs.js'
import { claudeCodeAdapter } from './defs/claude-code.js'

const SECRET = 'sk-ant-api03-fingerprint-secret-value'

describe('authFingerprint', () => {
  it('changes when a variable is set, changed or removed, and never contains the value', async () => {
    const inputs: AuthInputs = { variables: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'], files: [] }
    const unset = await authFingerprint(inputs, {})
    const set = await authFingerprint(inputs, { ANTHROPIC_API_KEY: SECRET })
    const other = await authFingerprint(inputs, { ANTHROPIC_API_KEY: `${SECRET}-2` })
    expect(new Set([unset, set, other]).size).toBe(3)
    expect(await authFingerprint(inputs, { ANTHROPIC_API_KEY: SECRET })).toBe(set)
    expect(await authFingerprint(inputs, {})).toBe(unset)
    // A variable the probe never read does not count.
    expect(await authFingerprint(inputs, { UNRELATED: 'x' })).toBe(unset)
    expect(set).toMatch(/^[0-9a-f]{64}$/)
    expect(set).not.toContain(SECRET)
  })

  it('changes when a credential file appears, is touched or is removed', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'hangar-auth-inputs-'))
    const file = path.join(directory, '.credentials.json')
    const inputs: AuthInputs = { variables: [], files: [file] }
    const absent = await authFingerprint(inputs, {})
    await writeFile(file, '{}')
    await utimes(file, new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T00:00:00Z'))
    const present = await authFingerprint(inputs, {})
    expect(present).not.toBe(absent)
    await utimes(file, new Date('2026-01-02T00:00:00Z'), new Date('2026-01-02T00:00:00Z'))
    const touched = await authFingerprint(inputs, {})
    expect(touched).not.toBe(present)
    await rm(file)
    expect(await authFingerprint(inputs, {})).toBe(absent)
  })
})

describe('recordingProbeInput', () => {
  it('records the variables and files Claude Code’s sign-in probe reads', async () => {
    const inputs: AuthInputs = { variables: [], files: [] }
    const home = '/home/someone'
    const state = await claudeCodeAdapter.probeAuth(
      recordingProbeInput(
        { env: {}, home, exists: async () => false, readJson: async () => undefined, now: new Date() },
        inputs,
      ),
    )
    expect(state.state).toBe('missing')
    expect(inputs.variables).toEqual(
      expect.arrayContaining([
        'ANTHROPIC_API_KEY',
        'ANTHROPIC_AUTH_TOKEN',
        'CLAUDE_CODE_OAUTH_TOKEN',
        'CLAUDE_CONFIG_DIR',
      ]),
    )
    expect(inputs.files).toEqual(
      expect.arrayContaining([
        path.join(home, '.claude', '.credentials.json'),
        path.join(home, '.claude.json'),
      ]),
    )
  })
})
