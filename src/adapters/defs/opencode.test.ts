import { describe, expect, it } from 'vitest'
import {
  authProbeInput,
  endpoint,
  expectPlanInvariants,
  launchInput,
  TEST_API_KEY,
} from '../../../test/helpers/launch-input.js'
import { OPENCODE_API_KEY_VARIABLE, opencodeAdapter } from './opencode.js'

function configOf(plan: { env: Record<string, string> }): Record<string, unknown> {
  return JSON.parse(plan.env.OPENCODE_CONFIG_CONTENT ?? '{}') as Record<string, unknown>
}

describe('opencodeAdapter', () => {
  it('runs `run --format json` with the prompt on stdin and no update, share, catalogue or registry traffic', () => {
    const input = launchInput()
    const plan = opencodeAdapter.buildLaunch(input)
    expect(plan.args).toEqual(['run', '--format', 'json', '--thinking'])
    expect(plan.stdin).toBe(input.prompt)
    // The default permissions: edits, no shell or web (issue 18 item 8).
    expect(configOf(plan)).toEqual({
      autoupdate: false,
      share: 'disabled',
      permission: {
        edit: 'allow',
        bash: 'deny',
        webfetch: 'deny',
        websearch: 'deny',
        external_directory: 'deny',
      },
    })
    expect(plan.env).toMatchObject({
      OPENCODE_DISABLE_MODELS_FETCH: 'true',
      OPENCODE_DISABLE_AUTOUPDATE: 'true',
      OPENCODE_DISABLE_LSP_DOWNLOAD: 'true',
      npm_config_registry: 'http://127.0.0.1:9/',
    })
    expectPlanInvariants(plan, input)
  })

  it('declares an OpenAI-compatible hangar provider whose key OpenCode reads from the environment', () => {
    const input = launchInput({ endpoint: endpoint('openai-chat'), model: 'mock-model' })
    const plan = opencodeAdapter.buildLaunch(input)
    expect(configOf(plan)).toEqual({
      autoupdate: false,
      share: 'disabled',
      permission: expect.objectContaining({ edit: 'allow', bash: 'deny' }),
      provider: {
        hangar: {
          npm: '@ai-sdk/openai-compatible',
          name: 'Hangar',
          options: { baseURL: 'http://127.0.0.1:7456/v1', apiKey: `{env:${OPENCODE_API_KEY_VARIABLE}}` },
          models: { 'mock-model': { name: 'mock-model', tool_call: true, reasoning: true } },
        },
      },
      model: 'hangar/mock-model',
    })
    expect(plan.env.OPENCODE_CONFIG_CONTENT).not.toContain(TEST_API_KEY)
    expect(plan.env[OPENCODE_API_KEY_VARIABLE]).toBe(TEST_API_KEY)
    expect(plan.args).not.toContain('--model')
    expectPlanInvariants(plan, input)
  })

  it('uses the built-in anthropic provider for an Anthropic endpoint', () => {
    const plan = opencodeAdapter.buildLaunch(launchInput({ endpoint: endpoint('anthropic') }))
    const config = configOf(plan)
    expect(config.model).toBe('anthropic/claude-sonnet-4-5')
    expect(JSON.stringify(config.provider)).toContain('"baseURL":"http://127.0.0.1:7456/v1"')
  })

  it('resumes a session and passes a provider/model without an endpoint', () => {
    const plan = opencodeAdapter.buildLaunch(
      launchInput({ resumeSessionId: 'ses_1', model: 'anthropic/claude-opus-4' }),
    )
    expect(plan.args).toEqual([
      'run',
      '--format',
      'json',
      '--thinking',
      '--model',
      'anthropic/claude-opus-4',
      '--session',
      'ses_1',
    ])
  })

  describe('probeAuth', () => {
    it('is ok with a stored provider login', async () => {
      const file = '/home/user/.local/share/opencode/auth.json'
      const state = await opencodeAdapter.probeAuth(
        authProbeInput({ files: { [file]: { anthropic: { type: 'api' } } } }),
      )
      expect(state).toEqual({ state: 'ok', source: file })
    })

    it('is unknown, not missing, with nothing found (free models need no sign-in)', async () => {
      const state = await opencodeAdapter.probeAuth(authProbeInput({}))
      expect(state.state).toBe('unknown')
      expect(state.hint).toContain('opencode auth login')
    })
  })
})
