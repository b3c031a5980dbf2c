// Issue 17 item 3: the operator's key followed a member's base URL. A member with no key of their own set
// `baseUrl` for `anthropic` (loopback, a DNS name, the daemon itself) and the proxy sent the operator's
// ANTHROPIC_API_KEY there. Now a key goes only with the endpoint configured with it, and a user-set
// upstream on loopback or a private network is refused after DNS unless the operator opted in.
// Issue 17 item 11 (first bug): a UI-made built-in profile with a custom provider sent its proxied traffic
// to the openai family's default upstream with the owner's OpenAI key.
// Real runtimes (SQLite, loopback listener) in front of mock model servers that record every request.
import { mkdir, rm } from 'node:fs/promises'
import dns from 'node:dns/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/core/config.js'
import { createRuntime, type Runtime } from '../../src/main.js'
import { STAND_IN_KEY } from '../../src/proxy/forward-upstream.js'
import type { RunningServer } from '../../src/server/listen.js'
import type { User } from '../../src/store/repositories/users-repository.js'
import {
  type MockModelServer,
  type RecordedRequest,
  reply,
  startMockModelServer,
} from '../fixtures/mock-model-server.js'
import { makeTempDir } from '../helpers/store-engines.js'

const OPERATOR_ANTHROPIC_KEY = 'sk-ant-operator-env-key-000000000001'
const OPERATOR_OPENAI_KEY = 'sk-openai-operator-env-key-0000002'
const LAB_KEY = 'sk-lab-operator-key-000000000000003'
const OWNER_VAULT_KEY = 'sk-ant-owner-vaulted-key-00000004'
const OWNER_OPENAI_VAULT_KEY = 'sk-openai-owner-vaulted-key-0005'
const MEMBER_KEY = 'sk-ant-member-own-key-000000000006'
const ALL_HELD_KEYS = [
  OPERATOR_ANTHROPIC_KEY,
  OPERATOR_OPENAI_KEY,
  LAB_KEY,
  OWNER_VAULT_KEY,
  OWNER_OPENAI_VAULT_KEY,
]

interface Daemon {
  runtime: Runtime
  server: RunningServer
}

const messages = (text: string) => ({
  model: 'claude-sonnet-4-6',
  max_tokens: 50,
  messages: [{ role: 'user', content: text }],
})

function everything(requests: RecordedRequest[]): string {
  return JSON.stringify(requests.map((request) => ({ ...request, receivedAt: undefined })))
}

