// Starting the HTTP listener. A non-loopback address is reachable from the network: binding one must be
// asked for with --public (or server.public), and says what it exposes.
import type { AddressInfo } from 'node:net'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { getRequestListener } from '@hono/node-server'
import type { Hono } from 'hono'
import { AppError } from '../core/errors.js'
import { isProxyPath } from '../proxy/proxy-handler.js'
import { statusOf, toErrorEnvelope } from './error-envelope.js'
import { isLoopbackHost } from './http-posture.js'

export { isLoopbackHost }

export interface BindCheck {
  /** What a public bind exposes and what the operator should do about it, one line each. */
  exposure?: string[]
}

/**
 * A loopback address is always fine. Anything else reaches the network, so it needs `public` (`hangar up
 * --public` or `server.public: true`) and comes back with what it exposes; without it, a usage error.
 */
export function checkBindAddress(host: string, options: { public: boolean }): BindCheck {
  if (isLoopbackHost(host)) return {}
  if (!options.public) {
    throw new AppError('usage', `refusing to listen on ${host}: that address is reachable from the network`, {
      hint: 'bind 127.0.0.1, or pass --public (or set server.public: true in hangar.yaml) to expose the daemon',
    })
  }
  return {
    exposure: [
      `listening on ${host} (public): reachable from the network are the REST API and web UI, the MCP endpoint (/api/mcp) and the LLM proxy (/proxy/…).`,
      'Every request needs a sign-in or a token, but plain http carries them in clear text: put a TLS reverse proxy in front and set server.trustProxy: true (and server.allowedHosts: [its name]) in hangar.yaml.',
    ],
  }
}

/** How long, and how much, of a body the daemon answered before reading is still read and dropped. */
const LINGER_MS = 30_000
const LINGER_BYTES = 64 * 1024 * 1024

/**
 * The app or the proxy may answer before it has read the body: 401 before a route reads it, 413 over the
 * limit, 415. The client is still sending, so the rest is read and dropped: closing with bytes unread would
 * reset the connection, and a client still writing would get EPIPE instead of the answer it was sent (nginx's
 * lingering close). A body read to its end leaves the connection fit for the next request. One still coming
 * after LINGER_MS or LINGER_BYTES is cut off, its answer long delivered.
 */
function readRestAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  // Ahead of Node's own 'finish' handler, which closes at once a connection the client asked to close.
  res.prependOnceListener('finish', () => {
    if (req.complete || req.destroyed) return
    const socket = req.socket
    let dropped = 0
    let closeAsked = false
    // Node closes a connection that ends with this answer (Connection: close) as soon as the answer is
    // written: with the body still coming, a reset. Send our FIN, and close once the body is read (RFC 9112,
    // 9.6).
    const destroySoon = socket.destroySoon
    socket.destroySoon = () => {
      closeAsked = true
      socket.end()
    }
    const cutOff = () => {
      stop()
      socket.destroySoon()
    }
    const timer = setTimeout(cutOff, LINGER_MS)
    timer.unref()
    const onData = (chunk: Buffer) => {
      dropped += chunk.length
      if (dropped > LINGER_BYTES) cutOff()
    }
    const stop = () => {
      clearTimeout(timer)
      req.off('data', onData)
      if (socket.destroySoon === destroySoon) return
      socket.destroySoon = destroySoon
      if (closeAsked) socket.destroySoon()
    }
    // Whatever was reading the body (the app's request stream) no longer wants it.
    req.removeAllListeners('data')
    req.on('data', onData)
    req.once('end', stop)
    req.once('close', stop)
    req.resume()
  })
}

export interface RunningServer {
  url: string
  port: number
  close(): Promise<void>
}

/** Handles `/proxy/…` itself (the LLM proxy streams raw bytes); everything else goes to the app. */
export type RawRequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>

export function listen(
  app: { fetch: Hono['fetch'] } | undefined,
  options: { host: string; port: number; proxy?: RawRequestHandler },
): Promise<RunningServer> {
  // Hono's own clean-up resets a connection whose body is still coming 500 ms after the answer; this one
  // waits for a slow uploader (readRestAfterAnswer).
  const appListener = app && getRequestListener(app.fetch, { autoCleanupIncoming: false })
  const proxy = options.proxy
  const server = createServer((req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') readRestAfterAnswer(req, res)
    if (proxy && isProxyPath(req.url)) void proxy(req, res)
    else if (appListener) {
      void appListener(req, res)
    } else {
      const notFound = new AppError('not_found', `no route ${req.method} ${req.url?.split('?')[0]}`)
      res.writeHead(statusOf(notFound.code), { 'content-type': 'application/json' })
      res.end(JSON.stringify(toErrorEnvelope(notFound)))
    }
  })
  return new Promise((resolve, reject) => {
    server.listen(options.port, options.host, () => {
      const info = server.address() as AddressInfo
      const host = info.family === 'IPv6' ? `[${info.address}]` : info.address
      resolve({
        url: `http://${host}:${info.port}`,
        port: info.port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done())
            // Keep-alive and SSE connections would hold close() open forever.
            server.closeAllConnections()
          }),
      })
    })
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') {
        reject(
          new AppError('unavailable', `port ${options.port} on ${options.host} is already in use`, {
            retryable: false,
            hint: 'is another hangar up running? pick another port with --port',
          }),
        )
      } else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') {
        reject(new AppError('usage', `cannot listen on ${options.host}: no such local address`))
      } else if (error.code === 'EACCES') {
        reject(
          new AppError('usage', `not allowed to listen on port ${options.port}`, {
            hint: 'use a port above 1023',
          }),
        )
      } else reject(error)
    })
  })
}
