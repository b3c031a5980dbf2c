// The daemon's side of a sandbox's only ways out, each a Unix socket in a private directory (short, under
// the system temp dir, for the 108-byte limit of socket paths; bound read-only into the sandbox, where the forwarder relays 127.0.0.1:<port> to it):
// - `proxy.sock` relays bytes to the daemon's model proxy (its TCP origin), nothing else;
// - `hosts.sock`, only when the profile names `sandboxHosts`, is an HTTP CONNECT proxy that opens a tunnel
//   to an allowed host and refuses every other one (403), each attempt logged for the run.
// A sandbox has no other network: any other address fails at once (no route, or nothing listening).
import { mkdtemp, rm } from 'node:fs/promises'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import type { Logger } from '../core/logger.js'

export interface SandboxNetwork {
  /** The directory holding the sockets (bound read-only into the sandbox). */
  directory: string
  proxySocket: string
  hostsSocket: string | undefined
  /** CONNECT attempts so far (host:port and whether it was allowed), for the run's record. */
  attempts: { target: string; allowed: boolean }[]
  close(): Promise<void>
}

/** True when `host:port` is one of `allowed` (`name`, `*.domain`, each with an optional `:port`). */
export function hostAllowed(allowed: readonly string[], host: string, port: number): boolean {
  const name = host.toLowerCase().replace(/\.$/, '')
  return allowed.some((entry) => {
    const match = /^(.*?)(?::(\d+))?$/.exec(entry.toLowerCase())!
    const pattern = match[1]!
    const ports = match[2] ? [Number(match[2])] : [443, 80]
    if (!ports.includes(port)) return false
    if (pattern.startsWith('*.')) return name.endsWith(pattern.slice(1)) && name !== pattern.slice(2)
    return name === pattern
  })
}

function listen(server: net.Server, socket: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(socket, () => {
      server.off('error', reject)
      resolve()
    })
  })
}

function closeServer(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()))
}

export async function openSandboxNetwork(options: {
  runId: string
  /** The model proxy's origin (`http://127.0.0.1:7456`). */
  proxyOrigin: string | undefined
  hosts: readonly string[]
  log: Logger
}): Promise<SandboxNetwork> {
  // mkdtemp makes it 0700: no other local user can reach the sockets.
  const directory = await mkdtemp(path.join(os.tmpdir(), 'hangar-net-'))
  const servers: net.Server[] = []
  const sockets = new Set<net.Socket>()
  const track = (socket: net.Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  }
  const proxySocket = path.join(directory, 'proxy.sock')
  const origin = options.proxyOrigin ? new URL(options.proxyOrigin) : undefined
  const proxyServer = net.createServer((client) => {
    track(client)
    if (!origin) return client.destroy()
    const upstream = net.connect(Number(origin.port || 80), origin.hostname.replace(/^\[|\]$/g, ''))
    track(upstream)
    client.pipe(upstream)
    upstream.pipe(client)
    client.on('error', () => upstream.destroy())
    upstream.on('error', () => client.destroy())
  })
  await listen(proxyServer, proxySocket)
  servers.push(proxyServer)

  const attempts: SandboxNetwork['attempts'] = []
  let hostsSocket: string | undefined
  if (options.hosts.length > 0) {
    hostsSocket = path.join(directory, 'hosts.sock')
    const connectServer = http.createServer((_request, response) => {
      // Only tunnels: a plain-HTTP request through the proxy would let the agent pick any header or path.
      response.writeHead(405, { 'content-type': 'text/plain' }).end('hangar sandbox: only CONNECT\n')
    })
    connectServer.on('connection', track)
    connectServer.on('connect', (request: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      const target = request.url ?? ''
      const match = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(target)
      const allowed = match !== null && hostAllowed(options.hosts, match[1]!, Number(match[2]))
      attempts.push({ target, allowed })
      options.log.info('sandbox host request', { runId: options.runId, target, allowed })
      client.on('error', () => {})
      if (!allowed || !match) {
        client.end(
          'HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nhangar sandbox: host not allowed\n',
        )
        return
      }
      const upstream = net.connect(Number(match[2]), match[1]!, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
        if (head.length > 0) upstream.write(head)
        client.pipe(upstream)
        upstream.pipe(client)
      })
      track(upstream)
      upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'))
      client.on('close', () => upstream.destroy())
    })
    await listen(connectServer, hostsSocket)
    servers.push(connectServer)
  }

  return {
    directory,
    proxySocket,
    hostsSocket,
    attempts,
    async close() {
      for (const socket of sockets) socket.destroy()
      await Promise.all(servers.map(closeServer))
      await rm(directory, { recursive: true, force: true }).catch(() => {})
    },
  }
}
