import type { IncomingMessage, ServerResponse } from 'node:http'
import net from 'node:net'
import { Hono } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { describe, expect, it } from 'vitest'
import { checkBindAddress, isLoopbackHost, listen } from './listen.js'

describe('listen', () => {
  it('knows loopback addresses', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]'])
      expect(isLoopbackHost(host)).toBe(true)
    for (const host of ['0.0.0.0', '192.168.1.4', '::', 'example.com'])
      expect(isLoopbackHost(host)).toBe(false)
  })

  // Issue 17 item 10: a non-loopback bind needs --public (server.public) and says what it exposes.
  it('refuses a non-loopback address unless public, and lists what a public one exposes', () => {
    expect(checkBindAddress('127.0.0.1', { public: false })).toEqual({})
    expect(() => checkBindAddress('0.0.0.0', { public: false })).toThrow(/refusing to listen on 0\.0\.0\.0/)
    expect(checkBindAddress('0.0.0.0', { public: true }).exposure?.join('\n')).toMatch(
      /reachable from the network.*MCP.*proxy[\s\S]*TLS reverse proxy.*trustProxy/,
    )
  })

  it('reports a taken port as an AppError that says what to do', async () => {
    const blocker = net.createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    const port = (blocker.address() as net.AddressInfo).port
    try {
      await expect(listen(new Hono(), { host: '127.0.0.1', port })).rejects.toMatchObject({
        code: 'unavailable',
        hint: expect.stringContaining('--port'),
      })
    } finally {
      blocker.close()
    }
  })

  it('closes even with an idle keep-alive connection open', async () => {
    const app = new Hono().get('/', (context) => context.text('hi'))
    const server = await listen(app, { host: '127.0.0.1', port: 0 })
    const socket = net.connect(server.port, '127.0.0.1')
    await new Promise<void>((resolve) => socket.once('connect', resolve))
    socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n')
    await new Promise<void>((resolve) => socket.once('data', () => resolve()))
    await server.close()
    socket.destroy()
  })

  // A client still sending a body the daemon has already answered (401 before reading it, 413 over the
  // limit) must get that answer, not a reset: a slow upload took longer than the drain window before.
  describe('an answer given before the body was read', () => {
    const limit = 1024 * 1024
    const app = new Hono()
      .use('/api/*', bodyLimit({ maxSize: limit, onError: (context) => context.text('too large', 413) }))
      .post('/api/guarded', (context) => context.text('no', 401))
      .post('/api/echo', async (context) =>
        context.text(String((await context.req.arrayBuffer()).byteLength)),
      )
      .get('/api/ping', (context) => context.text('pong'))

    for (const framing of ['content-length', 'chunked'] as const) {
      it(`reaches a client that sends a big ${framing} body slowly, and keeps the connection`, async () => {
        const server = await listen(app, { host: '127.0.0.1', port: 0 })
        const client = rawClient(server.port)
        try {
          await client.connected
          const piece = Buffer.alloc(64 * 1024, 'x')
          const pieces = 20 // 1.25 MiB, over the limit
          client.socket.write(
            'POST /api/guarded HTTP/1.1\r\nHost: x\r\n' +
              (framing === 'chunked'
                ? 'Transfer-Encoding: chunked\r\n\r\n'
                : `Content-Length: ${piece.length * pieces}\r\n\r\n`),
          )
          const frame = (bytes: Buffer) =>
            framing === 'chunked'
              ? Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')])
              : bytes
          // A slow uploader: the whole body takes well over a second, most of it after the answer came.
          for (let sent = 0; sent < pieces; sent++) {
            client.socket.write(frame(piece))
            await new Promise((resolve) => setTimeout(resolve, 60))
          }
          if (framing === 'chunked') client.socket.write('0\r\n\r\n')
          await client.waitFor(/^HTTP\/1\.1 (401|413) /)
          // The body was read and dropped, so the same connection answers the next request.
          client.socket.write('GET /api/ping HTTP/1.1\r\nHost: x\r\n\r\n')
          await client.waitFor(/pong/)
          expect(client.errors).toEqual([])
        } finally {
          client.socket.destroy()
          await server.close()
        }
      })
    }

    // A client that asked for the connection to close after its request (Node's \`agent: false\` sends
    // Connection: close) may still be writing its body when the answer comes. Closing then, with bytes
    // unread, resets the connection: a client busy writing gets EPIPE, and under load can lose the answer.
    // The daemon half-closes after the answer and reads the rest first (RFC 9112, 9.6).
    for (const target of ['/api/guarded', '/proxy/anthropic/v1/messages'])
      it(`reaches a client that asked to close the connection, and closes once the body is read: ${target}`, async () => {
        const proxy = async (_req: IncomingMessage, res: ServerResponse) => {
          res.writeHead(413, { connection: 'close', 'content-length': 9 }).end('too large')
        }
        const server = await listen(app, { host: '127.0.0.1', port: 0, proxy })
        // Half-open, as a client writing a big body is: the daemon's FIN does not stop it sending.
        const client = rawClient(server.port, { allowHalfOpen: true })
        try {
          await client.connected
          const piece = Buffer.alloc(64 * 1024, 'x')
          const pieces = 20
          const closed = new Promise<void>((resolve) => client.socket.once('close', () => resolve()))
          client.socket.write(
            `POST ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n` +
              `Content-Length: ${piece.length * pieces}\r\n\r\n`,
          )
          for (let sent = 0; sent < pieces; sent++) {
            client.socket.write(piece)
            await new Promise((resolve) => setTimeout(resolve, 30))
          }
          client.socket.end()
          await closed
          expect(client.received()).toMatch(/^HTTP\/1\.1 413 [^]*\r\nconnection: close\r\n[^]*too large$/i)
          expect(client.errors).toEqual([])
        } finally {
          client.socket.destroy()
          await server.close()
        }
      })

    // An unauthenticated client cannot make the daemon read without end: past 64 MiB it is cut off.
    it('stops reading a body it answered once 64 MiB of it were dropped', async () => {
      const server = await listen(app, { host: '127.0.0.1', port: 0 })
      const client = rawClient(server.port)
      try {
        await client.connected
        const declared = 256 * 1024 * 1024
        client.socket.write(`POST /api/guarded HTTP/1.1\r\nHost: x\r\nContent-Length: ${declared}\r\n\r\n`)
        const closed = new Promise<void>((resolve) => client.socket.once('close', () => resolve()))
        const piece = Buffer.alloc(1024 * 1024, 'x')
        let written = 0
        let open = true
        void closed.then(() => (open = false))
        while (open && written < declared) {
          written += piece.length
          if (!client.socket.write(piece))
            await Promise.race([new Promise((resolve) => client.socket.once('drain', resolve)), closed])
        }
        await closed
        expect(written).toBeLessThan(declared)
        expect(written).toBeGreaterThan(64 * 1024 * 1024)
      } finally {
        client.socket.destroy()
        await server.close()
      }
    })

    it('still reads a body within the limit', async () => {
      const server = await listen(app, { host: '127.0.0.1', port: 0 })
      try {
        const response = await fetch(`${server.url}/api/echo`, { method: 'POST', body: 'x'.repeat(5000) })
        expect(await response.text()).toBe('5000')
      } finally {
        await server.close()
      }
    })
  })
})

function rawClient(port: number, options: { allowHalfOpen?: boolean } = {}) {
  const socket = net.connect({ port, host: '127.0.0.1', ...options })
  const errors: string[] = []
  let received = ''
  const listeners = new Set<() => void>()
  socket.on('data', (chunk) => {
    received += chunk.toString('latin1')
    for (const listener of listeners) listener()
  })
  socket.on('error', (error: NodeJS.ErrnoException) => errors.push(error.code ?? error.message))
  return {
    socket,
    errors,
    received: () => received,
    connected: new Promise<void>((resolve) => socket.once('connect', resolve)),
    waitFor: (pattern: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (pattern.test(received)) {
            listeners.delete(check)
            resolve()
          }
        }
        socket.once('close', () =>
          reject(new Error(`closed before ${pattern}: ${errors.join(', ')} ${received.slice(0, 200)}`)),
        )
        listeners.add(check)
        check()
      }),
  }
}
