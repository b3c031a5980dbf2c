import { describe, expect, it } from 'vitest'
import {
  authProbeInput,
  endpoint,
  expectPlanInvariants,
  launchInput,
  TEST_API_KEY,
} from '../../../test/helpers/launch-input.js'
import { CODEX_API_KEY_VARIABLE, codexAdapter } from './codex.js'

const COMMON = [
  '--json',
  '--skip-git-repo-check',
  '--disable',
  'plugins',
  '-c',
  'analytics.enabled=false',
  '-c',
  'check_for_update_on_startup=false',
  '-c',
  'sandbox_mode="workspace-write"',
  '-c',
  'approval_policy="never"',
]

describe('codexAdapter', () => {
  it('runs exec with JSON events, workspace-write, no approvals and the prompt on stdin', () => {
    const input = launchInput()
    const plan = codexAdapter.buildLaunch(input)
    expect(plan.args).toEqual(['exec', ...COMMON, '-'])
    expect(plan.stdin).toBe(input.prompt)
    expect(plan.env).not.toHaveProperty(CODEX_API_KEY_VARIABLE)
    expectPlanInvariants(plan, input)
  })

  it('resumes with `exec resume <id>`', () => {
    const plan = codexAdapter.buildLaunch(launchInput({ resumeSessionId: 'thread-9', model: 'gpt-5.5' }))
    expect(plan.args).toEqual(['exec', 'resume', 'thread-9', ...COMMON, '-m', 'gpt-5.5', '-'])
  })

  it('declares a hangar provider whose key comes from an environment variable', () => {
    const input = launchInput({
      endpoint: endpoint('openai-responses', { baseUrl: 'http://127.0.0.1:7456/proxy/t/openai' }),
    })
    const plan = codexAdapter.buildLaunch(input)
    expect(plan.args).toContain('model_provider="hangar"')
    expect(plan.args).toContain(
      'model_providers.hangar={name="Hangar",base_url="http://127.0.0.1:7456/proxy/t/openai/v1",env_key="HANGAR_CODEX_API_KEY",wire_api="responses"}',
    )
    expect(plan.args.at(-1)).toBe('-')
    expect(plan.env[CODEX_API_KEY_VARIABLE]).toBe(TEST_API_KEY)
    expectPlanInvariants(plan, input)
  })

  it('leaves env_key out for a keyless endpoint', () => {
    const plan = codexAdapter.buildLaunch(
      launchInput({ endpoint: endpoint('openai-responses', { apiKey: undefined }) }),
    )
    expect(plan.args.join(' ')).not.toContain('env_key')
  })

  describe('probeAuth', () => {
    it('is ok with a key variable or an auth.json under CODEX_HOME', async () => {
      expect(await codexAdapter.probeAuth(authProbeInput({ env: { OPENAI_API_KEY: 'k' } }))).toEqual({
        state: 'ok',
        source: 'OPENAI_API_KEY',
      })
      const file = '/codex/auth.json'
      const state = await codexAdapter.probeAuth(
        authProbeInput({
          env: { CODEX_HOME: '/codex' },
          files: { [file]: { tokens: { access_token: 't' } } },
        }),
      )
      expect(state).toEqual({ state: 'ok', source: file })
    })

    it('is missing when auth.json holds no credential', async () => {
      const file = '/home/user/.codex/auth.json'
      const state = await codexAdapter.probeAuth(
        authProbeInput({ files: { [file]: { OPENAI_API_KEY: null } } }),
      )
      expect(state.state).toBe('missing')
      expect(state.hint).toContain('codex login')
    })
  })

  it('parses its version', () => {
    expect(codexAdapter.parseVersion('codex-cli 0.169.0')).toBe('0.169.0')
  })
})
