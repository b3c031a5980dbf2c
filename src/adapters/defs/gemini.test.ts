import { describe, expect, it } from 'vitest'
import {
  authProbeInput,
  endpoint,
  expectPlanInvariants,
  launchInput,
  TEST_API_KEY,
} from '../../../test/helpers/launch-input.js'
import { GEMINI_SETTINGS_FILE, geminiAdapter } from './gemini.js'

function settingsOf(content: string): Record<string, unknown> {
  return JSON.parse(content) as Record<string, unknown>
}

describe('geminiAdapter', () => {
  it('runs headless on stdin with stream-json, trusted folder and auto_edit, in one process', () => {
    const input = launchInput()
    const plan = geminiAdapter.buildLaunch(input)
    expect(plan.args).toEqual([
      '--output-format',
      'stream-json',
      '--skip-trust',
      '--approval-mode',
      'auto_edit',
    ])
    expect(plan.stdin).toBe(input.prompt)
    expect(plan.env.GEMINI_CLI_NO_RELAUNCH).toBe('true')
    expectPlanInvariants(plan, input)
  })

  it('puts its settings in a system settings file of the run dir, never in ~/.gemini', () => {
    const input = launchInput({ endpoint: endpoint('gemini') })
    const plan = geminiAdapter.buildLaunch(input)
    const settingsFile = `${input.runDir}/${GEMINI_SETTINGS_FILE}`
    expect(plan.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH).toBe(settingsFile)
    expect(plan.files.map((file) => file.path)).toEqual([settingsFile])
    expect(settingsOf(plan.files[0]!.content)).toEqual({
      privacy: { usageStatisticsEnabled: false },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      security: { auth: { selectedType: 'gemini-api-key' } },
    })
    expect(plan.env.GOOGLE_GEMINI_BASE_URL).toBe('http://127.0.0.1:7456')
    expect(plan.env.GEMINI_API_KEY).toBe(TEST_API_KEY)
    expectPlanInvariants(plan, input)
  })

  it('uses the user settings file of an isolated home instead', () => {
    const input = launchInput({
      isolatedHome: true,
      home: '/data/homes/gemini',
      endpoint: endpoint('gemini'),
    })
    const plan = geminiAdapter.buildLaunch(input)
    expect(plan.files[0]!.path).toBe('/data/homes/gemini/.gemini/settings.json')
    expect(plan.env).not.toHaveProperty('GEMINI_CLI_SYSTEM_SETTINGS_PATH')
    expectPlanInvariants(plan, input)
  })

  it('keeps the login untouched without an endpoint', () => {
    const plan = geminiAdapter.buildLaunch(launchInput({ env: { GOOGLE_API_KEY: 'user-key' } }))
    expect(settingsOf(plan.files[0]!.content)).not.toHaveProperty('security')
    expect(plan.env.GOOGLE_API_KEY).toBe('user-key')
    expect(plan.env).not.toHaveProperty('GOOGLE_GEMINI_BASE_URL')
  })

  it('resumes a session with the model', () => {
    const plan = geminiAdapter.buildLaunch(
      launchInput({ resumeSessionId: 'uuid-1', model: 'gemini-2.5-pro' }),
    )
    expect(plan.args.slice(-4)).toEqual(['--model', 'gemini-2.5-pro', '--resume', 'uuid-1'])
  })

  describe('probeAuth', () => {
    const oauth = '/home/user/.gemini/oauth_creds.json'
    const now = new Date('2026-06-01T00:00:00Z')

    it('is ok with a key variable or a refreshable Google login', async () => {
      expect((await geminiAdapter.probeAuth(authProbeInput({ env: { GEMINI_API_KEY: 'k' } }))).state).toBe(
        'ok',
      )
      const state = await geminiAdapter.probeAuth(
        authProbeInput({ files: { [oauth]: { refresh_token: 'r' } } }),
      )
      expect(state).toEqual({ state: 'ok', source: oauth })
    })

    it('is expired for a stale token without a refresh token, missing with nothing', async () => {
      const stale = { access_token: 'a', expiry_date: now.getTime() - 1 }
      expect((await geminiAdapter.probeAuth(authProbeInput({ files: { [oauth]: stale }, now }))).state).toBe(
        'expired',
      )
      const missing = await geminiAdapter.probeAuth(authProbeInput({}))
      expect(missing.state).toBe('missing')
      expect(missing.hint).toContain('GEMINI_API_KEY')
    })
  })
})
