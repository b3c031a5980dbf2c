// Issue 17 items 5 and 10: an upstream that never answers, stops mid-stream or never accepts the
// connection used to hold the request, and its socket, forever; a client that left did not always free
// the upstream socket. Each case here runs forwardUpstream behind a real listener against a real upstream.
import { type ChildProcess, spawn } from 'node:child_process'
import {
  createServer,
  type IncomingMessage,
  request as httpRequest,
  type Server,
  type ServerResponse,
} from 'node:http'
import { type AddressInfo, connect, type Socket } from 'node:net'
import { gzipSync } from 'node:zlib'
import { afterEach, describe, expect, it } from 'vitest'
import {
  type ForwardResult,
  forwardUpstream,
  type UpstreamTimeouts,
  upstreamUrl,
} from './forward-upstream.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  )
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** An upstream the test scripts, counting the connections it holds open. */
async function capture(handle: (req: IncomingMessage, res: ServerResponse) => void) {
  const open = new Set<Socket>()
  const server = createServer(handle)
  server.on('connection', (socket: Socket) => {
    open.add(socket)
    socket.once('close', () => open.delete(socket))
  })
  return { url: await listen(server), open }
}

/** A listener that forwards every request to `baseUrl` and reports each result. */
async function proxyTo(baseUrl: string, timeouts: UpstreamTimeouts, observe?: (res: ServerResponse) => void) {
  const results: ForwardResult[] = []
  const url = await listen(
    createServer((req, res) => {
      observe?.(res)
      req.resume()
      // Later than the body's end, as in the proxy (auth, budget and feeds come first).
      req.once('end', () =>
        setTimeout(() => {
          void forwardUpstream({
            upstream: { baseUrl },
            urlFamily: 'anthropic',
            family: 'anthropic',
            method: 'POST',
            path: '/v1/messages',
            query: '',
            headers: { 'content-type': 'application/json' },
            body: Buffer.from('{}'),
            stream: true,
            model: undefined,
            hideUsageChunk: false,
            req,
            res,
            timeouts,
          }).then((result) => {
            results.push(result)
            if (!res.headersSent) res.writeHead(result.status).end()
          })
        }, 10),
      )
    }),
  )
  return { url, results }
}

function post(url: string): Promise<{ status: number; body: string; error?: string }> {
  return new Promise((resolve) => {
    const req = httpRequest(`${url}/v1/messages`, { method: 'POST' }, (res) => {
      let body = ''
      res.on('data', (chunk: Buffer) => (body += chunk.toString()))
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body }))
      res.once('error', (error) => resolve({ status: res.statusCode ?? 0, body, error: error.message }))
    })
    req.once('error', (error) => resolve({ status: 0, body: '', error: error.message }))
    req.end('{}')
  })
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const generous = { connectMs: 10_000, idleMs: 10_000 }

