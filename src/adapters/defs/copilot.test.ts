import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  authProbeInput,
  endpoint,
  expectPlanInvariants,
  launchInput,
  TEST_API_KEY,
} from '../../../test/helpers/launch-input.js'
import { copilotAdapter, resolveCopilotExecutable } from './copilot.js'

const FLAGS = [
  '--output-format',
  'json',
  // The default permissions: file writes only; shell commands are refused (issue 18 item 8).
  '--allow-tool=write',
  '--no-ask-user',
  '--no-auto-update',
  '--disable-client-telemetry',
  '--no-remote',
]

describe('copilotAdapter', () => {
  it('runs with JSON output, file writes allowed and the prompt on stdin, on its own login without an endpoint', () => {
    const input = launchInput({ model: 'gpt-5.4' })
    const plan = copilotAdapter.buildLaunch(input)
    // A new session's id is chosen here (from the run dir): an interrupted run has it before any output.
    expect(plan.sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(plan.args).toEqual([...FLAGS, '--model', 'gpt-5.4', `--session-id=${plan.sessionId}`])
    expect(copilotAdapter.buildLaunch(launchInput({ runDir: '/data/runs/other' })).sessionId).not.toBe(
      plan.sessionId,
    )
    expect(plan.stdin).toBe(input.prompt)
    expect(plan.env.COPILOT_AUTO_UPDATE).toBe('false')
    expect(plan.env).not.toHaveProperty('COPILOT_OFFLINE')
    expectPlanInvariants(plan, input)
  })

  it('resumes with an attached --resume=<id>', () => {
    const plan = copilotAdapter.buildLaunch(launchInput({ resumeSessionId: 'sess-7' }))
    expect(plan.args).toEqual([...FLAGS, '--resume=sess-7'])
    expect(plan.sessionId).toBe('sess-7')
  })

  it('maps an OpenAI endpoint onto BYOK variables, offline', () => {
    const input = launchInput({ endpoint: endpoint('openai-chat'), model: 'gpt-5.4' })
    const plan = copilotAdapter.buildLaunch(input)
    expect(plan.env).toMatchObject({
      COPILOT_PROVIDER_BASE_URL: 'http://127.0.0.1:7456/v1',
      COPILOT_PROVIDER_TYPE: 'openai',
      COPILOT_PROVIDER_WIRE_API: 'completions',
      COPILOT_PROVIDER_API_KEY: TEST_API_KEY,
      COPILOT_MODEL: 'gpt-5.4',
      COPILOT_OFFLINE: 'true',
    })
    expect(plan.args).not.toContain('--model')
    expectPlanInvariants(plan, input)
  })

  it('maps an Anthropic endpoint without /v1 and with a default model', () => {
    const plan = copilotAdapter.buildLaunch(
      launchInput({ endpoint: endpoint('anthropic', { baseUrl: 'http://h/v1' }) }),
    )
    expect(plan.env).toMatchObject({
      COPILOT_PROVIDER_BASE_URL: 'http://h',
      COPILOT_PROVIDER_TYPE: 'anthropic',
    })
    expect(plan.env.COPILOT_MODEL).toBeTruthy()
    expect(plan.env).not.toHaveProperty('COPILOT_PROVIDER_WIRE_API')
  })

  it('resolves the native binary next to the npm launcher', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'hangar-copilot-'))
    try {
      const launcher = path.join(root, 'node_modules/@github/copilot/npm-loader.js')
      const native = path.join(
        root,
        `node_modules/@github/copilot-${process.platform}-${process.arch}/copilot`,
      )
      await mkdir(path.dirname(launcher), { recursive: true })
      await mkdir(path.dirname(native), { recursive: true })
      await writeFile(launcher, '#!/usr/bin/env node\n')
      await writeFile(native, '')
      await chmod(native, 0o755)
      await mkdir(path.join(root, 'node_modules/.bin'))
      await symlink('../@github/copilot/npm-loader.js', path.join(root, 'node_modules/.bin/copilot'))
      const resolved = await resolveCopilotExecutable(path.join(root, 'node_modules/.bin/copilot'))
      expect(resolved.path).toBe(await import('node:fs/promises').then((fs) => fs.realpath(native)))
      await rm(native)
      await expect(resolveCopilotExecutable(launcher)).rejects.toThrow(/native binary/)
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })

  describe('probeAuth', () => {
    it('is ok with a token variable or a signed-in user in its config', async () => {
      expect(await copilotAdapter.probeAuth(authProbeInput({ env: { GH_TOKEN: 'x' } }))).toEqual({
        state: 'ok',
        source: 'GH_TOKEN',
      })
      const file = '/home/user/.copilot/config.json'
      const state = await copilotAdapter.probeAuth(
        authProbeInput({
          files: { [file]: { loggedInUsers: [{ host: 'https://github.com', login: 'me' }] } },
        }),
      )
      expect(state).toEqual({ state: 'ok', source: file })
    })

    it('is missing without its state dir, unknown with one (the token may be in the keychain)', async () => {
      expect((await copilotAdapter.probeAuth(authProbeInput({}))).state).toBe('missing')
      const state = await copilotAdapter.probeAuth(authProbeInput({ directories: ['/home/user/.copilot'] }))
      expect(state.state).toBe('unknown')
    })
  })
})