describe('provider keys (issue 17 items 3 and 11)', () => {
  let operator: MockModelServer
  let capture: MockModelServer
  let lab: MockModelServer
  let root: string
  let strict: Daemon
  let open: Daemon
  /** A name (not an IP literal, not "localhost") that this machine resolves to loopback or a private address. */
  let localName: string

  async function startDaemon(name: string, yaml: string[]): Promise<Daemon> {
    const projectDir = path.join(root, name)
    await mkdir(projectDir, { recursive: true })
    const runtime = await createRuntime({
      dataDir: path.join(root, `${name}-data`),
      config: parseConfig(yaml.join('\n')),
      projectDir,
      env: {
        ANTHROPIC_BASE_URL: operator.url,
        ANTHROPIC_API_KEY: OPERATOR_ANTHROPIC_KEY,
        OPENAI_BASE_URL: `${operator.url}/v1`,
        OPENAI_API_KEY: OPERATOR_OPENAI_KEY,
        MYLAB_API_KEY: LAB_KEY,
      },
      logLevel: 'silent',
    })
    const server = await runtime.listen({ host: '127.0.0.1', port: 0 })
    await runtime.credentials.put('system', runtime.owner.id, 'anthropic', { apiKey: OWNER_VAULT_KEY })
    return { runtime, server }
  }

  async function addMember(daemon: Daemon, name: string): Promise<{ user: User; pat: string }> {
    const user = await daemon.runtime.store.users.create({ name, role: 'member' })
    const { token } = await daemon.runtime.auth.createToken('system', user.id, { name: 'cli' })
    return { user, pat: token }
  }

  async function putProvider(daemon: Daemon, pat: string, provider: string, body: object) {
    const response = await fetch(`${daemon.server.url}/api/settings/providers/${provider}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${pat}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return { status: response.status, json: (await response.json()) as { error?: { message: string } } }
  }

  /** One Anthropic request through the proxy, as an agent given `hangar env` (or a run) would send it. */
  async function askAnthropic(
    daemon: Daemon,
    userId: string,
    options: { profile?: string; runId?: string; clientKey?: string } = {},
  ) {
    const profile = options.profile ?? 'claude-code'
    const { token } = await daemon.runtime.auth.createToken('system', userId, {
      name: 'proxy',
      kind: 'proxy',
      profile,
      ...(options.runId && { runId: options.runId }),
    })
    const response = await fetch(`${daemon.server.url}/proxy/${token}/anthropic/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': options.clientKey ?? STAND_IN_KEY,
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify(messages('hello')),
    })
    return { status: response.status, text: await response.text() }
  }

  beforeAll(async () => {
    operator = await startMockModelServer()
    capture = await startMockModelServer()
    lab = await startMockModelServer()
    root = await makeTempDir('hangar-provider-keys-')
    localName = os.hostname()
    const resolved = await dns.lookup(localName, { all: true })
    expect(
      resolved.every(({ address }) =>
        /^(127\.|10\.|172\.(1[6-9]|2\d|3[01])\.|192\.168\.|::1$)/.test(address),
      ),
      `${localName} resolves to ${JSON.stringify(resolved)}: this suite needs a host name that resolves to a loopback or private address`,
    ).toBe(true)
    strict = await startDaemon('strict', [
      'providers:',
      `  mylab: { baseUrl: "${lab.url}/v1", apiKeyEnv: MYLAB_API_KEY }`,
    ])
    open = await startDaemon('open', ['providers:', '  allowPrivateNetworks: true'])
  })

  afterAll(async () => {
    await strict?.runtime.scheduler.stop()
    for (const daemon of [strict, open]) {
      await daemon?.server.close()
      await daemon?.runtime.close()
    }
    await Promise.all([operator?.close(), capture?.close(), lab?.close()])
    if (root) await rm(root, { recursive: true, force: true })
  })

  beforeEach(() => {
    operator.reset()
    capture.reset()
    lab.reset()
  })

  describe('without providers.allowPrivateNetworks', () => {
    it('refuses a member’s loopback base URL when it is saved, and when it is stored by another path', async () => {
      const mallory = await addMember(strict, 'mallory-literal')
      const saved = await putProvider(strict, mallory.pat, 'anthropic', { baseUrl: capture.url })
      expect(saved.status).toBe(400)
      // A row that did not come through that route (or a policy turned off since) is refused on use.
      await strict.runtime.credentials.put('system', mallory.user.id, 'anthropic', { baseUrl: capture.url })
      const asked = await askAnthropic(strict, mallory.user.id)
      expect(asked.status).toBe(502)
      expect(JSON.parse(asked.text)).toMatchObject({ type: 'error', error: { type: 'api_error' } })
      expect(asked.text).toMatch(/loopback or private address/)
      for (const key of ALL_HELD_KEYS) expect(asked.text).not.toContain(key)
      expect(capture.requests).toHaveLength(0)
      expect(operator.requests).toHaveLength(0)
    })

    it('refuses, after DNS, a member’s base URL whose name resolves to this machine', async () => {
      const mallory = await addMember(strict, 'mallory-dns')
      const url = `http://${localName}:${new URL(capture.url).port}`
      // The name passes the check on the string: only the connection can tell.
      expect((await putProvider(strict, mallory.pat, 'anthropic', { baseUrl: url })).status).toBe(200)
      const asked = await askAnthropic(strict, mallory.user.id)
      expect(asked.status).toBe(502)
      expect(JSON.parse(asked.text)).toMatchObject({ type: 'error', error: { type: 'api_error' } })
      expect(asked.text).toContain(
        `the base URL set for this provider (host ${localName}) resolves to a loopback or private address`,
      )
      expect(asked.text).toContain('providers.allowPrivateNetworks')
      for (const key of ALL_HELD_KEYS) expect(asked.text).not.toContain(key)
      expect(capture.requests).toHaveLength(0)
      expect(operator.requests).toHaveLength(0)
    })

    it('refuses a base URL pointing at the daemon itself by name', async () => {
      const mallory = await addMember(strict, 'mallory-self')
      const url = `http://${localName}:${new URL(strict.server.url).port}/proxy`
      expect((await putProvider(strict, mallory.pat, 'anthropic', { baseUrl: url })).status).toBe(200)
      const asked = await askAnthropic(strict, mallory.user.id)
      expect(asked.status).toBe(502)
      expect(asked.text).toMatch(/resolves to a loopback or private address/)
    })

    it('sends the operator’s env key to the operator’s configured upstream, which may be loopback', async () => {
      const carol = await addMember(strict, 'carol')
      operator.enqueue(reply().text('hi'))
      const asked = await askAnthropic(strict, carol.user.id)
      expect(asked.status).toBe(200)
      expect(operator.requests).toHaveLength(1)
      expect(operator.requests[0]!.headers['x-api-key']).toBe(OPERATOR_ANTHROPIC_KEY)
      expect(capture.requests).toHaveLength(0)
    })
  })

  describe('with providers.allowPrivateNetworks', () => {
    it('sends a member’s base URL no key Hangar holds: neither the operator’s nor another user’s', async () => {
      const mallory = await addMember(open, 'mallory-open')
      expect((await putProvider(open, mallory.pat, 'anthropic', { baseUrl: capture.url })).status).toBe(200)
      capture.enqueue(reply().text('captured'), reply().text('captured again'))
      expect((await askAnthropic(open, mallory.user.id)).status).toBe(200)
      // The agent's own auth (its own tool, `hangar env`) passes; nothing Hangar holds is added.
      expect((await askAnthropic(open, mallory.user.id, { clientKey: 'client-own-key' })).status).toBe(200)
      expect(capture.requests).toHaveLength(2)
      expect(capture.requests[0]!.headers['x-api-key']).toBeUndefined()
      expect(capture.requests[1]!.headers['x-api-key']).toBe('client-own-key')
      for (const key of ALL_HELD_KEYS) expect(everything(capture.requests)).not.toContain(key)
      expect(operator.requests).toHaveLength(0)
    })

    it('sends a run’s agent auth (the operator’s CLI login on this host) nowhere near a member’s base URL', async () => {
      const mallory = await addMember(open, 'mallory-run')
      await putProvider(open, mallory.pat, 'anthropic', { baseUrl: capture.url })
      capture.enqueue(reply().text('captured'))
      const asked = await askAnthropic(open, mallory.user.id, {
        runId: 'run_fake_member_run',
        clientKey: 'sk-ant-oat-operator-login-token',
      })
      expect(asked.status).toBe(200)
      expect(capture.requests).toHaveLength(1)
      expect(everything(capture.requests)).not.toContain('sk-ant-oat-operator-login-token')
      expect(capture.requests[0]!.headers['x-api-key']).toBeUndefined()
    })

    it('sends a member’s own vaulted key to the member’s own base URL', async () => {
      const dave = await addMember(open, 'dave')
      const saved = await putProvider(open, dave.pat, 'anthropic', {
        baseUrl: capture.url,
        apiKey: MEMBER_KEY,
      })
      expect(saved.status).toBe(200)
      capture.enqueue(reply().text('yours'))
      expect((await askAnthropic(open, dave.user.id)).status).toBe(200)
      expect(capture.requests).toHaveLength(1)
      expect(capture.requests[0]!.headers['x-api-key']).toBe(MEMBER_KEY)
      for (const key of ALL_HELD_KEYS) expect(everything(capture.requests)).not.toContain(key)
    })

    it('sends a member’s vaulted key without a base URL of theirs to the operator’s configured endpoint', async () => {
      const erin = await addMember(open, 'erin')
      await putProvider(open, erin.pat, 'anthropic', { apiKey: MEMBER_KEY })
      operator.enqueue(reply().text('ok'))
      expect((await askAnthropic(open, erin.user.id)).status).toBe(200)
      expect(operator.requests).toHaveLength(1)
      expect(operator.requests[0]!.headers['x-api-key']).toBe(MEMBER_KEY)
      expect(capture.requests).toHaveLength(0)
    })

    it('still refuses a link-local or metadata address', async () => {
      const mallory = await addMember(open, 'mallory-metadata')
      const saved = await putProvider(open, mallory.pat, 'anthropic', {
        baseUrl: 'http://169.254.169.254/latest',
      })
      expect(saved.status).toBe(400)
      expect(saved.json.error?.message).toMatch(/metadata/)
    })
  })

  describe('a built-in profile made in the UI with a custom provider (item 11)', () => {
    beforeAll(async () => {
      const { runtime } = strict
      await runtime.credentials.put('system', runtime.owner.id, 'openai', { apiKey: OWNER_OPENAI_VAULT_KEY })
      const profiles = runtime.store.forUser(runtime.owner.id).profiles
      await profiles.put('labbot', { adapter: 'builtin', provider: 'mylab', model: 'lab-1' })
      await profiles.put('ghostbot', { adapter: 'builtin', provider: 'nowhere', model: 'ghost-1' })
      runtime.scheduler.start()
    })

    async function chat(profile: string) {
      const { runtime } = strict
      const { endpoints } = await runtime.modelProxy.mintForProfile('system', runtime.owner.id, profile)
      const response = await fetch(`${endpoints.openai}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${STAND_IN_KEY}` },
        body: JSON.stringify({ model: 'lab-1', messages: [{ role: 'user', content: 'hi' }] }),
      })
      return { status: response.status, text: await response.text() }
    }

    it('sends its traffic to that provider’s configured base URL with that provider’s key', async () => {
      lab.enqueue(reply().text('from the lab'))
      const answered = await chat('labbot')
      expect(answered.status, answered.text).toBe(200)
      expect(answered.text).toContain('from the lab')
      expect(lab.requests).toHaveLength(1)
      expect(lab.requests[0]!.path).toBe('/v1/chat/completions')
      expect(lab.requests[0]!.headers.authorization).toBe(`Bearer ${LAB_KEY}`)
      expect(operator.requests).toHaveLength(0)
    })

    // Found by npm run fuzz: the built-in agent's token on another family's path was a 502, as if the
    // provider were down; it is the client's wrong path, and nothing is called.
    it('answers another family’s path with 404 in that family’s shape, calling nothing', async () => {
      const { runtime } = strict
      const { endpoints } = await runtime.modelProxy.mintForProfile('system', runtime.owner.id, 'labbot')
      const response = await fetch(`${endpoints.anthropic}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'lab-1', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
      })
      expect(response.status).toBe(404)
      expect(await response.json()).toMatchObject({
        type: 'error',
        error: { type: 'not_found_error', message: expect.stringContaining('not /anthropic') },
      })
      expect(operator.requests).toHaveLength(0)
      expect(lab.requests).toHaveLength(0)
    })

    it('refuses clearly when the provider is unknown, calling nothing', async () => {
      const refused = await chat('ghostbot')
      expect(refused.status).toBe(502)
      expect(JSON.parse(refused.text)).toMatchObject({ error: { code: 'upstream_unreachable' } })
      expect(refused.text).toContain('the model provider \\"nowhere\\" has no base URL')
      expect(operator.requests).toHaveLength(0)
      expect(lab.requests).toHaveLength(0)
    })

    it('runs the built-in agent with that provider end to end', async () => {
      const { runtime } = strict
      lab.enqueue(reply().text('lab run done'))
      const run = await runtime.submitRun(runtime.owner.id, {
        agent: 'labbot',
        prompt: 'Just talk. NOTOOL',
        cwd: runtime.projectDir,
      })
      const ended = await waitForEnd(runtime, runtime.owner.id, run.id)
      expect(ended.status, ended.reason ?? '').toBe('succeeded')
      expect(lab.requests.length).toBeGreaterThan(0)
      expect(lab.requests.every((request) => request.headers.authorization === `Bearer ${LAB_KEY}`)).toBe(
        true,
      )
      expect(operator.requests).toHaveLength(0)
    })
  })
})

async function waitForEnd(runtime: Runtime, userId: string, runId: string) {
  const ended = ['succeeded', 'failed', 'cancelled', 'interrupted', 'awaiting_confirmation']
  const deadline = Date.now() + 60_000
  for (;;) {
    const run = await runtime.store.forUser(userId).runs.get(runId)
    if (run && ended.includes(run.status)) return run
    if (Date.now() > deadline) throw new Error(`run ${runId} is still ${run?.status}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
