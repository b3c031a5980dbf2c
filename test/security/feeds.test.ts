// Issue 17 item 4: feeds as a confused deputy. A member's profile (POST/PUT /api/profiles) could declare
// feeds on the operator's services with any path (`/admin/export?all=1`, `/../../etc/passwd`) and received
// the answer, fetched with the operator's bearer, in their agent's context. Now only hangar.yaml's feeds may
// use any path of a service; a profile made in the UI or API may only use paths under the service's
// `userFeedPaths`, and dot segments or encoded dots/slashes are refused in every feed path. A real runtime
// on loopback serves the API and the proxy; a capture "service" records each request and its Authorization;
// the mock model records what the agent's model would have seen.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/core/config.js'
import { AppError } from '../../src/core/errors.js'
import { createRuntime, type Runtime } from '../../src/main.js'
import type { User } from '../../src/store/repositories/users-repository.js'
import { type MockModelServer, reply, startMockModelServer } from '../fixtures/mock-model-server.js'
import { createApiClient } from '../helpers/api-client.js'
import { makeTempDir } from '../helpers/store-engines.js'

const OPERATOR_BEARER = 'svc-operator-bearer-0123456789abcdef'
const HOSTILE_PATHS = ['/admin/export?all=1', '/../../etc/passwd', '/%2e%2e/x']

interface Captured {
  url: string
  authorization: string | undefined
}

interface ErrorBody {
  error: { code: string; message: string; details: { feeds?: { name: string; reason: string }[] } | null }
}

