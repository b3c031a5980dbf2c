// Attacks on the LLM proxy of a real daemon (`hangar up`, SQLite) in front of the mock model (issue 17):
// - item 5: a base URL pointing back at the daemon's own proxy looped (707 log rows, 256 sockets held);
// - item 6: after a budget was spent, a body in an unknown coding (`compress`, `identity, identity`), an
//   empty POST or another path still reached the model;
// - item 10: gzip bombs inflated on the event loop; a stalled upstream kept a run `running` forever; a
//   revoked proxy token served more requests.
import { execFileSync } from 'node:child_process'
import { readdirSync, readlinkSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { createServer } from 'node:net'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createAuthService } from '../../src/store/auth-service.js'
import { openStore } from '../../src/store/store.js'
import { type MockModelServer, reply, startMockModelServer } from '../fixtures/mock-model-server.js'
import { createApiClient } from '../helpers/api-client.js'
import { cleanEnv, type RunningDaemon, runHangar, startDaemon } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

const IDLE_TIMEOUT_MS = 3000
const BODY_LIMIT_MB = 16

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** The TCP sockets a process holds open (listeners included), from /proc. */
function openSockets(pid: number): number {
  let count = 0
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) count++
    } catch {
      // Closed while we listed it.
    }
  }
  return count
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

interface EventJson {
  type: string
  code?: string
  message?: string
}

