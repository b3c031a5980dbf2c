// What a request says about where it came from and where it was sent, read the same way by every guard:
// the scheme (the connection's, or X-Forwarded-Proto behind a trusted proxy), the client (the socket's
// address, or the hop our proxy added to X-Forwarded-For), and the Host the browser used. On top of that,
// two guards: the Host check against DNS rebinding, and the same-origin check for cookie-authenticated
// writes (CSRF).
import type { IncomingMessage } from 'node:http'
import { isIP } from 'node:net'
import type { Context, MiddlewareHandler } from 'hono'
import { AppError } from '../core/errors.js'

export interface HttpPosture {
  /** `server.trustProxy`: a TLS reverse proxy in front sets X-Forwarded-Proto and X-Forwarded-For. */
  trustProxy: boolean
  /** The address the daemon listens on (`hangar up --host`). */
  bindHost: string
  /** `server.allowedHosts`: further names browsers use (the reverse proxy's name). */
  allowedHosts: readonly string[]
}

/** A daemon on its defaults: loopback, no proxy in front. Apps built without a posture get this one. */
export const LOOPBACK_POSTURE: HttpPosture = { trustProxy: false, bindHost: '127.0.0.1', allowedHosts: [] }

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]'])
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]', ''])

export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host)
}

function incomingOf(context: Context): IncomingMessage | undefined {
  return (context.env as { incoming?: IncomingMessage } | undefined)?.incoming
}

/** The last value of a comma-separated forwarding header: the one our own (trusted) proxy added. */
function lastForwarded(value: string | undefined): string | undefined {
  const last = value?.split(',').at(-1)?.trim()
  return last || undefined
}

export function requestScheme(context: Context, posture: HttpPosture): 'http' | 'https' {
  if (posture.trustProxy) {
    const forwarded = lastForwarded(context.req.header('x-forwarded-proto'))?.toLowerCase()
    if (forwarded === 'https' || forwarded === 'http') return forwarded
  }
  return new URL(context.req.url).protocol === 'https:' ? 'https' : 'http'
}

/**
 * Who is calling, for per-client limits: the socket's peer, or behind a trusted proxy the address that
 * proxy appended to X-Forwarded-For. Not the leftmost entry: that one is whatever the client sent, and a
 * guesser would pick a fresh one for every request. An IPv6 client counts as its /64 (one host owns a
 * whole /64 and could otherwise rotate through it).
 */
export function clientAddress(context: Context, posture: HttpPosture): string {
  const forwarded = posture.trustProxy ? lastForwarded(context.req.header('x-forwarded-for')) : undefined
  const address = forwarded ?? incomingOf(context)?.socket?.remoteAddress ?? 'unknown'
  if (isIP(address) === 6 && !address.startsWith('::ffff:')) {
    const groups = expandIpv6(address)
    return groups ? `${groups.slice(0, 4).join(':')}::/64` : address
  }
  return address.replace(/^::ffff:/, '')
}

function expandIpv6(address: string): string[] | null {
  const [head = '', tail = ''] = address.split('::')
  const left = head ? head.split(':') : []
  const right = address.includes('::') && tail ? tail.split(':') : []
  const fill = address.includes('::') ? Array<string>(8 - left.length - right.length).fill('0') : []
  const groups = [...left, ...fill, ...right]
  return groups.length === 8 ? groups.map((group) => group.toLowerCase()) : null
}

/** The Host the request was sent to (the header; the URL's authority when a test or HTTP/2 gives none). */
export function requestHost(context: Context): string {
  return (context.req.header('host') ?? new URL(context.req.url).host).toLowerCase()
}

/** `scheme://host[:port]` of the request itself, for comparing with its Origin header. */
export function requestOrigin(context: Context, posture: HttpPosture): string | null {
  const candidate = `${requestScheme(context, posture)}://${requestHost(context)}`
  return URL.canParse(candidate) ? new URL(candidate).origin : null
}

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * A cookie rides along on any request the browser makes, so a write that relies on it must come from our
 * own pages: an Origin equal to ours in scheme, host and port; with no Origin (some browsers omit it),
 * Sec-Fetch-Site must not say another site sent it. A request with neither is not a browser's cross-site
 * request (every browser that omits Origin on a cross-site POST sends Sec-Fetch-Site).
 */
export function assertSameOrigin(context: Context, posture: HttpPosture): void {
  if (!UNSAFE_METHODS.has(context.req.method)) return
  const origin = context.req.header('origin')
  if (origin !== undefined) {
    // An opaque origin (`Origin: null`, from a sandboxed frame or a redirect) is never ours.
    const own = requestOrigin(context, posture)
    if (!own || !URL.canParse(origin) || new URL(origin).origin !== own) {
      throw new AppError('forbidden', `cross-origin request from ${origin} refused`)
    }
    return
  }
  const site = context.req.header('sec-fetch-site')?.toLowerCase()
  if (site === 'cross-site' || site === 'same-site') {
    throw new AppError('forbidden', `cross-origin request (Sec-Fetch-Site: ${site}) refused`)
  }
}

function splitHost(host: string): { name: string; port: string } {
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(host)
  return match ? { name: match[1]!, port: match[2] ?? '' } : { name: host, port: '' }
}

function hostAllowed(host: string, posture: HttpPosture, localPort: number | undefined): boolean {
  const { name, port } = splitHost(host)
  if (posture.allowedHosts.some((allowed) => allowed.toLowerCase() === name)) return true
  // A name of our own must come with our own port (a test's in-process request has no socket to ask).
  if (localPort !== undefined && port !== String(localPort)) return false
  const bind = posture.bindHost.toLowerCase()
  const bindName = bind.includes(':') && !bind.startsWith('[') ? `[${bind}]` : bind
  if (name === bindName && !WILDCARD_HOSTS.has(bind)) return true
  if (isLoopbackHost(bind) || WILDCARD_HOSTS.has(bind)) {
    if (LOOPBACK_NAMES.has(name)) return true
  }
  // On a wildcard bind any address literal is fine: rebinding needs a DNS name the attacker controls, and
  // people reach such a daemon by whatever address their network (or NAT) gives it.
  return WILDCARD_HOSTS.has(bind) && isIP(name.replace(/^\[|\]$/g, '')) !== 0
}

/**
 * DNS rebinding: a page on attacker.example, whose name now resolves to 127.0.0.1, is same-origin with
 * itself and can read what the daemon answers. Its requests still carry `Host: attacker.example`, so any
 * Host that is not one of our names is refused, on every route, signed-in or not.
 *
 * `/proxy/…` is not behind this guard (listen() hands it to the proxy before the app sees it): agents on
 * SSH targets reach it through a reverse tunnel as `127.0.0.1:<a port of the remote host>`, containers as
 * whatever name their network gives the host, and it trusts nothing but the unguessable token in its
 * path — which a rebound page does not have.
 */
export function createHostGuard(posture: HttpPosture): MiddlewareHandler {
  return async (context, next) => {
    const localPort = incomingOf(context)?.socket?.localPort
    // The Host header is what a browser sends and what the URL is built from (an absolute-form request
    // target comes only from a client that could send any Host anyway).
    const host = requestHost(context)
    if (!hostAllowed(host, posture, localPort)) {
      const suggestion = localPort === undefined ? '127.0.0.1' : `127.0.0.1:${localPort}`
      throw new AppError('forbidden', `requests for host "${host}" are refused (DNS rebinding guard)`, {
        hint: `use http://${suggestion}, or add the name to server.allowedHosts in hangar.yaml`,
      })
    }
    await next()
  }
}
