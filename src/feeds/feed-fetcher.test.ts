import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { formatFeedBlocks } from './feed-blocks.js'
import { createFeedFetcher, type FeedFetcher } from './feed-fetcher.js'
import type { ResolvedFeed } from './feed-manifest.js'

const START = Date.UTC(2026, 10, 22, 10, 0, 0)
const CAPS = { perFeedBytes: 32 * 1024, totalBytes: 64 * 1024 }
const CONTEXT = { agent: 'reviewer', project: 'hangar' }

interface FeedServer {
  base: string
  /** Every request the server saw, in arrival order. */
  requests: http.IncomingMessage[]
  /** Arrivals and answers in order, e.g. "arrive /a", "answer /a". */
  log: string[]
}

type Handler = (request: http.IncomingMessage, response: http.ServerResponse, hit: number) => void

const servers: http.Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

async function startFeedServer(handler: Handler): Promise<FeedServer> {
  const requests: http.IncomingMessage[] = []
  const log: string[] = []
  const server = http.createServer((request, response) => {
    requests.push(request)
    log.push(`arrive ${request.url}`)
    response.on('finish', () => log.push(`answer ${request.url}`))
    handler(request, response, requests.length)
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, log }
}

function text(body: string, status = 200, type = 'text/markdown'): Handler {
  return (_request, response) => response.writeHead(status, { 'content-type': type }).end(body)
}

function feedAt(base: string, path: string, ttl = 60, name = path.slice(1) || 'root'): ResolvedFeed {
  return { name, source: 'market-api', path, ttl, url: base + path, trust: 'operator' }
}

function fakeClock() {
  const clock = { time: START, now: () => clock.time }
  return clock
}

function fetcherWith(clock = fakeClock(), extra: Partial<Parameters<typeof createFeedFetcher>[0]> = {}) {
  return createFeedFetcher({
    services: {},
    timeoutMs: 3000,
    credentialFor: () => undefined,
    now: clock.now,
    ...extra,
  })
}

async function collectOne(fetcher: FeedFetcher, feed: ResolvedFeed, context = CONTEXT) {
  const [result] = await fetcher.collect([feed], context)
  if (!result) throw new Error('collect returned no result')
  return result
}

describe('feed-fetcher', () => {
  it('sends the identity headers, and Authorization and X-Hangar-Run only when there are some', async () => {
    const server = await startFeedServer(text('ok'))
    const feed = feedAt(server.base, '/summary')
    const withCredential = fetcherWith(fakeClock(), { credentialFor: async () => 'feed-secret-1' })
    await withCredential.collect([feed], { agent: 'reviewer', project: 'hangar', runId: 'run_123' })
    await fetcherWith().collect([feed], { agent: 'coder', project: 'demo' })

    const [first, second] = server.requests
    expect(first?.method).toBe('GET')
    expect(first?.headers).toMatchObject({
      'x-hangar-agent': 'reviewer',
      'x-hangar-project': 'hangar',
      'x-hangar-run': 'run_123',
      authorization: 'Bearer feed-secret-1',
    })
    expect(second?.headers).toMatchObject({ 'x-hangar-agent': 'coder', 'x-hangar-project': 'demo' })
    expect(second?.headers.authorization).toBeUndefined()
    expect(second?.headers['x-hangar-run']).toBeUndefined()
    const identifying = (request: http.IncomingMessage | undefined) =>
      Object.keys(request?.headers ?? {}).filter((header) => /^x-|auth|key|cookie/.test(header))
    expect(identifying(first).sort()).toEqual([
      'authorization',
      'x-hangar-agent',
      'x-hangar-project',
      'x-hangar-run',
    ])
    expect(identifying(second).sort()).toEqual(['x-hangar-agent', 'x-hangar-project'])
  })

  it('serves a cached value fresh within its TTL without refetching, byte-identically, and refetches after', async () => {
    const server = await startFeedServer((_request, response, hit) => response.end(`value ${hit}`))
    const clock = fakeClock()
    const fetcher = fetcherWith(clock)
    const feed = feedAt(server.base, '/summary', 60)

    const first = await fetcher.collect([feed], CONTEXT)
    clock.time += 59_000
    const second = fetcher.collect([feed], CONTEXT)
    // Cached fresh: answered at once, not through a promise (the proxy does not wait a turn for it).
    if (second instanceof Promise) throw new Error('a fresh cached value came back as a promise')
    expect(server.requests).toHaveLength(1)
    expect(second[0]).toMatchObject({ status: 'fresh', content: 'value 1', refreshedAt: new Date(START) })
    expect(formatFeedBlocks(second, CAPS).text).toBe(formatFeedBlocks(first, CAPS).text)

    clock.time += 2_000
    const third = await collectOne(fetcher, feed)
    expect(server.requests).toHaveLength(2)
    expect(third).toMatchObject({
      status: 'fresh',
      content: 'value 2',
      refreshedAt: new Date(START + 61_000),
    })
  })

  it('keeps one cache per agent', async () => {
    const server = await startFeedServer((request, response) =>
      response.end(`for ${request.headers['x-hangar-agent']}`),
    )
    const fetcher = fetcherWith()
    const feed = feedAt(server.base, '/summary')
    expect((await collectOne(fetcher, feed, { agent: 'a', project: 'p' })).content).toBe('for a')
    expect((await collectOne(fetcher, feed, { agent: 'b', project: 'p' })).content).toBe('for b')
    expect(server.requests).toHaveLength(2)
  })

  it('lets a frontmatter ttl override the declared one for that value, and strips it', async () => {
    const server = await startFeedServer((_request, response, hit) =>
      response.end(hit === 1 ? '---\nttl: 5s\n---\nshort-lived' : '---\nttl: 2m\n---\nlong-lived'),
    )
    const clock = fakeClock()
    const fetcher = fetcherWith(clock)
    const feed = feedAt(server.base, '/summary', 300)

    expect(await collectOne(fetcher, feed)).toMatchObject({ content: 'short-lived', totalBytes: 11 })
    clock.time += 6_000
    expect((await collectOne(fetcher, feed)).content).toBe('long-lived')
    expect(server.requests).toHaveLength(2)
    clock.time += 119_000
    await collectOne(fetcher, feed)
    expect(server.requests).toHaveLength(2)
    clock.time += 2_000
    await collectOne(fetcher, feed)
    expect(server.requests).toHaveLength(3)
  })

  it('serves the last good value as stale, with its refresh time, after a failure', async () => {
    const server = await startFeedServer((_request, response, hit) =>
      hit === 1 ? response.end('good value') : response.writeHead(503).end('down for maintenance'),
    )
    const clock = fakeClock()
    const fetcher = fetcherWith(clock)
    const feed = feedAt(server.base, '/summary', 60)
    await collectOne(fetcher, feed)
    clock.time += 61_000

    const results = await fetcher.collect([feed], CONTEXT)
    expect(results[0]).toMatchObject({
      status: 'stale',
      content: 'good value',
      refreshedAt: new Date(START),
      reason: 'HTTP 503 Service Unavailable',
    })
    expect(results[0]?.ageSeconds).toBe(61)
    expect(formatFeedBlocks(results, CAPS).text).toContain(
      '(from market-api, refreshed 2026-11-22T10:00:00Z, age 1 m, STALE: HTTP 503 Service Unavailable) ---\ngood value\n',
    )
    expect(fetcher.state('reviewer', feed)).toEqual({
      status: 'stale',
      lastSuccessAt: '2026-11-22T10:00:00.000Z',
      lastAttemptAt: '2026-11-22T10:01:01.000Z',
      expiresAt: '2026-11-22T10:01:00.000Z',
      reason: 'HTTP 503 Service Unavailable',
    })
  })

  // Issue 18 item 7: the block said when Hangar fetched a value, not how old the source says its data is.
  it("takes the source's refreshed frontmatter as the value's time, and ages a stale value from it", async () => {
    const server = await startFeedServer((_request, response, hit) =>
      hit === 1
        ? response.end('---\nttl: 60\nrefreshed: 2026-11-22T09:46:00Z\n---\nledger totals')
        : response.writeHead(503).end(),
    )
    const clock = fakeClock()
    const fetcher = fetcherWith(clock)
    const feed = feedAt(server.base, '/ledger', 60)
    const first = await fetcher.collect([feed], CONTEXT)
    expect(first[0]).toMatchObject({ status: 'fresh', content: 'ledger totals' })
    expect(first[0]?.refreshedAt).toEqual(new Date('2026-11-22T09:46:00Z'))
    expect(formatFeedBlocks(first, CAPS).text).toContain(
      '--- BEGIN FEED: ledger (from market-api, refreshed 2026-11-22T09:46:00Z) ---\nledger totals\n',
    )
    clock.time += 61_000
    const later = await fetcher.collect([feed], CONTEXT)
    expect(later[0]).toMatchObject({ status: 'stale', ageSeconds: 15 * 60 + 1 })
    expect(formatFeedBlocks(later, CAPS).text).toContain(
      '(from market-api, refreshed 2026-11-22T09:46:00Z, age 15 m, STALE: HTTP 503 Service Unavailable) ---',
    )
    // The cache still expires by our fetch time, and the fetch state says when we fetched.
    expect(fetcher.state('reviewer', feed)).toMatchObject({ lastSuccessAt: '2026-11-22T10:00:00.000Z' })
  })

  it('keeps the fetch time when the source claims a refresh in the future', async () => {
    const server = await startFeedServer(text('---\nrefreshed: 2026-11-22T11:00:00Z\n---\nsoon'))
    const result = await collectOne(fetcherWith(), feedAt(server.base, '/future'))
    expect(result.refreshedAt).toEqual(new Date(START))
  })

  it('resolves with "unavailable" within the timeout when a feed never answers', async () => {
    const server = await startFeedServer(() => {})
    const fetcher = fetcherWith(fakeClock(), { timeoutMs: 200 })
    const feed = feedAt(server.base, '/hang')
    const results = await fetcher.collect([feed], CONTEXT)
    expect(results[0]).toMatchObject({ status: 'unavailable', content: '', reason: 'timed out after 200 ms' })
    expect(results[0]?.refreshedAt).toBeUndefined()
    expect(formatFeedBlocks(results, CAPS).text).toContain('[Feed unavailable: timed out after 200 ms]')
  })

  it('times out a body that stops half way', async () => {
    const server = await startFeedServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' })
      response.write('partial')
    })
    const fetcher = fetcherWith(fakeClock(), { timeoutMs: 200 })
    const result = await collectOne(fetcher, feedAt(server.base, '/slow-body'))
    expect(result).toMatchObject({ status: 'unavailable', reason: 'timed out after 200 ms' })
  })

  it('says "connection refused" when nothing listens', async () => {
    const server = await startFeedServer(text('x'))
    const closed = servers.pop()!
    await new Promise((resolve) => closed.close(resolve))
    const result = await collectOne(fetcherWith(), feedAt(server.base, '/summary'))
    expect(result).toMatchObject({ status: 'unavailable', reason: 'connection refused' })
  })

  it('does not retry a failed feed inside the backoff window of min(ttl, 30) s', async () => {
    const server = await startFeedServer((_request, response) => response.writeHead(503).end())
    const clock = fakeClock()
    const fetcher = fetcherWith(clock)
    const feed = feedAt(server.base, '/summary', 60)

    expect(await collectOne(fetcher, feed)).toMatchObject({
      status: 'unavailable',
      reason: 'HTTP 503 Service Unavailable',
    })
    clock.time += 29_000
    expect(await collectOne(fetcher, feed)).toMatchObject({
      status: 'unavailable',
      reason: 'HTTP 503 Service Unavailable',
    })
    expect(server.requests).toHaveLength(1)
    expect(fetcher.state('reviewer', feed)).toMatchObject({
      status: 'unavailable',
      reason: 'HTTP 503 Service Unavailable',
    })
    clock.time += 2_000
    await collectOne(fetcher, feed)
    expect(server.requests).toHaveLength(2)

    // A short TTL shortens the window.
    const shortFeed = feedAt(server.base, '/short', 5)
    await collectOne(fetcher, shortFeed)
    clock.time += 6_000
    await collectOne(fetcher, shortFeed)
    expect(server.requests).toHaveLength(4)
  })

  it('shares one in-flight fetch between concurrent collects', async () => {
    let release = () => {}
    const released = new Promise<void>((resolve) => (release = resolve))
    const server = await startFeedServer(
      (_request, response) => void released.then(() => response.end('shared')),
    )
    const fetcher = fetcherWith()
    const feed = feedAt(server.base, '/summary')

    const first = fetcher.collect([feed], CONTEXT)
    const second = fetcher.collect([feed], CONTEXT)
    await new Promise<void>((resolve) => {
      const poll = () => (server.requests.length > 0 ? resolve() : setTimeout(poll, 5))
      poll()
    })
    release()
    const [[one], [two]] = await Promise.all([first, second])
    expect(server.requests).toHaveLength(1)
    expect(one).toMatchObject({ status: 'fresh', content: 'shared' })
    expect(two).toMatchObject({ status: 'fresh', content: 'shared' })
  })

  it('fetches the stale feeds of one collect in parallel, in order of the feeds given', async () => {
    const server = await startFeedServer((request, response) => {
      setTimeout(() => response.end(`body of ${request.url}`), 300)
    })
    const results = await fetcherWith().collect(
      [feedAt(server.base, '/a'), feedAt(server.base, '/b')],
      CONTEXT,
    )
    expect(server.log.slice(0, 2).sort()).toEqual(['arrive /a', 'arrive /b'])
    expect(server.log).toHaveLength(4)
    expect(results.map((result) => result.content)).toEqual(['body of /a', 'body of /b'])
  })

  it('detects JSON by content type and fences it', async () => {
    const server = await startFeedServer((request, response) =>
      response
        .writeHead(200, {
          'content-type':
            request.url === '/plain'
              ? 'text/plain'
              : request.url === '/vendor'
                ? 'application/vnd.market+json; charset=utf-8'
                : 'application/json',
        })
        .end('{"price":1}'),
    )
    const fetcher = fetcherWith()
    const results = await fetcher.collect(
      ['/json', '/vendor', '/plain'].map((path) => feedAt(server.base, path)),
      CONTEXT,
    )
    expect(results.map((result) => result.json)).toEqual([true, true, false])
    const { text: blocks } = formatFeedBlocks(results, CAPS)
    expect(blocks).toContain('---\n```json\n{"price":1}\n```\n--- END FEED: json ---')
    expect(blocks).toContain('---\n{"price":1}\n--- END FEED: plain ---')
  })

  it('treats an empty 200 as a good value that yields an "(empty)" block', async () => {
    const server = await startFeedServer(text(''))
    const fetcher = fetcherWith()
    const feed = feedAt(server.base, '/empty')
    const results = await fetcher.collect([feed], CONTEXT)
    expect(results[0]).toMatchObject({
      status: 'fresh',
      content: '',
      totalBytes: 0,
      refreshedAt: new Date(START),
    })
    const formatted = formatFeedBlocks(results, CAPS)
    expect(formatted.text).toBe(
      '--- BEGIN FEED: empty (from market-api, refreshed 2026-11-22T10:00:00Z) ---\n(empty)\n--- END FEED: empty ---',
    )
    expect(formatted.feeds).toEqual([
      expect.objectContaining({ name: 'empty', status: 'fresh', bytes: Buffer.byteLength(formatted.text) }),
    ])
    expect(fetcher.state('reviewer', feed)).toMatchObject({ status: 'fresh' })
  })

  it('stops reading at maxBodyBytes on a character boundary and leaves the total unknown', async () => {
    const server = await startFeedServer(text('ab😀cd'))
    const result = await collectOne(
      fetcherWith(fakeClock(), { maxBodyBytes: 4 }),
      feedAt(server.base, '/big'),
    )
    expect(result).toMatchObject({ status: 'fresh', content: 'ab' })
    expect(result.totalBytes).toBeUndefined()
    expect(formatFeedBlocks([result], { perFeedBytes: 1, totalBytes: 1000 }).text).toContain(
      '[Content truncated: showing 1 of unknown bytes]',
    )
  })

  it('reports "never" before the first fetch and what it knows after, without fetching', async () => {
    const server = await startFeedServer(text('v'))
    const clock = fakeClock()
    const fetcher = fetcherWith(clock)
    const feed = feedAt(server.base, '/summary', 60)
    expect(fetcher.state('reviewer', feed)).toEqual({ status: 'never' })
    await collectOne(fetcher, feed)
    clock.time += 1_000
    expect(fetcher.state('reviewer', feed)).toEqual({
      status: 'fresh',
      lastSuccessAt: '2026-11-22T10:00:00.000Z',
      lastAttemptAt: '2026-11-22T10:00:00.000Z',
      expiresAt: '2026-11-22T10:01:00.000Z',
    })
    expect(fetcher.state('someone-else', feed)).toEqual({ status: 'never' })
    expect(server.requests).toHaveLength(1)
  })

  it('never rejects and never puts the credential in a reason', async () => {
    const server = await startFeedServer(text('nope', 401))
    const feed = feedAt(server.base, '/private')
    const leaky = fetcherWith(fakeClock(), {
      credentialFor: () => {
        throw new Error('vault said: token feed-secret-2 is sealed')
      },
    })
    const failedLookup = await collectOne(leaky, feed)
    expect(failedLookup).toMatchObject({ status: 'unavailable' })
    expect(failedLookup.reason).not.toContain('feed-secret-2')
    expect(server.requests).toHaveLength(0)

    const rejected = await collectOne(
      fetcherWith(fakeClock(), { credentialFor: () => 'feed-secret-3' }),
      feed,
    )
    expect(rejected).toMatchObject({ status: 'unavailable', reason: 'HTTP 401 Unauthorized' })
    expect(JSON.stringify(rejected)).not.toContain('feed-secret-3')
  })
})

