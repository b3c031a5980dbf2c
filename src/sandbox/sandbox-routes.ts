// How a sandboxed agent reaches its ways out, the same for local runs and runs on an SSH target: the
// forwarder inside listens on the proxy's own port (and on a CONNECT proxy port when the profile names
// hosts) of the sandbox's loopback, so the agent's base URL is 127.0.0.1:<port> and its proxy variables
// name only what the forwarder relays.
import path from 'node:path'
import type { ModelEndpoint } from '../adapters/types.js'
import type { ForwarderRoute } from './forwarder-script.js'

/** Port of the CONNECT proxy inside the sandbox (only the forwarder listens there). */
const HOSTS_PORT = 3128

const PROXY_VARIABLES = ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy']

export interface SandboxRoutes {
  /** The forwarder's routes (port inside → socket bound in). */
  routes: ForwarderRoute[]
  /** The endpoint as the agent must reach it: the forwarder's port on the sandbox's loopback. */
  endpoint(endpoint: ModelEndpoint | undefined): ModelEndpoint | undefined
  /** The agent's environment without the daemon's proxy variables, plus the CONNECT proxy's when hosts are allowed. */
  environment(env: Record<string, string | undefined>): Record<string, string | undefined>
}

/** `proxySocket`/`hostsSocket`: the sockets as the sandbox sees them (undefined: no such way out). */
export function sandboxRoutes(
  proxyOrigin: string | undefined,
  sockets: { proxy: string; hosts: string | undefined },
): SandboxRoutes {
  const proxyPort = proxyOrigin ? Number(new URL(proxyOrigin).port || 80) : undefined
  const hostsPort = proxyPort === HOSTS_PORT ? HOSTS_PORT + 1 : HOSTS_PORT
  const routes: ForwarderRoute[] = []
  if (proxyPort !== undefined) routes.push({ port: proxyPort, socket: sockets.proxy })
  if (sockets.hosts) routes.push({ port: hostsPort, socket: sockets.hosts })
  return {
    routes,
    endpoint(endpoint) {
      if (!endpoint || proxyPort === undefined) return endpoint
      const url = new URL(endpoint.baseUrl)
      const inner = `http://127.0.0.1:${proxyPort}${url.pathname}`.replace(/\/+$/, '')
      return { ...endpoint, baseUrl: inner }
    },
    environment(env) {
      const copy = { ...env }
      for (const name of [...PROXY_VARIABLES, 'NO_PROXY', 'no_proxy']) delete copy[name]
      if (sockets.hosts) {
        const url = `http://127.0.0.1:${hostsPort}`
        for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy']) copy[name] = url
        copy.NO_PROXY = copy.no_proxy = '127.0.0.1,localhost'
      }
      return copy
    },
  }
}

/** What of an executable (its real path) must stay visible: its whole node_modules tree, else its directory. */
export function installRootOf(real: string): string {
  const marker = real.indexOf('/node_modules/')
  return marker >= 0 ? real.slice(0, marker + '/node_modules'.length) : path.posix.dirname(real)
}

/** True when `child` is `parent` or below it. */
export function inside(child: string, parent: string): boolean {
  const relative = path.posix.relative(parent, child)
  return relative === '' || (!relative.startsWith('..') && !path.posix.isAbsolute(relative))
}
