// Issue 18 item 6: a user could not choose the built-in agent's provider. It was the first stored
// credential *with a key*, then the daemon's environment — a user who set keyless Ollama in Settings still
// got Anthropic through the daemon's key. Now a user picks a default (`PUT /api/settings/builtin`), a
// keyless local provider can be it, Settings says what the agent will use and why, and run-start names
// the provider and model. A real runtime in this process in front of two mock model servers: the
// operator's "Anthropic" (ANTHROPIC_BASE_URL) and the user's "Ollama" (an OpenAI-compatible endpoint).
import { execFileSync } from 'node:child_process'
import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/core/config.js'
import type { EventEnvelope, RunStartEvent } from '../../src/core/events.js'
import { createRuntime, type Runtime } from '../../src/main.js'
import type { RunningServer } from '../../src/server/listen.js'
import type { Run } from '../../src/store/repositories/runs-repository.js'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { createApiClient } from '../helpers/api-client.js'
import { makeTempDir } from '../helpers/store-engines.js'

const OPERATOR_KEY = 'sk-ant-operator-env-key-000000000018'

interface BuiltinSettings {
  provider: string | null
  model: string | null
  effective: { provider: string; model: string; source: string; reason: string } | null
  problem: string | null
}

describe('the built-in agent’s provider is the user’s choice (issue 18 item 6)', { timeout: 120_000 }, () => {
  let operator: MockModelServer
  let ollama: MockModelServer
  let root: string
  let project: string
  let runtime: Runtime
  let server: RunningServer
  let token: string
  const { api } = createApiClient(() => ({ url: server.url, token }))

  beforeAll(async () => {
    ;[operator, ollama] = await Promise.all([startMockModelServer(), startMockModelServer()])
    root = await makeTempDir('hangar-builtin-choice-')
    project = path.join(root, 'project')
    await mkdir(project)
    execFileSync('git', ['init', '-q'], { cwd: project })
    runtime = await createRuntime({
      dataDir: path.join(root, 'data'),
      // The user's base URL is on loopback: the operator allows private networks.
      config: parseConfig('providers:\n  allowPrivateNetworks: true'),
      projectDir: project,
      env: { ANTHROPIC_BASE_URL: operator.url, ANTHROPIC_API_KEY: OPERATOR_KEY },
      logLevel: 'silent',
    })
    server = await runtime.listen({ host: '127.0.0.1', port: 0 })
    token = (await runtime.auth.createToken('system', runtime.owner.id, { name: 'settings' })).token
    runtime.scheduler.start(100)
  })

  afterAll(async () => {
    await runtime?.scheduler.stop()
    await server?.close()
    await runtime?.close()
    await Promise.all([operator?.close(), ollama?.close()])
    if (root) await rm(root, { recursive: true, force: true })
  })

  beforeEach(() => {
    operator.reset()
    ollama.reset()
  })

  async function runBuiltin(agent = 'builtin'): Promise<{ run: Run; start: EventEnvelope<RunStartEvent> }> {
    const submitted = await runtime.submitRun(runtime.owner.id, {
      agent,
      prompt: 'Say hello.',
      cwd: project,
    })
    const runs = runtime.store.forUser(runtime.owner.id).runs
    const deadline = Date.now() + 60_000
    for (;;) {
      const run = (await runs.get(submitted.id))!
      if (['succeeded', 'failed', 'cancelled', 'interrupted', 'awaiting_confirmation'].includes(run.status)) {
        const events = await runs.listEvents(run.id, { afterSeq: 0, limit: 100 })
        const start = events.find((event) => event.type === 'run-start') as EventEnvelope<RunStartEvent>
        return { run, start }
      }
      if (Date.now() > deadline) throw new Error(`run ${run.id} is still ${run.status}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  it('uses the keyless local provider the user chose, not the operator’s key, and says why', async () => {
    const before = await api<BuiltinSettings>('GET', '/api/settings/builtin')
    expect(before.status).toBe(200)
    expect(before.json).toEqual({
      provider: null,
      model: null,
      effective: {
        provider: 'anthropic',
        model: 'claude-sonnet-4-6',
        source: 'environment',
        reason: "ANTHROPIC_API_KEY in the daemon's environment",
      },
      problem: null,
    })

    // Keyless Ollama saved in Settings, then chosen as the built-in agent's default.
    const saved = await api('PUT', '/api/settings/providers/ollama', { baseUrl: `${ollama.url}/v1` })
    expect(saved.status, JSON.stringify(saved.json)).toBe(200)
    const chosen = await api<BuiltinSettings>('PUT', '/api/settings/builtin', {
      provider: 'ollama',
      model: 'llama3.2',
    })
    expect(chosen.status, JSON.stringify(chosen.json)).toBe(200)
    expect(chosen.json).toEqual({
      provider: 'ollama',
      model: 'llama3.2',
      effective: { provider: 'ollama', model: 'llama3.2', source: 'user', reason: 'your default' },
      problem: null,
    })
    expect(await api<BuiltinSettings>('GET', '/api/settings/builtin')).toEqual(chosen)

    const { run, start } = await runBuiltin()
    expect(run.status, run.reason ?? '').toBe('succeeded')
    expect(start).toMatchObject({ provider: 'ollama', model: 'llama3.2' })
    const generations = ollama.requests.filter((request) => request.family === 'openai-chat')
    expect(generations.length).toBeGreaterThan(0)
    expect((generations[0]!.body as { model: string }).model).toBe('llama3.2')
    // Nothing reached the operator's endpoint, and the operator's key went nowhere.
    expect(operator.requests).toHaveLength(0)
    expect(JSON.stringify(ollama.requests.map((request) => request.headers))).not.toContain(OPERATOR_KEY)
    // That was the proxy's built-in path; a profile without the proxy (and without a provider of its own)
    // connects directly — to the same choice.
    expect(start.proxied).toBe(true)
    ollama.reset()
    await runtime.store.forUser(runtime.owner.id).profiles.put('direct', { adapter: 'builtin', proxy: false })
    const direct = await runBuiltin('direct')
    expect(direct.run.status, direct.run.reason ?? '').toBe('succeeded')
    expect(direct.start).toMatchObject({ provider: 'ollama', model: 'llama3.2', proxied: false })
    expect(ollama.requests.some((request) => request.family === 'openai-chat')).toBe(true)
    expect(operator.requests).toHaveLength(0)
  })

  it('refuses a provider nobody declared; clearing the default goes back to the environment', async () => {
    const unknown = await api<{ error: { code: string; message: string } }>('PUT', '/api/settings/builtin', {
      provider: 'nobody-here',
    })
    expect(unknown.status).toBe(400)
    expect(unknown.json.error.message).toMatch(
      /^provider "nobody-here" is not one Hangar knows; known providers: anthropic, .*save its base URL/,
    )

    const cleared = await api<BuiltinSettings>('PUT', '/api/settings/builtin', { provider: null })
    expect(cleared.status).toBe(200)
    expect(cleared.json).toMatchObject({
      provider: null,
      effective: { provider: 'anthropic', source: 'environment' },
    })
    const { run, start } = await runBuiltin()
    expect(run.status, run.reason ?? '').toBe('succeeded')
    expect(start).toMatchObject({ provider: 'anthropic', model: 'claude-sonnet-4-6' })
    expect(operator.requests.some((request) => request.family === 'anthropic')).toBe(true)
    expect(ollama.requests).toHaveLength(0)
  })
})
