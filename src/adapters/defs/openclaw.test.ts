import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
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
import {
  isSuitableNodeVersion,
  OPENCLAW_API_KEY_VARIABLE,
  OPENCLAW_CONFIG_FILE,
  OPENCLAW_PROMPT_FILE,
  openclawAdapter,
  openclawCompileCacheDirectory,
  openclawSessionId,
  openclawStateDirectory,
  resolveOpenclawExecutable,
} from './openclaw.js'

const executable = { path: '/opt/openclaw/openclaw.mjs', interpreter: '/opt/node24/bin/node' }

function configOf(plan: { files: { path: string; content: string }[] }): Record<string, unknown> {
  const file = plan.files.find((candidate) => candidate.path.endsWith(OPENCLAW_CONFIG_FILE))
  return JSON.parse(file?.content ?? '{}') as Record<string, unknown>
}

describe('openclawAdapter', () => {
  it('runs one `agent --local` turn under Node 24 with a session id chosen from the run dir', () => {
    const input = launchInput({ executable, timeoutSeconds: 300 })
    const plan = openclawAdapter.buildLaunch(input)
    const sessionId = openclawSessionId(input)
    expect(sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(plan.command).toBe('/opt/node24/bin/node')
    expect(plan.args).toEqual([
      '/opt/openclaw/openclaw.mjs',
      'agent',
      '--local',
      '--session-id',
      sessionId,
      '--json',
      '--timeout',
      '300',
      '--message-file',
      `${input.runDir}/${OPENCLAW_PROMPT_FILE}`,
    ])
    expect(plan.stdin).toBeNull()
    expect(plan.env).toMatchObject({
      OPENCLAW_NO_RESPAWN: '1',
      OPENCLAW_NO_AUTO_UPDATE: '1',
      OPENCLAW_STATE_DIR: openclawStateDirectory(input.home, sessionId),
      OPENCLAW_CONFIG_PATH: `${input.runDir}/${OPENCLAW_CONFIG_FILE}`,
      TMPDIR: `${input.runDir}/tmp`,
      NODE_COMPILE_CACHE: openclawCompileCacheDirectory(input.home),
    })
    expect(plan.files.find((file) => file.path.endsWith(OPENCLAW_PROMPT_FILE))?.content).toBe(input.prompt)
    expect(configOf(plan)).toMatchObject({
      agents: { defaults: { workspace: input.cwd, skipBootstrap: true, sandbox: { mode: 'off' } } },
      tools: { profile: 'coding', fs: { workspaceOnly: true }, exec: { mode: 'full' } },
      session: { maintenance: { mode: 'warn' } },
    })
    expectPlanInvariants(plan, input)
  })

  it('keeps its compile cache in the home across runs, unless the environment chose otherwise', () => {
    const cache = (env: Record<string, string>) =>
      openclawAdapter.buildLaunch(launchInput({ executable, env })).env.NODE_COMPILE_CACHE
    const home = launchInput({ executable }).home
    expect(cache({})).toBe(openclawCompileCacheDirectory(home))
    expect(openclawCompileCacheDirectory(home).startsWith(`${home}/`)).toBe(true)
    expect(cache({ NODE_COMPILE_CACHE: '/var/cache/node' })).toBe('/var/cache/node')
    expect(cache({ NODE_DISABLE_COMPILE_CACHE: '1' })).toBeUndefined()
  })

  it('resumes by reusing the session id, and so the same state dir', () => {
    const first = launchInput({ executable })
    const sessionId = openclawSessionId(first)
    const plan = openclawAdapter.buildLaunch(
      launchInput({ executable, runDir: '/data/runs/run-2', resumeSessionId: sessionId }),
    )
    expect(plan.args).toContain(sessionId)
    // Declared on the plan: the run stores it before OpenClaw prints anything.
    expect(openclawAdapter.buildLaunch(first).sessionId).toBe(sessionId)
    expect(plan.sessionId).toBe(sessionId)
    expect(plan.env.OPENCLAW_STATE_DIR).toBe(openclawStateDirectory(first.home, sessionId))
    expect(openclawSessionId({ runDir: '/data/runs/run-2' })).not.toBe(sessionId)
  })

  it('declares a provider of the right api whose key is substituted from the environment', () => {
    const input = launchInput({ executable, endpoint: endpoint('anthropic'), model: 'claude-mock' })
    const plan = openclawAdapter.buildLaunch(input)
    const config = configOf(plan)
    expect(config.models).toMatchObject({
      mode: 'merge',
      providers: {
        hangar: {
          baseUrl: 'http://127.0.0.1:7456',
          api: 'anthropic-messages',
          apiKey: `\${${OPENCLAW_API_KEY_VARIABLE}}`,
        },
      },
    })
    expect(config.agents).toMatchObject({ defaults: { model: { primary: 'hangar/claude-mock' } } })
    expect(plan.env[OPENCLAW_API_KEY_VARIABLE]).toBe(TEST_API_KEY)
    expectPlanInvariants(plan, input)

    const chat = configOf(
      openclawAdapter.buildLaunch(launchInput({ executable, endpoint: endpoint('openai-chat') })),
    )
    expect(JSON.stringify(chat.models)).toContain('"api":"openai-completions"')
    expect(JSON.stringify(chat.models)).toContain('"baseUrl":"http://127.0.0.1:7456/v1"')
  })

  it('accepts only the Node versions OpenClaw runs on', () => {
    expect(['v24.16.0', 'v24.21.0', 'v26.1.0', 'v27.0.0'].every(isSuitableNodeVersion)).toBe(true)
    expect(['v20.20.2', 'v24.15.9', 'v25.2.0', 'v26.0.1', 'nonsense'].some(isSuitableNodeVersion)).toBe(false)
  })

  it('finds a suitable Node through HANGAR_NODE24 and refuses when there is none', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'hangar-openclaw-'))
    try {
      const script = path.join(root, 'openclaw.mjs')
      await writeFile(script, '')
      const fakeNode = async (name: string, version: string) => {
        const file = path.join(root, name)
        await writeFile(file, `#!/bin/sh\necho ${version}\n`)
        await chmod(file, 0o755)
        return file
      }
      const old = await fakeNode('node20', 'v20.20.2')
      const good = await fakeNode('node24', 'v24.21.0')
      await mkdir(path.join(root, 'bin'))
      expect(await resolveOpenclawExecutable(script, { HANGAR_NODE24: good, PATH: '' })).toEqual({
        path: await import('node:fs/promises').then((fs) => fs.realpath(script)),
        interpreter: good,
      })
      await expect(
        resolveOpenclawExecutable(script, { HANGAR_NODE24: old, PATH: path.join(root, 'bin') }),
      ).rejects.toThrow(/HANGAR_NODE24/)
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })

  it('probes auth as unknown unless a provider key is set', async () => {
    expect((await openclawAdapter.probeAuth(authProbeInput({}))).state).toBe('unknown')
    expect(await openclawAdapter.probeAuth(authProbeInput({ env: { OPENAI_API_KEY: 'k' } }))).toEqual({
      state: 'ok',
      source: 'OPENAI_API_KEY',
    })
  })

  it('parses its version', () => {
    expect(openclawAdapter.parseVersion('OpenClaw 2026.9.6 (eb377ac)')).toBe('2026.9.6')
  })
})
