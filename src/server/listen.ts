// Starting the HTTP listener. Auth is always on, so any address may be bound; a non-loopback one is
// reachable from the network and gets a warning (it must be asked for explicitly with --host).
import type { AddressInfo } from 'node:net'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { getRequestListener } from '@hono/node-server'
import type { Hono } from 'hono'
import { AppError } from '../core/errors.js'
import { isProxyPath } from '../proxy/proxy-handler.js'
import { statusOf, toErrorEnvelope } from './error-envelope.js'

export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host)
}

export interface BindCheck {
  warning?: string
}

/** Refuses a non-loopback bind without auth; with auth (always on) it only warns. */
export function checkBindAddress(host: string, options: { authEnabled: boolean }): BindCheck {
  if (isLoopbackHost(host)) return {}
  if (!options.authEnabled) {
    throw new AppError('usage', `refusing to listen on ${host} without authentication`, {
      hint: 'bind 127.0.0.1, or keep authentication on',
    })
  }
  return {
    warning: `listening on ${host}: Hangar is reachable from the network. Every request still needs a sign-in or a token; put TLS in front of it (a reverse proxy) before using it over an untrusted network.`,
  }
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
  const appListener = app && getRequestListener(app.fetch)
  const proxy = options.proxy
  const server = createServer((req, res) => {
    if (proxy && isProxyPath(req.url)) void proxy(req, res)
    else if (appListener) void appListener(req, res)
    else {
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