describe('proxy hardening', () => {
  let mock: MockModelServer
  let root: string
  let dataDir: string
  let project: string
  let env: NodeJS.ProcessEnv
  let daemon: RunningDaemon
  let session: string
  let token: string
  /** `hangar env` endpoints of a profile with no budget. */
  let endpoints: Record<'anthropic' | 'openai' | 'gemini', string>

  const { api, waitForStatus } = createApiClient(() => ({ url: daemon.url, token }))

  async function mint(profile: string) {
    const minted = await runHangar(['env', profile, '--json'], { env, cwd: project })
    expect(minted.code, minted.stderr).toBe(0)
    return JSON.parse(minted.stdout) as { token: string; endpoints: typeof endpoints }
  }

  const messages = (text: string) =>
    JSON.stringify({
      model: 'claude-sonnet-4-6',
      max_tokens: 50,
      messages: [{ role: 'user', content: text }],
    })

  beforeAll(async () => {
    mock = await startMockModelServer()
    root = await makeTempDir('hangar-proxy-hardening-')
    dataDir = path.join(root, 'data')
    project = path.join(root, 'project')
    await mkdir(project)
    execFileSync('git', ['init', '-q'], { cwd: project })
    // The looping profile's upstream is the daemon's own proxy, with a live token of its own: the token
    // is minted in the store before the daemon starts, on the port it will listen on.
    const port = await freePort()
    const store = await openStore({ dataDir })
    let loopToken: string
    try {
      const owner = await store.users.create({ name: 'owner', role: 'owner' })
      ;({ token: loopToken } = await createAuthService({ store }).createToken('system', owner.id, {
        name: 'loop',
        kind: 'proxy',
        profile: 'looper',
      }))
    } finally {
      await store.close()
    }
    await writeFile(
      path.join(project, 'hangar.yaml'),
      [
        'providers:',
        '  allowPrivateNetworks: true',
        `  gemini: { baseUrl: "http://127.0.0.1:${port}/proxy/${loopToken}/gemini" }`,
        'agents:',
        '  looper: { adapter: gemini }',
        '  reviewer: { adapter: claude-code }',
        '  spender: { adapter: claude-code, budget: { usd: 0.000001, window: 1d } }',
        '  stalled: { adapter: builtin, provider: anthropic }',
        `proxy: { bodyLimitMb: ${BODY_LIMIT_MB}, upstreamIdleTimeoutMs: ${IDLE_TIMEOUT_MS} }`,
        '',
      ].join('\n'),
    )
    env = cleanEnv({
      PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: root,
      HANGAR_DATA_DIR: dataDir,
      ANTHROPIC_API_KEY: 'sk-ant-test-hardening-0123456789',
      ANTHROPIC_BASE_URL: mock.url,
      // The loop test counts the proxy's per-request lines, which are at debug.
      HANGAR_LOG_LEVEL: 'debug',
    })
    daemon = await startDaemon(['--data-dir', dataDir, '--port', String(port)], { env, cwd: project })
    expect(daemon.url).toBe(`http://127.0.0.1:${port}`)
    session = (JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string })
      .token
    const created = await fetch(`${daemon.url}/api/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'curl' }),
    })
    token = ((await created.json()) as { token: string }).token
    ;({ endpoints } = await mint('reviewer'))
  })

  afterAll(async () => {
    await daemon?.stop()
    await mock?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  beforeEach(() => mock.reset())

  // Issue 17 item 5: the loop ends at its first repeat, with the family's error, and nothing stays open.
  it('refuses a request that comes back through its own proxy at the first repeat, leaving no socket open', async () => {
    const pid = daemon.child.pid!
    const baseline = openSockets(pid)
    const logged = () =>
      daemon
        .stderr()
        .split('\n')
        .filter((line) => /"msg":"(proxied|refused a proxy loop)"/.test(line))
    const before = logged().length
    const { endpoints: looper } = await mint('looper')
    const response = await fetch(`${looper.gemini}/v1beta/models/gemini-2.5-pro:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'loop' }] }] }),
      signal: AbortSignal.timeout(20_000),
    })
    expect(response.status).toBe(508)
    const body = (await response.json()) as { error: { status: string; message: string } }
    expect(body.error.status).toBe('FAILED_PRECONDITION')
    expect(body.error.message).toMatch(/came back to the Hangar proxy that forwarded it/)
    expect(mock.requests).toHaveLength(0)
    // One refusal, logged once; the outer request's own row: a bounded number, not hundreds.
    await until(() => logged().length - before >= 2, 'the outer request to be logged')
    const rows = logged().slice(before)
    expect(rows.filter((line) => line.includes('refused a proxy loop'))).toHaveLength(1)
    expect(rows.length).toBeLessThanOrEqual(3)
    // The hop to itself and its server side close (keep-alive ends on its own); nothing is left over.
    await until(() => openSockets(pid) <= baseline, `sockets back to ${baseline}`)
  })

  // Issue 17 item 5: a loop through several Hangars (never back to this one) ends too.
  it('marks its upstream requests with its hop and refuses a chain of 8 hops', async () => {
    mock.enqueue(reply().text('ok'))
    const first = await fetch(`${endpoints.anthropic}/v1/messages`, {
      method: 'POST',
      headers: { 'x-hangar-hop': 'other-hangar' },
      body: messages('hi'),
    })
    expect(first.status).toBe(200)
    await first.text()
    expect(mock.requests[0]!.headers['x-hangar-hop']).toMatch(/^other-hangar, [0-9a-f-]{36}$/)
    const chain = Array.from({ length: 8 }, (_, index) => `hangar-${index}`).join(', ')
    const refused = await fetch(`${endpoints.anthropic}/v1/messages`, {
      method: 'POST',
      headers: { 'x-hangar-hop': chain },
      body: messages('hi'),
    })
    expect(refused.status).toBe(508)
    expect(await refused.json()).toMatchObject({
      type: 'error',
      error: { type: 'api_error', message: expect.stringMatching(/passed through 8 Hangar proxies/) },
    })
    expect(mock.requests).toHaveLength(1)
  })

  // Issue 17 item 6: once the budget is spent, nothing reaches the model, whatever the method, path or body.
  it('refuses every request of a spent budget before any upstream call', async () => {
    const { endpoints: spender } = await mint('spender')
    mock.enqueue(reply().text('costly').usage({ input: 1000, output: 1000 }))
    const spend = await fetch(`${spender.anthropic}/v1/messages`, { method: 'POST', body: messages('spend') })
    expect(spend.status).toBe(200)
    await spend.text()
    mock.reset()
    const variants: [string, RequestInit & { path: string }][] = [
      [
        'compress',
        { path: '/v1/messages', method: 'POST', headers: { 'content-encoding': 'compress' }, body: 'x' },
      ],
      [
        'identity, identity',
        {
          path: '/v1/messages',
          method: 'POST',
          headers: { 'content-encoding': 'identity, identity' },
          body: messages('x'),
        },
      ],
      ['zstd', { path: '/v1/messages', method: 'POST', headers: { 'content-encoding': 'zstd' }, body: 'x' }],
      ['empty POST', { path: '/v1/messages', method: 'POST' }],
      ['count_tokens', { path: '/v1/messages/count_tokens', method: 'POST', body: messages('x') }],
      ['GET models', { path: '/v1/models', method: 'GET' }],
      ['DELETE', { path: '/v1/files/file_1', method: 'DELETE' }],
    ]
    for (const [name, { path: route, ...init }] of variants) {
      const response = await fetch(`${spender.anthropic}${route}`, init)
      expect(response.status, name).toBe(403)
      expect(await response.json(), name).toMatchObject({
        type: 'error',
        error: { type: 'permission_error', message: expect.stringMatching(/budget of agent "spender"/) },
      })
    }
    expect(mock.requests).toHaveLength(0)
  })

  // Found while merging issue 17: `..` (plain or encoded) in a proxied path would climb above the path of
  // the operator's base URL with the operator's key. Sent raw: fetch would fold the segments itself.
  // Each path is sent twice: the proxy remembers what a path is (proxy-handler's routeOf), and a path it
  // refused once must be refused again from that memory.
  it('refuses dot segments, encoded dots and slashes in a proxied path, calling nothing', async () => {
    const prefix = new URL(endpoints.anthropic).pathname
    const hostile = ['/v1/../../admin', '/%2e%2e/%2e%2e/admin', '/v1/..%2f..%2fadmin', '/v1\\..\\admin']
    for (const rest of [...hostile, ...hostile]) {
      const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const outgoing = httpRequest(
          {
            host: '127.0.0.1',
            port: new URL(daemon.url).port,
            method: 'POST',
            path: `${prefix}${rest}`,
            headers: { 'content-type': 'application/json' },
          },
          (response) => {
            let text = ''
            response.on('data', (chunk: Buffer) => (text += chunk.toString()))
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }))
          },
        )
        outgoing.on('error', reject)
        outgoing.end(messages('climb'))
      })
      expect(status, rest).toBe(404)
      expect(JSON.parse(body), rest).toMatchObject({ type: 'error', error: { type: 'not_found_error' } })
    }
    expect(mock.requests).toHaveLength(0)
  })

  it('refuses a proxy path without a known family, its token unread, calling nothing', async () => {
    const prefix = new URL(endpoints.anthropic).pathname
    const token = prefix.split('/')[2]!
    for (const path of [
      `/proxy/${token}`,
      `/proxy/${token}/`,
      `/proxy/${token}?family=anthropic`,
      `/proxy/${token}/nope/v1/messages`,
      `/proxy/${token}/anthropicx/v1/messages`,
      `/proxy//anthropic`,
    ]) {
      const response = await fetch(`${daemon.url}${path}`, { method: 'POST', body: messages('lost') })
      const body = (await response.json()) as { error?: { message?: string } }
      expect(response.status, path).toBe(path === '/proxy//anthropic' ? 401 : 404)
      if (response.status === 404) expect(body.error?.message, path).toMatch(/^unknown model family/)
      expect(JSON.stringify(body), path).not.toContain(token)
    }
    expect(mock.requests).toHaveLength(0)
  })

  // Issue 17 item 6: a coding the proxy cannot read is refused, not passed on unread.
  it('answers an unknown content coding with 415 in the family shape, calling nothing', async () => {
    for (const coding of ['compress', 'zstd', 'gzip, compress']) {
      const response = await fetch(`${endpoints.openai}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': coding },
        body: 'x',
      })
      expect(response.status, coding).toBe(415)
      expect(await response.json(), coding).toMatchObject({
        error: { code: 'unsupported_media_type', message: expect.stringContaining(`"${coding}"`) },
      })
    }
    expect(mock.requests).toHaveLength(0)
  })

  // Issue 17 item 10: ten bombs at once get 413 while the daemon keeps answering.
  it('refuses gzip bombs with 413 off the event loop, answering /api/health meanwhile', async () => {
    const bomb = gzipSync(Buffer.alloc(8 * BODY_LIMIT_MB * 1024 * 1024))
    let firstSent = 0
    let lastAnswered = 0
    const healthAnswers: number[] = []
    let polling = true
    const poller = (async () => {
      while (polling) {
        const health = await fetch(`${daemon.url}/api/health`)
        expect(health.status).toBe(200)
        await health.arrayBuffer()
        healthAnswers.push(performance.now())
      }
    })()
    await until(() => healthAnswers.length > 0, 'the first health answer')
    firstSent = performance.now()
    const answers = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const response = await fetch(`${endpoints.anthropic}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
          body: bomb,
        })
        const body = (await response.json()) as { error: { type: string; message: string } }
        lastAnswered = Math.max(lastAnswered, performance.now())
        return { status: response.status, body }
      }),
    )
    polling = false
    await poller
    for (const answer of answers) {
      expect(answer.status).toBe(413)
      expect(answer.body.error).toMatchObject({
        type: 'request_too_large',
        message: expect.stringMatching(/\(decompressed\) is larger than the proxy's limit of 16 MB/),
      })
    }
    expect(mock.requests).toHaveLength(0)
    expect(healthAnswers.some((at) => at > firstSent && at < lastAnswered)).toBe(true)
  })

  // Issue 17 item 10: a stalled model fails the run with a readable error instead of leaving it running.
  it.each([
    ['sends nothing', reply().text('never').hang('before-headers')],
    ['stops mid-stream', reply().text('partial answer').hang('mid-stream')],
  ])('fails a run whose model %s after the idle timeout', async (_name, stalled) => {
    mock.enqueue(stalled)
    const submitted = await api<{ id: string }>('POST', '/api/runs', {
      agent: 'stalled',
      prompt: 'hello',
      cwd: project,
    })
    expect(submitted.status).toBe(201)
    const ended = await waitForStatus(submitted.json.id, undefined, 60_000)
    expect(ended.status).toBe('failed')
    expect(mock.requests.length).toBeGreaterThan(0)
    const events = await fetch(`${daemon.url}/api/runs/${submitted.json.id}/events`, {
      headers: { authorization: `Bearer ${token}` },
    })
    const stored = (await events.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as EventJson)
    expect(stored).toContainEqual(
      expect.objectContaining({
        type: 'error',
        code: 'timeout',
        message: `the model provider at ${new URL(mock.url).host} sent nothing for ${IDLE_TIMEOUT_MS / 1000} s (proxy.upstreamIdleTimeoutMs in hangar.yaml)`,
      }),
    )
    expect(stored.at(-1)).toMatchObject({ type: 'run-end', status: 'failed' })
  })

  // Issue 17 item 10: revocation holds from the very next request (no cached token → run).
  it('refuses a revoked proxy token on the very next request', async () => {
    const minted = await mint('reviewer')
    const ask = () =>
      fetch(`${minted.endpoints.anthropic}/v1/messages`, { method: 'POST', body: messages('hello') })
    mock.enqueue(reply().text('ok'))
    const first = await ask()
    expect(first.status).toBe(200)
    await first.text()
    const listed = await fetch(`${daemon.url}/api/tokens`, {
      headers: { authorization: `Bearer ${session}` },
    })
    const tokens = (await listed.json()) as { id: string; name: string; revokedAt: string | null }[]
    const id = minted.token.split('_')[1]!
    expect(tokens.find((entry) => entry.id === id)).toMatchObject({ name: 'env reviewer' })
    const revoked = await fetch(`${daemon.url}/api/tokens/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${session}` },
    })
    expect(revoked.status).toBe(200)
    const next = await ask()
    expect(next.status).toBe(401)
    expect(await next.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } })
    expect(mock.requests).toHaveLength(1)
  })
})