// Issue 17 item 4: feeds as a confused deputy. The fetcher is the last gate before a service's credential
// leaves the daemon: whatever manifest it is handed, a user's feed outside the service's userFeedPaths, a
// refused feed, or an unsafe URL path is answered "unavailable" without a request or a credential lookup.
describe('feed-fetcher path policy', () => {
  it("never requests a user's feed outside userFeedPaths, even from a manifest that did not refuse it", async () => {
    const server = await startFeedServer(text('secret export'))
    const lookups: string[] = []
    const fetcher = fetcherWith(fakeClock(), {
      services: { 'market-api': { url: server.base, userFeedPaths: ['/api/v1'] } },
      credentialFor: (service) => {
        lookups.push(service)
        return 'operator-bearer'
      },
    })
    const planted: ResolvedFeed[] = [
      { ...feedAt(server.base, '/admin/export?all=1'), trust: 'user' },
      { ...feedAt(server.base, '/api/v1admin'), trust: 'user' },
      { ...feedAt(server.base, '/api/v1/../../etc/passwd'), trust: 'user' },
      { ...feedAt(server.base, '/api/v1/%2e%2e/x'), trust: 'user' },
      { ...feedAt(server.base, '/api/v1/summary'), trust: 'user', refused: 'refused by the manifest' },
      // Its URL points elsewhere than its service plus its path.
      { ...feedAt(server.base, '/api/v1/ok'), trust: 'user', url: `${server.base}/admin` },
      // A feed with no trust at all is treated as a user's.
      { ...feedAt(server.base, '/admin'), trust: undefined as unknown as 'user' },
    ]
    const results = await fetcher.collect(planted, CONTEXT)
    expect(results.map((result) => result.status)).toEqual(planted.map(() => 'unavailable'))
    expect(results.every((result) => result.reason?.startsWith('refused: '))).toBe(true)
    expect(server.requests).toHaveLength(0)
    expect(lookups).toEqual([])
  })

  it("fetches a user's feed under userFeedPaths with the service's credential", async () => {
    const server = await startFeedServer(text('summary'))
    const fetcher = fetcherWith(fakeClock(), {
      services: { 'market-api': { url: server.base, userFeedPaths: ['/api/v1'] } },
      credentialFor: () => 'operator-bearer',
    })
    const result = await collectOne(fetcher, { ...feedAt(server.base, '/api/v1/summary'), trust: 'user' })
    expect(result).toMatchObject({ status: 'fresh', content: 'summary' })
    expect(server.requests.map((request) => [request.url, request.headers.authorization])).toEqual([
      ['/api/v1/summary', 'Bearer operator-bearer'],
    ])
  })

  it("does not follow a redirect for a user's feed", async () => {
    const server = await startFeedServer((request, response) => {
      if (request.url === '/api/v1/go') response.writeHead(302, { location: '/admin/export' }).end()
      else response.end('admin data')
    })
    const fetcher = fetcherWith(fakeClock(), {
      services: { 'market-api': { url: server.base, userFeedPaths: ['/api/v1'] } },
      credentialFor: () => 'operator-bearer',
    })
    const result = await collectOne(fetcher, { ...feedAt(server.base, '/api/v1/go'), trust: 'user' })
    expect(result).toMatchObject({ status: 'unavailable', content: '' })
    expect(result.reason).toMatch(/redirects are not followed/)
    expect(server.requests.map((request) => request.url)).toEqual(['/api/v1/go'])
  })

  it("refuses an unsafe path of the operator's own feed too", async () => {
    const server = await startFeedServer(text('x'))
    const fetcher = fetcherWith()
    const results = await fetcher.collect(
      [
        feedAt(server.base, '/../../etc/passwd'),
        feedAt(server.base, '/a//b'),
        feedAt(server.base, '/%2E%2E/x'),
      ],
      CONTEXT,
    )
    expect(results.map((result) => result.status)).toEqual(['unavailable', 'unavailable', 'unavailable'])
    expect(server.requests).toHaveLength(0)
  })
})