describe('forwardUpstream', () => {
  it('meters every chunk of an answer whose end came with its last bytes, plain or gzip', async () => {
    const sse = (type: string, data: object) =>
      `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
    const answer = Buffer.from(
      sse('message_start', { message: { id: 'm', usage: { input_tokens: 12, output_tokens: 1 } } }) +
        sse('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'hi' } }) +
        sse('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 7 } }) +
        sse('message_stop', {}),
    )
    for (const zipped of [false, true]) {
      // The whole answer in one write: its end reaches the proxy in the same read as its bytes.
      const upstream = await capture((_req, res) => {
        const body = zipped ? gzipSync(answer) : answer
        res.writeHead(200, {
          'content-type': 'text/event-stream',
          'content-length': body.length,
          ...(zipped && { 'content-encoding': 'gzip' }),
        })
        res.end(body)
      })
      const proxy = await proxyTo(upstream.url, generous)
      const reply = await post(proxy.url)
      expect(reply.status).toBe(200)
      await until(() => proxy.results.length === 1, 'the result')
      expect(proxy.results[0]!.usage()).toMatchObject({ inputTokens: 12, outputTokens: 7 })
    }
  })

  it("tells a stream's client at once that its answer has begun, before its first bytes come", async () => {
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    const upstream = await capture((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.flushHeaders()
      void released.then(() => res.end('data: late\n\n'))
    })
    const proxy = await proxyTo(upstream.url, generous)
    // Nothing of the body is sent until the client has the status and headers.
    const response = await new Promise<IncomingMessage>((resolve, reject) =>
      httpRequest(`${proxy.url}/v1/messages`, { method: 'POST' }, resolve).once('error', reject).end('{}'),
    )
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('text/event-stream')
    release()
    let body = ''
    for await (const chunk of response) body += String(chunk)
    expect(body).toBe('data: late\n\n')
  })

  it("sends a stream's headers with its first bytes when they came together: one write, not two", async () => {
    const upstream = await capture((_req, res) => {
      // Node sends these headers with the first write, in one segment.
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('data: first\n\n')
      setTimeout(() => res.end('data: last\n\n'), 20)
    })
    const flushes: number[] = []
    const proxy = await proxyTo(upstream.url, generous, (res) => {
      const flushHeaders = res.flushHeaders.bind(res)
      res.flushHeaders = () => {
        flushes.push(Date.now())
        flushHeaders()
      }
    })
    const answer = await post(proxy.url)
    expect(answer).toEqual({ status: 200, body: 'data: first\n\ndata: last\n\n' })
    expect(flushes).toEqual([])
  })

  it('fails a request whose upstream sends no headers within the idle timeout, and closes its socket', async () => {
    const upstream = await capture(() => {})
    const proxy = await proxyTo(upstream.url, { connectMs: 10_000, idleMs: 300 })
    const answer = await post(proxy.url)
    expect(answer.status).toBe(504)
    expect(proxy.results[0]).toMatchObject({ timedOut: 'idle', aborted: false })
    await until(() => upstream.open.size === 0, 'the upstream socket to close')
  })

  it('cuts a stream that stops mid-way after the idle timeout', async () => {
    const upstream = await capture((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('event: ping\ndata: {}\n\n')
    })
    const proxy = await proxyTo(upstream.url, { connectMs: 10_000, idleMs: 300 })
    const answer = await post(proxy.url)
    expect(answer.status).toBe(200)
    expect(answer.body).toContain('ping')
    expect(answer.error).toBeDefined()
    expect(proxy.results[0]).toMatchObject({ timedOut: 'idle' })
    await until(() => upstream.open.size === 0, 'the upstream socket to close')
  })

  it('keeps a stream whose chunks come more often than the idle timeout', async () => {
    const upstream = await capture((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      let sent = 0
      const timer = setInterval(() => {
        res.write(`data: ${sent}\n\n`)
        if (++sent === 8) {
          clearInterval(timer)
          res.end()
        }
      }, 100)
    })
    const proxy = await proxyTo(upstream.url, { connectMs: 10_000, idleMs: 400 })
    const answer = await post(proxy.url)
    expect(answer).toMatchObject({ status: 200 })
    expect(answer.body).toContain('data: 7')
    expect(proxy.results[0]?.timedOut).toBeUndefined()
  })

  it('does not count a slow client against the idle timeout: a held-back stream is not the upstream going silent', async () => {
    const size = 16 * 1024 * 1024
    const upstream = await capture((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' })
      res.end(Buffer.alloc(size, 'x'))
    })
    const proxy = await proxyTo(upstream.url, { connectMs: 10_000, idleMs: 300 })
    const received = await new Promise<number>((resolve, reject) => {
      const client = httpRequest(`${proxy.url}/v1/messages`, { method: 'POST' }, (res) => {
        // Reads nothing for many idle timeouts: the proxy holds the upstream back all that time.
        res.pause()
        setTimeout(() => {
          let bytes = 0
          res.on('data', (chunk: Buffer) => (bytes += chunk.length))
          res.once('end', () => resolve(bytes))
          res.resume()
        }, 2500)
      })
      client.once('error', reject)
      client.end('{}')
    })
    expect(received).toBe(size)
    await until(() => proxy.results.length === 1, 'the forward to settle')
    expect(proxy.results[0]).toMatchObject({ status: 200, aborted: false })
    expect(proxy.results[0]?.timedOut).toBeUndefined()
  })

  it('passes an informational response by and answers with the final one', async () => {
    const upstream = await capture((_req, res) => {
      res.writeEarlyHints({ link: '</style.css>; rel=preload' })
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end('data: done\n\n')
    })
    const proxy = await proxyTo(upstream.url, generous)
    const answer = await post(proxy.url)
    expect(answer).toMatchObject({ status: 200, body: 'data: done\n\n' })
  })

  it('fails a connection the upstream never accepts after the connect timeout', async () => {
    // A listener whose process is blocked: once its accept queue is full, new connections hang in SYN.
    const child: ChildProcess = spawn(
      process.execPath,
      [
        '-e',
        `const s = require('node:net').createServer().listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
           console.log(s.address().port)
           Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)
         })`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    cleanups.push(() => child.kill('SIGKILL'))
    const port = await new Promise<number>((resolve) =>
      child.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))),
    )
    const fillers: Socket[] = []
    cleanups.push(() => fillers.forEach((socket) => socket.destroy()))
    // Fill the accept queue (its length is backlog + 1 on Linux; a few more do no harm).
    for (let index = 0; index < 4; index++) {
      const socket = connect(port, '127.0.0.1')
      socket.on('error', () => {})
      fillers.push(socket)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
    const proxy = await proxyTo(`http://127.0.0.1:${port}`, { connectMs: 300, idleMs: 60_000 })
    const answer = await post(proxy.url)
    expect(answer.status).toBe(504)
    expect(proxy.results[0]).toMatchObject({ timedOut: 'connect' })
  })

  it('destroys the upstream request when the client goes away', async () => {
    let started!: () => void
    const upstreamStarted = new Promise<void>((resolve) => (started = resolve))
    const upstream = await capture((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('data: first\n\n')
      started()
    })
    const proxy = await proxyTo(upstream.url, generous)
    const client = httpRequest(`${proxy.url}/v1/messages`, { method: 'POST' }, (res) => {
      res.once('data', () => client.destroy())
    })
    client.on('error', () => {})
    client.end('{}')
    await upstreamStarted
    await until(() => proxy.results.length === 1, 'the forward to settle')
    expect(proxy.results[0]).toMatchObject({ aborted: true })
    await until(() => upstream.open.size === 0, 'the upstream socket to close')
  })
})

