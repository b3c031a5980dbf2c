// The LLM proxy served by a real runtime (SQLite store, loopback listener), in front of the mock model for
// Anthropic and OpenAI and of a hand-written upstream for Gemini, where the test controls every chunk.
// A small feed server on loopback supplies the feed.
import { createServer, type IncomingMessage, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { gzipSync, gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/core/config.js'
import { createRuntime, type Runtime } from '../../src/main.js'
import { STAND_IN_KEY } from '../../src/proxy/forward-upstream.js'
import {
  httpError,
  type MockModelServer,
  reply,
  startMockModelServer,
} from '../fixtures/mock-model-server.js'

const REAL_KEY = 'sk-ant-real-key-the-agent-never-sees'
const OPENAI_KEY = 'sk-openai-real-key'

interface Listening {
  server: Server
  url: string
}

async function listenOn(server: Server): Promise<Listening> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

/** A Gemini-like upstream whose streams the test drives chunk by chunk. */
function scriptedUpstream() {
  const seen: { path: string; headers: IncomingMessage['headers']; body: string }[] = []
  let onRequest: (req: IncomingMessage, res: import('node:http').ServerResponse) => void = (_req, res) =>
    res.end('{}')
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      seen.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
      onRequest(req, res)
    })
  })
  return {
    server,
    seen,
    handle(handler: typeof onRequest) {
      onRequest = handler
    },
  }
}

/** A plain node request (no transparent decompression, unlike fetch), reading chunks as they come. */
function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: Buffer | string },
) {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'POST', headers: options.headers }, resolve)
    req.once('error', reject)
    req.end(options.body)
  })
}

async function bodyOf(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of response) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

