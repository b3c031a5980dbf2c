import { describe, expect, it } from 'vitest'
import {
  authProbeInput,
  endpoint,
  expectPlanInvariants,
  launchInput,
  TEST_API_KEY,
} from '../../../test/helpers/launch-input.js'
import { claudeCodeAdapter } from './claude-code.js'

describe('claudeCodeAdapter', () => {
  it('runs print mode with stream-json, partial messages and accepted edits, the prompt on stdin', () => {
    const input = launchInput()
    const plan = claudeCodeAdapter.buildLaunch(input)
    expect(plan.command).toBe('/usr/local/bin/agent-cli')
    expect(plan.args).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--include-partial-messages',
      '--permission-mode',
      'acceptEdits',
    ])
    expect(plan.stdin).toBe(input.prompt)
    expect(plan.files).toEqual([])
    expect(plan.env).toMatchObject({
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      PATH: '/usr/bin:/bin',
    })
    expect(plan.env).not.toHaveProperty('ANTHROPIC_BASE_URL')
    expect(plan.env).not.toHaveProperty('UNSET')
    expectPlanInvariants(plan, input)
  })

  it('resumes a session and passes the model and extra args', () => {
    const input = launchInput({
      resumeSessionId: 'abc-123',
      model: 'claude-sonnet-4-6',
      extraArgs: ['--add-dir', '/x'],
    })
    const plan = claudeCodeAdapter.buildLaunch(input)
    expect(plan.args.slice(-6)).toEqual([
      '--model',
      'claude-sonnet-4-6',
      '--resume',
      'abc-123',
      '--add-dir',
      '/x',
    ])
  })

  it('points at an endpoint through the environment only, without /v1, dropping a competing bearer token', () => {
    const input = launchInput({
      endpoint: endpoint('anthropic', {
        baseUrl: 'http://127.0.0.1:7456/proxy/t/anthropic/v1/',
        model: 'claude-mock',
      }),
      env: { PATH: '/bin', ANTHROPIC_AUTH_TOKEN: 'old' },
    })
    const plan = claudeCodeAdapter.buildLaunch(input)
    expect(plan.env.ANTHROPIC_BASE_URL).toBe('http://127.0.0.1:7456/proxy/t/anthropic')
    expect(plan.env.ANTHROPIC_API_KEY).toBe(TEST_API_KEY)
    expect(plan.env).not.toHaveProperty('ANTHROPIC_AUTH_TOKEN')
    expect(plan.args).toContain('claude-mock')
    expectPlanInvariants(plan, input)
  })

  it('is pure: the same input gives the same plan and the input is left alone', () => {
    const input = launchInput({ endpoint: endpoint('anthropic') })
    expect(claudeCodeAdapter.buildLaunch(input)).toEqual(claudeCodeAdapter.buildLaunch(input))
    expect(input.env).toEqual(launchInput().env)
  })

  describe('probeAuth', () => {
    const credentials = '/home/user/.claude/.credentials.json'
    const now = new Date('2026-06-01T00:00:00Z')

    it('is ok with a key in the environment, naming the variable only', async () => {
      const state = await claudeCodeAdapter.probeAuth(authProbeInput({ env: { ANTHROPIC_API_KEY: 'sk-x' } }))
      expect(state).toEqual({ state: 'ok', source: 'ANTHROPIC_API_KEY' })
    })

    it('is ok with a refreshable login and expired with a stale one that cannot refresh', async () => {
      const refreshable = {
        claudeAiOauth: { accessToken: 'a', refreshToken: 'r', expiresAt: now.getTime() - 1000 },
      }
      expect(
        await claudeCodeAdapter.probeAuth(authProbeInput({ files: { [credentials]: refreshable }, now })),
      ).toEqual({
        state: 'ok',
        source: credentials,
      })
      const stale = { claudeAiOauth: { accessToken: 'a', expiresAt: now.getTime() - 1000 } }
      const state = await claudeCodeAdapter.probeAuth(
        authProbeInput({ files: { [credentials]: stale }, now }),
      )
      expect(state.state).toBe('expired')
      expect(JSON.stringify(state)).not.toContain('"a"')
    })

    it('follows CLAUDE_CONFIG_DIR', async () => {
      const file = '/cfg/claude/.credentials.json'
      const state = await claudeCodeAdapter.probeAuth(
        authProbeInput({
          env: { CLAUDE_CONFIG_DIR: '/cfg/claude' },
          files: { [file]: { claudeAiOauth: { accessToken: 'a' } } },
        }),
      )
      expect(state).toEqual({ state: 'ok', source: file })
    })

    it('is missing with a hint when nothing is there', async () => {
      const state = await claudeCodeAdapter.probeAuth(authProbeInput({}))
      expect(state.state).toBe('missing')
      expect(state.hint).toMatch(/claude.*ANTHROPIC_API_KEY/)
    })
  })

  it('parses its version', () => {
    expect(claudeCodeAdapter.parseVersion('2.1.330 (Claude Code)\n')).toBe('2.1.330')
  })
})