// Found while merging issue 17: a `..` in a proxied path climbed above the path of the operator's base URL
// (a gateway prefix) with the operator's key. The handler refuses such paths; this is the backstop.
describe('upstreamUrl', () => {
  it('keeps every path under the base URL’s own path', () => {
    expect(upstreamUrl('anthropic', 'http://gw.example/team/anthropic', '/v1/messages', '?beta=1').href).toBe(
      'http://gw.example/team/anthropic/v1/messages?beta=1',
    )
    expect(upstreamUrl('openai', 'http://gw.example/team/v1', '/v1/chat/completions', '').href).toBe(
      'http://gw.example/team/v1/chat/completions',
    )
    for (const path of ['/v1/../../admin', '/../secrets', '/v1/%2e%2e/%2e%2e/admin']) {
      expect(() => upstreamUrl('anthropic', 'http://gw.example/team/anthropic', path, ''), path).toThrow(
        /leaves the upstream's base path/,
      )
    }
  })
})

describe('forwardUpstream, what goes upstream', () => {
  /** Forwards one request through forwardUpstream and returns what the upstream received. */
  async function seenUpstream(options: {
    base: (origin: string) => string
    upstream?: { apiKey?: string; dropClientAuth?: boolean }
    path: string
    query: string
    headers: Record<string, string>
    bodyDecoded?: boolean
  }) {
    let seen: { url: string; headers: IncomingMessage['headers'] } | undefined
    const upstream = await capture((req, res) => {
      seen = { url: req.url ?? '', headers: req.headers }
      req.resume()
      req.once('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'))
    })
    const proxy = await listen(
      createServer((req, res) => {
        req.resume()
        req.once('end', () => {
          void forwardUpstream({
            upstream: { baseUrl: options.base(upstream.url), ...options.upstream },
            urlFamily: 'gemini',
            family: 'gemini',
            method: 'POST',
            path: options.path,
            query: options.query,
            headers: options.headers,
            ...(options.bodyDecoded && { bodyDecoded: true }),
            extraHeaders: { 'x-hangar-hop': 'me' },
            body: Buffer.from('{}'),
            stream: false,
            model: undefined,
            hideUsageChunk: false,
            req,
            res,
            timeouts: generous,
          })
        })
      }),
    )
    expect((await post(proxy)).status).toBe(200)
    return seen!
  }

  it("reaches the base URL's host, port, credentials and path, with the query, its key replaced by the held one", async () => {
    const seen = await seenUpstream({
      base: (origin) => `${origin.replace('http://', 'http://gw:pw@')}/gateway/v1beta/`,
      upstream: { apiKey: 'held-key' },
      path: '/v1beta/models/m:generateContent',
      query: '?alt=sse&key=client-key',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'x-goog-api-key': 'c' },
      bodyDecoded: true,
    })
    expect(seen.url).toBe('/gateway/v1beta/models/m:generateContent?alt=sse&key=held-key')
    expect(seen.headers.authorization).toBe(`Basic ${Buffer.from('gw:pw').toString('base64')}`)
    expect(seen.headers['x-goog-api-key']).toBe('held-key')
    expect(seen.headers['x-hangar-hop']).toBe('me')
    // The body went decoded: its coding is not claimed.
    expect(seen.headers['content-encoding']).toBeUndefined()
    expect(seen.headers['content-length']).toBe('2')
  })

  it("drops the client's key from the query, even percent-encoded, when the client's auth must not travel", async () => {
    const seen = await seenUpstream({
      base: (origin) => origin,
      upstream: { dropClientAuth: true },
      path: '/v1beta/models/m:generateContent',
      query: '?%6Bey=operator-key&alt=sse',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': 'operator-key' },
    })
    expect(seen.url).toBe('/v1beta/models/m:generateContent?alt=sse')
    expect(seen.headers['x-goog-api-key']).toBeUndefined()
  })

  it('sends a request without a query as it is, and keeps the content coding of a body it did not decode', async () => {
    const seen = await seenUpstream({
      base: (origin) => `${origin}/v1beta`,
      path: '/v1beta/models/m:countTokens',
      query: '',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    })
    expect(seen.url).toBe('/v1beta/models/m:countTokens')
    expect(seen.headers['content-encoding']).toBe('gzip')
  })
})