function nextChunk(response: IncomingMessage): Promise<string> {
  return new Promise((resolve) => response.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8'))))
}

describe('LLM proxy', () => {
  let mock: MockModelServer
  let feed: Listening
  let feedHits = 0
  const feedBody = 'BTC 97000, ETH 3400'
  let gemini: ReturnType<typeof scriptedUpstream> & Partial<Listening>
  let root: string
  let runtime: Runtime
  let proxy: { url: string; close(): Promise<void> }
  let endpoints: Record<'anthropic' | 'openai' | 'gemini', string>

  beforeAll(async () => {
    mock = await startMockModelServer()
    feed = await listenOn(
      createServer((_req, res) => {
        feedHits++
        res.writeHead(200, { 'content-type': 'text/plain' })
        res.end(feedBody)
      }),
    )
    gemini = scriptedUpstream()
    Object.assign(gemini, await listenOn(gemini.server))
    root = await mkdtemp(path.join(os.tmpdir(), 'hangar-proxy-'))
    await mkdir(path.join(root, 'project'))
    const config = parseConfig(
      [
        'services:',
        `  market: { url: "${feed.url}", userFeedPaths: [/api/prices] }`,
        'agents:',
        '  reviewer:',
        '    adapter: claude-code',
        '    feeds:',
        '      - { source: market, path: /api/summary, ttl: 300 }',
        '  spender: { adapter: codex, budget: { usd: 0.000001, window: 1d } }',
        'proxy: { bodyLimitMb: 1 }',
      ].join('\n'),
    )
    runtime = await createRuntime({
      dataDir: path.join(root, 'data'),
      config,
      // Beside the data dir, never around it: a data dir inside the project is refused.
      projectDir: path.join(root, 'project'),
      env: {
        ANTHROPIC_BASE_URL: mock.url,
        ANTHROPIC_API_KEY: REAL_KEY,
        OPENAI_BASE_URL: `${mock.url}/v1`,
        OPENAI_API_KEY: OPENAI_KEY,
        GOOGLE_GEMINI_BASE_URL: gemini.url!,
      },
      logLevel: 'silent',
    })
    proxy = await runtime.serveProxy()
    ;({ endpoints } = await runtime.modelProxy.mintForProfile('system', runtime.owner.id, 'reviewer'))
  })

  afterAll(async () => {
    await proxy?.close()
    await runtime?.close()
    await mock?.close()
    feed?.server.close()
    gemini?.server.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  beforeEach(() => {
    mock.reset()
    feedHits = 0
  })

  const messages = (text: string) => ({
    model: 'claude-sonnet-4-6',
    max_tokens: 100,
    system: [{ type: 'text', text: 'You review code.', cache_control: { type: 'ephemeral' } }],
    messages: [{ role: 'user', content: text }],
    metadata: { user_id: 'BIG' },
  })
  // A number no float can hold: it must reach the model as the client wrote it.
  const withBigInteger = (body: string) => body.replace('"BIG"', '12345678901234567890')

  it('answers an unknown token with 401 in the family shape, calling nothing', async () => {
    const bad = endpoints.anthropic.replace(/hgr_[^/]+/, 'hgr_nottherighttoken_000000000000000000')
    const response = await fetch(`${bad}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify(messages('hi')),
    })
    expect(response.status).toBe(401)
    expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } })
    expect(mock.requests).toHaveLength(0)
    expect(feedHits).toBe(0)
  })

  it('serves nothing but the proxy on the listener of hangar run, answering other paths in the API envelope', async () => {
    const response = await fetch(`${proxy.url}/api/health`)
    expect(response.status).toBe(404)
    expect(await response.json()).toEqual({
      error: { code: 'not_found', message: 'no route GET /api/health', retryable: false, details: null },
    })
  })

  it('answers malformed JSON with 400, calling neither the model nor a feed', async () => {
    const response = await fetch(`${endpoints.openai}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model": "gpt-5", "messages": [',
    })
    expect(response.status).toBe(400)
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /not valid JSON/,
    )
    expect(mock.requests).toHaveLength(0)
    expect(feedHits).toBe(0)
  })

  it('answers a body over the limit with a JSON 413', async () => {
    const huge = JSON.stringify(messages('x'.repeat(1024 * 1024 + 10)))
    const response = await fetch(`${endpoints.anthropic}/v1/messages`, { method: 'POST', body: huge })
    expect(response.status).toBe(413)
    expect(await response.json()).toMatchObject({ error: { type: 'request_too_large' } })
    expect(mock.requests).toHaveLength(0)
  })

  it('injects the feed after the last user turn, swaps in the held key, and keeps every other byte', async () => {
    mock.enqueue(reply().text('Looks fine.').usage({ input: 40, output: 5, cacheRead: 100, cacheWrite: 20 }))
    const body = withBigInteger(JSON.stringify(messages('Review this.')))
    const response = await fetch(`${endpoints.anthropic}/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': STAND_IN_KEY,
        'anthropic-version': '2023-06-01',
      },
      body,
    })
    expect(response.status).toBe(200)
    expect(((await response.json()) as { content: { text: string }[] }).content[0]!.text).toBe('Looks fine.')
    const upstream = mock.requests[0]!
    expect(upstream.headers['x-api-key']).toBe(REAL_KEY)
    expect(upstream.headers['anthropic-version']).toBe('2023-06-01')
    // Everything up to the end of the client's last message is unchanged, big integer included.
    const clientMessages = body.slice(0, body.indexOf(']', body.indexOf('"messages"')))
    expect(upstream.rawBody.startsWith(clientMessages)).toBe(true)
    expect(upstream.rawBody).toContain('12345678901234567890')
    const sent = upstream.body as { messages: { role: string; content: { text: string }[] }[] }
    expect(sent.messages).toHaveLength(2)
    expect(sent.messages[1]!.role).toBe('user')
    expect(sent.messages[1]!.content[0]!.text).toMatch(
      /^--- BEGIN FEED: summary \(from market, refreshed \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\) ---\nBTC 97000, ETH 3400\n--- END FEED: summary ---/,
    )
    expect(feedHits).toBe(1)
  })

  // A profile made in the UI or API is checked like hangar.yaml's; its feeds used to be ignored by the
  // proxy, which read only hangar.yaml's. (Its paths must be under the service's userFeedPaths.)
  it('injects the feeds of a profile the user made, read at request time', async () => {
    await runtime.store.forUser(runtime.owner.id).profiles.put('watcher', {
      adapter: 'claude-code',
      feeds: [{ name: 'prices', source: 'market', path: '/api/prices/{agent}', ttl: 300 }],
    })
    const minted = await runtime.modelProxy.mintForProfile('system', runtime.owner.id, 'watcher')
    mock.enqueue(reply().text('Noted.'))
    const response = await fetch(`${minted.endpoints.anthropic}/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': STAND_IN_KEY,
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify(messages('Any news?')),
    })
    expect(response.status).toBe(200)
    const sent = mock.requests[0]!.body as { messages: { content: { text: string }[] }[] }
    expect(sent.messages[1]!.content[0]!.text).toMatch(/^--- BEGIN FEED: prices \(from market, refreshed /)
    expect(await runtime.modelProxy.manifestFor('watcher', runtime.owner.id)).toEqual([
      expect.objectContaining({ name: 'prices', path: '/api/prices/watcher' }),
    ])
  })

  it('passes an upstream error through unchanged', async () => {
    mock.enqueue(httpError(529, 'Overloaded'))
    const direct = await fetch(`${endpoints.anthropic}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify(messages('again')),
    })
    expect(direct.status).toBe(529)
    expect(JSON.stringify(await direct.json())).toContain('Overloaded')
  })

  it('meters an OpenAI stream it asked usage for, without showing the client the extra chunk', async () => {
    mock.enqueue(reply().text('streamed answer').usage({ input: 30, output: 7, cacheRead: 10 }))
    const { token } = await runtime.modelProxy.mintForProfile('system', runtime.owner.id, 'codex')
    const base = endpoints.openai.replace(/hgr_[^/]+/, token)
    const response = await fetch(`${base}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${STAND_IN_KEY}` },
      body: JSON.stringify({ model: 'gpt-5', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    })
    const text = await response.text()
    expect(text).toContain('streamed answer')
    expect(text).not.toMatch(/"usage":\{/)
    const upstream = mock.requests[0]!
    expect(upstream.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`)
    expect((upstream.body as { stream_options?: unknown }).stream_options).toEqual({ include_usage: true })
    // The request log is written behind (within its flush interval): wait for the row.
    const spent = () =>
      runtime.store
        .forUser(runtime.owner.id)
        .proxyRequests.spentSince('codex', new Date(Date.now() - 60_000).toISOString())
    const deadline = Date.now() + 30_000
    while ((await spent()) === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10))
    expect(await spent()).toBeGreaterThan(0)
  })

  it('refuses a profile over its budget with a 403 in the family shape, without calling upstream', async () => {
    const { token } = await runtime.modelProxy.mintForProfile('system', runtime.owner.id, 'spender')
    const base = endpoints.openai.replace(/hgr_[^/]+/, token)
    const ask = () =>
      fetch(`${base}/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: 'gpt-5', messages: [{ role: 'user', content: 'spend' }] }),
      })
    mock.enqueue(reply().text('costly').usage({ input: 1000, output: 1000 }))
    expect((await ask()).status).toBe(200)
    const refused = await ask()
    expect(refused.status).toBe(403)
    expect(await refused.json()).toMatchObject({ error: { code: 'budget_exceeded' } })
    expect(mock.requests).toHaveLength(1)
  })

  it('passes a stream through chunk by chunk and cancels upstream when the client goes', async () => {
    let upstreamClosed!: () => void
    const closed = new Promise<void>((resolve) => (upstreamClosed = resolve))
    let sendMore!: () => void
    gemini.handle((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('data: {"candidates":[{"content":{"parts":[{"text":"first"}]}}]}\n\n')
      sendMore = () => res.write('data: {"candidates":[{"content":{"parts":[{"text":"second"}]}}]}\n\n')
      res.on('close', () => upstreamClosed())
      void req
    })
    const response = await rawRequest(
      `${endpoints.gemini}/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse`,
      {
        headers: { 'content-type': 'application/json', 'x-goog-api-key': 'client-key' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hello' }] }] }),
      },
    )
    // The first chunk arrives while the upstream has not sent the second: nothing is buffered.
    expect(await nextChunk(response)).toContain('"first"')
    sendMore()
    expect(await nextChunk(response)).toContain('"second"')
    // No key held for Gemini: the client's own key passes through; the feed went in after the user turn.
    const seen = gemini.seen.at(-1)!
    expect(seen.headers['x-goog-api-key']).toBe('client-key')
    // Gemini wants alternating turns: the block is the last part of the last user turn.
    const contents = (JSON.parse(seen.body) as { contents: { role: string; parts: { text: string }[] }[] })
      .contents
    expect(contents).toHaveLength(1)
    expect(contents[0]!.parts.map((part) => part.text.slice(0, 21))).toEqual([
      'hello',
      '--- BEGIN FEED: summa',
    ])
    response.destroy()
    await closed
  })

  it('keeps Content-Encoding and body consistent both ways', async () => {
    const answer = JSON.stringify({
      candidates: [{ content: { parts: [{ text: 'zipped' }] } }],
      usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 3 },
    })
    gemini.handle((_req, res) => {
      const zipped = gzipSync(answer)
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'content-length': zipped.length,
      })
      res.end(zipped)
    })
    const request = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'zip it' }] }] })
    const response = await rawRequest(`${endpoints.gemini}/v1beta/models/gemini-2.5-flash:generateContent`, {
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(request),
    })
    expect(response.headers['content-encoding']).toBe('gzip')
    const chunks: Buffer[] = []
    for await (const chunk of response) chunks.push(chunk as Buffer)
    expect(gunzipSync(Buffer.concat(chunks)).toString('utf8')).toBe(answer)
    // The rewritten request went up decoded, and said so.
    const seen = gemini.seen.at(-1)!
    expect(seen.headers['content-encoding']).toBeUndefined()
    expect(seen.body).toContain('--- BEGIN FEED: summary')
    expect(Number(seen.headers['content-length'])).toBe(Buffer.byteLength(seen.body))
  })

  // With `Expect: 100-continue` the client sends its body only once the proxy has the headers: it arrives
  // after them, in pieces, with or without a Content-Length.
  it('reads a body that comes after its headers, framed by length or chunked', async () => {
    const body = JSON.stringify(messages('Review this, later.'))
    for (const framing of ['length', 'chunked'] as const) {
      mock.enqueue(reply().text(`read by ${framing}`))
      const response = await new Promise<IncomingMessage>((resolve, reject) => {
        const req = httpRequest(`${endpoints.anthropic}/v1/messages`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            expect: '100-continue',
            ...(framing === 'length' && { 'content-length': String(Buffer.byteLength(body)) }),
          },
        })
        req.once('response', resolve)
        req.once('error', reject)
        req.once('continue', () => {
          req.write(body.slice(0, 40))
          req.end(body.slice(40))
        })
        req.flushHeaders()
      })
      expect(response.statusCode).toBe(200)
      expect(await bodyOf(response)).toContain(`read by ${framing}`)
    }
    expect(mock.requests).toHaveLength(2)
    for (const request of mock.requests) {
      const sent = request.body as { messages: { role: string; content: unknown }[] }
      expect(sent.messages[0]!.content).toBe('Review this, later.')
      // The feed went in after the client's turn, as for a body that came whole.
      expect(sent.messages).toHaveLength(2)
    }
  })

  it('answers a chunked body over the limit, which declares no length, with a JSON 413', async () => {
    const huge = JSON.stringify(messages('x'.repeat(1024 * 1024 + 10)))
    const response = await rawRequest(`${endpoints.anthropic}/v1/messages`, {
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      body: huge,
    })
    expect(response.statusCode).toBe(413)
    expect(JSON.parse(await bodyOf(response))).toMatchObject({
      error: { type: 'request_too_large' },
    })
    expect(mock.requests).toHaveLength(0)
  })
})