describe('feeds of profiles made in the UI or API', () => {
  let root: string
  let service: Server
  let serviceUrl: string
  const captured: Captured[] = []
  let mock: MockModelServer
  let runtime: Runtime
  let daemon: { url: string; close(): Promise<void> }
  let member: User
  let memberPat: string
  const { api } = createApiClient(() => ({ url: daemon.url, token: memberPat }))

  beforeAll(async () => {
    root = await makeTempDir('hangar-security-feeds-')
    service = createServer((request, response) => {
      captured.push({ url: request.url ?? '', authorization: request.headers.authorization })
      response.writeHead(200, { 'content-type': 'text/plain' }).end(`served ${request.url}`)
    })
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve))
    serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`
    mock = await startMockModelServer()
    runtime = await createRuntime({
      dataDir: path.join(root, 'data'),
      // The data dir is never inside the project (a run there could read its keys).
      projectDir: await mkdirProject(root),
      config: parseConfig(
        [
          'services:',
          `  market: { url: "${serviceUrl}", auth: { bearerEnv: MARKET_TOKEN }, userFeedPaths: [/api/v1] }`,
          `  closed: { url: "${serviceUrl}/closed", auth: { bearerEnv: MARKET_TOKEN } }`,
          'agents:',
          '  operator-export:',
          '    adapter: claude-code',
          '    feeds:',
          '      - { name: export, source: market, path: "/admin/export?all=1", ttl: 300 }',
        ].join('\n'),
      ),
      env: { MARKET_TOKEN: OPERATOR_BEARER, ANTHROPIC_BASE_URL: mock.url },
      logLevel: 'silent',
    })
    daemon = await runtime.listen({ host: '127.0.0.1', port: 0 })
    member = await runtime.store.users.create({ name: 'mallory', role: 'member' })
    memberPat = (await runtime.auth.createToken('system', member.id, { name: 'api' })).token
  })

  afterAll(async () => {
    await daemon?.close()
    await runtime?.close()
    await mock?.close()
    service?.closeAllConnections()
    service?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  beforeEach(() => {
    captured.length = 0
    mock.reset()
  })

  const feed = (feedPath: string, source = 'market') => ({ name: 'loot', source, path: feedPath, ttl: 60 })

  /** One model request through the proxy as the agent of `profile` would send it; the model's view of it. */
  async function askThroughProxy(user: User, profile: string): Promise<string> {
    const { endpoints } = await runtime.modelProxy.mintForProfile('system', user.id, profile)
    mock.enqueue(reply().text('Noted.'))
    const response = await fetch(`${endpoints.anthropic}/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': 'member-own-key',
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify({
        model: 'claude-sonnet-4-6',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Any news?' }],
      }),
    })
    expect(response.status).toBe(200)
    await response.text()
    return JSON.stringify(mock.requests.at(-1)?.body)
  }

  it.each(HOSTILE_PATHS)(
    "refuses a member's profile with a feed on %s at creation and update (400)",
    async (hostile) => {
      const created = await api<ErrorBody>('POST', '/api/profiles', {
        name: 'evil',
        definition: { adapter: 'claude-code', feeds: [feed(hostile)] },
      })
      expect(created.status).toBe(400)
      expect(created.json.error.code).toBe('invalid_request')
      // One line naming the feed, the profile and what the service allows.
      expect(created.json.error.message).toMatch(
        /^feed "loot" \(#1\) of profile "evil": .*allowed: \/api\/v1/,
      )
      expect(created.json.error.message).not.toContain('\n')
      expect(created.json.error.details?.feeds?.map((refused) => refused.name)).toEqual(['loot'])

      const updated = await api<ErrorBody>('PUT', '/api/profiles/evil', {
        adapter: 'claude-code',
        feeds: [feed('/api/v1/summary'), feed(hostile)],
      })
      expect(updated.status).toBe(400)
      expect(updated.json.error.message).toMatch(/^feed "loot" \(#2\) of profile "evil": /)
      expect((await api('GET', '/api/profiles/evil')).status).toBe(404)
      expect(captured).toEqual([])
    },
  )

  it('refuses every path of a service without userFeedPaths, and a path that only shares a prefix', async () => {
    for (const [feedPath, source] of [
      ['/api/v1/summary', 'closed'],
      ['/api/v1admin', 'market'],
    ] as const) {
      const response = await api<ErrorBody>('POST', '/api/profiles', {
        name: 'evil',
        definition: { adapter: 'claude-code', feeds: [feed(feedPath, source)] },
      })
      expect(response.status).toBe(400)
      expect(response.json.error.message).toContain(`path "${feedPath}"`)
    }
  })

  it("never sends the operator's bearer for a member profile planted in the store", async () => {
    // As if written around the API: the proxy reads stored profiles at request time.
    await runtime.store.forUser(member.id).profiles.put('planted', {
      adapter: 'claude-code',
      feeds: [
        ...HOSTILE_PATHS.map((hostile, index) => ({ ...feed(hostile), name: `hostile-${index}` })),
        { ...feed('/api/v1admin'), name: 'lookalike' },
        { ...feed('/api/v1/summary', 'closed'), name: 'closed' },
        // The one feed the operator allows: proof that this request did fetch feeds.
        { ...feed('/api/v1/summary'), name: 'allowed' },
      ],
    })
    const seen = await askThroughProxy(member, 'planted')
    expect(captured).toEqual([{ url: '/api/v1/summary', authorization: `Bearer ${OPERATOR_BEARER}` }])
    expect(seen).toContain('served /api/v1/summary')
    expect(seen).toMatch(/BEGIN FEED: hostile-0 \(from market, unavailable\)/)
    expect(seen).not.toContain(OPERATOR_BEARER)

    const listed = await api<{ feeds: { name: string; refused?: string }[] }>(
      'GET',
      '/api/profiles/planted/feeds',
    )
    expect(listed.json.feeds.map((entry) => [entry.name, entry.refused !== undefined])).toEqual([
      ['hostile-0', true],
      ['hostile-1', true],
      ['hostile-2', true],
      ['lookalike', true],
      ['closed', true],
      ['allowed', false],
    ])
  })

  it("lets a member's feed under userFeedPaths through, with the service's credentials", async () => {
    const created = await api('POST', '/api/profiles', {
      name: 'watcher',
      definition: { adapter: 'claude-code', feeds: [{ source: 'market', path: '/api/v1/summary', ttl: 60 }] },
    })
    expect(created.status).toBe(201)
    const seen = await askThroughProxy(member, 'watcher')
    expect(captured).toEqual([{ url: '/api/v1/summary', authorization: `Bearer ${OPERATOR_BEARER}` }])
    expect(seen).toMatch(
      /BEGIN FEED: summary \(from market, refreshed [^)]*\) ---\\nserved \/api\/v1\/summary/,
    )
  })

  it("lets the operator's own hangar.yaml feed use any safe path of the service", async () => {
    const seen = await askThroughProxy(runtime.owner, 'operator-export')
    expect(captured).toEqual([{ url: '/admin/export?all=1', authorization: `Bearer ${OPERATOR_BEARER}` }])
    expect(seen).toContain('served /admin/export?all=1')
  })

  it('refuses dot segments and encoded dots in hangar.yaml, naming file, line and key path', () => {
    const text = [
      'services:',
      '  market: { url: "http://127.0.0.1:1" }',
      'agents:',
      '  reviewer:',
      '    adapter: claude-code',
      '    feeds:',
      '      - { source: market, path: "/api/%2E%2E/admin", ttl: 60 }',
    ].join('\n')
    let thrown: unknown
    try {
      parseConfig(text, '/srv/project/hangar.yaml')
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(AppError)
    expect((thrown as AppError).code).toBe('config_invalid')
    expect((thrown as AppError).message).toMatch(
      /^\/srv\/project\/hangar\.yaml:7:\d+: agents\.reviewer\.feeds\[0\]\.path: .*encoded character "%2E"/,
    )
  })
})

async function mkdirProject(root: string): Promise<string> {
  const project = path.join(root, 'project')
  await mkdir(project, { recursive: true })
  return project
}
