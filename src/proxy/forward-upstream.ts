// Sends one proxied request upstream and passes the response back as it arrives: status and headers
// first, then every chunk the moment it comes (with backpressure), bytes unchanged — a gzip body stays
// gzip with its header. Usage is read from a decoded copy on the side. When the client goes away the
// upstream request is aborted, so the provider stops generating (and billing). Every request has a
// connect and an idle deadline, so a silent upstream fails the request instead of holding it (and its
// socket) forever.
// Upstream requests go through undici's dispatcher, not node:http's client: every model request of every
// agent passes here, and undici's HTTP/1.1 client (llhttp, pooled keep-alive sockets, one write per
// request) costs about a third less CPU per request than http.request (`npm run bench`, issue 19).
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import type { LookupFunction } from 'node:net'
import { urlToHttpOptions } from 'node:url'
import type { Agent as UndiciAgent, Dispatcher } from 'undici'
import { createBodyDecoder } from './content-coding.js'
import type { ProxyFamily } from './families.js'
import { createUsageChunkFilter } from './openai-usage-opt-in.js'
import type { UrlFamily } from './proxy-errors.js'
import { createUsageMeter, NO_USAGE, readingOf, type UsageReading } from './usage-meter.js'

export interface Upstream {
  /** The family's base URL (openai with `/v1`, anthropic and gemini without a version). */
  baseUrl: string
  /** A key Hangar holds for this user: it replaces whatever auth the client sent. */
  apiKey?: string
  /**
   * How the host of a base URL a user set is resolved: a lookup that refuses addresses the operator did not
   * allow. Its connections are pooled apart from the operator's upstreams.
   */
  lookup?: LookupFunction
  /** Send no client auth either (a run's agent carries the operator's login, not the user's). */
  dropClientAuth?: boolean
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  // The client's `Expect: 100-continue` was answered by this server; the body is here whole.
  'expect',
])

const AUTH_HEADERS = new Set(['authorization', 'x-api-key', 'x-goog-api-key'])

/**
 * What an agent is given instead of a real key (a client library may insist on one). It is Hangar's own
 * placeholder: the real key replaces it, and with no key (a keyless local endpoint) it is dropped.
 */
export const STAND_IN_KEY = 'hangar-proxy-holds-the-key'

/** A pooled connection unused this long is closed: an idle socket never stays open for good. */
const FREE_SOCKET_TIMEOUT_MS = 30_000
/** Connections per upstream origin; requests beyond them wait for a free one (on the connect deadline). */
const CONNECTIONS_PER_ORIGIN = 256

/**
 * undici's Agent, loaded by preloadUpstreamClient before the proxy is served (or on first use). Its
 * module alone, not the package's index (fetch, WebSocket, caches, mocks): 20-25 ms of start-up instead
 * of 70-75, and no such stall of the event loop once the daemon serves runs.
 */
let Agent: typeof UndiciAgent | undefined
let loading: Promise<typeof UndiciAgent> | undefined

export function preloadUpstreamClient(): Promise<typeof UndiciAgent> {
  loading ??= import('undici/lib/dispatcher/agent.js').then(
    (agent) => (Agent = agent.default),
    (error: unknown) => {
      loading = undefined
      throw error
    },
  )
  return loading
}

/**
 * The connection pools: one per way of resolving hosts (the system's, or a user URL's guarded lookup)
 * and connect deadline (a setting, so one or two in a daemon's life).
 */
const dispatchers = new Map<LookupFunction | undefined, Map<number, Dispatcher>>()

function dispatcherFor(
  Agent: typeof UndiciAgent,
  lookup: LookupFunction | undefined,
  connectMs: number,
): Dispatcher {
  let byDeadline = dispatchers.get(lookup)
  if (!byDeadline) dispatchers.set(lookup, (byDeadline = new Map()))
  let dispatcher = byDeadline.get(connectMs)
  if (!dispatcher) {
    dispatcher = new Agent({
      connections: CONNECTIONS_PER_ORIGIN,
      keepAliveTimeout: FREE_SOCKET_TIMEOUT_MS,
      keepAliveMaxTimeout: FREE_SOCKET_TIMEOUT_MS,
      connect: { timeout: connectMs, ...(lookup && { lookup }) },
    })
    byDeadline.set(connectMs, dispatcher)
  }
  return dispatcher
}

export interface UpstreamTimeouts {
  /** The connection (TCP, plus TLS for https) must be up within this long (proxy.upstreamConnectTimeoutMs). */
  connectMs: number
  /** No response headers, or no body bytes mid-stream, for this long (proxy.upstreamIdleTimeoutMs). */
  idleMs: number
}

/**
 * The upstream URL of a proxied path. Clients of the `openai` family are given `<proxy>/openai/v1`, so
 * their paths start with `/v1`, while OpenAI-style bases carry their own version (`…/v1`,
 * `…/api/v1`, `…/v1beta/openai`): that `/v1` is replaced by the base. Other families append the path,
 * without doubling a version the base already ends with.
 */
export function upstreamUrl(urlFamily: UrlFamily, baseUrl: string, path: string, query: string): URL {
  const { base, basePath, version } = parsedBase(baseUrl)
  let rest = path
  if (urlFamily === 'openai') rest = path.replace(/^\/v1(?=\/|$)/, '')
  else if (version && (path === version || path.startsWith(`${version}/`))) rest = path.slice(version.length)
  const target = new URL(`${base}${rest}${query}`)
  // Defence in depth (the handler refuses dot segments first): never above the base URL's own path.
  if (target.pathname !== basePath && !target.pathname.startsWith(`${basePath}/`)) {
    throw new Error(`the path ${path} leaves the upstream's base path ${basePath}`)
  }
  return target
}

interface ParsedBase {
  /** The base URL without trailing slashes. */
  base: string
  /** Its path, without trailing slashes. */
  basePath: string
  /** The version it ends with (`/v1`, `/v1beta`), if any. */
  version: string | undefined
  /** Its scheme, host and port: the connection pool's key. */
  origin: string
  /** Credentials in the URL (`https://user:pass@gateway`), sent as Basic auth when nothing else is. */
  basicAuth: string | undefined
}

/** Base URLs are few (one per provider or user setting): each is parsed once, not on every request. */
const parsedBases = new Map<string, ParsedBase>()
const MAX_PARSED_BASES = 1000

function parsedBase(baseUrl: string): ParsedBase {
  let parsed = parsedBases.get(baseUrl)
  if (parsed) return parsed
  const base = baseUrl.replace(/\/+$/, '')
  const url = new URL(base)
  // Decoded as node:http decodes them (`%40` in a password is an `@`).
  const { auth } = urlToHttpOptions(url)
  parsed = {
    base,
    basePath: url.pathname.replace(/\/+$/, ''),
    version: /\/v\d+[a-z0-9]*$/.exec(base)?.[0],
    origin: url.origin,
    basicAuth: auth == null ? undefined : `Basic ${Buffer.from(auth).toString('base64')}`,
  }
  if (parsedBases.size >= MAX_PARSED_BASES) parsedBases.clear()
  parsedBases.set(baseUrl, parsed)
  return parsed
}

/** The header the family's key goes in (OpenAI-style: a Bearer token). */
const KEY_HEADER: Record<UrlFamily, string> = {
  anthropic: 'x-api-key',
  gemini: 'x-goog-api-key',
  openai: 'authorization',
}

export interface ForwardInput {
  upstream: Upstream
  urlFamily: UrlFamily
  family: ProxyFamily
  method: string
  path: string
  query: string
  headers: IncomingHttpHeaders
  /** The client's body was decoded: its Content-Encoding does not go upstream. */
  bodyDecoded?: boolean
  /** Extra headers set on the upstream request (the hop header). */
  extraHeaders?: Record<string, string>
  body: Buffer
  stream: boolean
  model: string | undefined
  /** Drop the usage-only chunk we asked for on an OpenAI stream the client did not ask usage on. */
  hideUsageChunk: boolean
  req: IncomingMessage
  res: ServerResponse
  timeouts: UpstreamTimeouts
}

export interface ForwardResult {
  status: number
  /** The response's usage, read when asked (after the answer is out). */
  usage: UsageReading
  /** Why the upstream could not be reached (nothing was sent to the client then). */
  unreachable?: string
  /** Which deadline the upstream missed; before the response headers nothing was sent to the client. */
  timedOut?: 'connect' | 'idle'
  aborted: boolean
}

/**
 * The upstream request path of a proxied path without a query. It is the same for every request to that base
 * URL and path, and paths are few (`/v1/messages`, …): worked out once by upstreamUrl, then remembered.
 */
const queryFreePaths = new Map<string, string>()
const MAX_QUERY_FREE_PATHS = 1000

function queryFreePath(urlFamily: UrlFamily, baseUrl: string, path: string): string {
  const key = `${urlFamily}\0${baseUrl}\0${path}`
  let known = queryFreePaths.get(key)
  if (known === undefined) {
    known = upstreamUrl(urlFamily, baseUrl, path, '').pathname
    if (queryFreePaths.size >= MAX_QUERY_FREE_PATHS) queryFreePaths.clear()
    queryFreePaths.set(key, known)
  }
  return known
}

export function forwardUpstream(input: ForwardInput): Promise<ForwardResult> {
  return Agent
    ? forwardWith(Agent, input)
    : preloadUpstreamClient().then((loaded) => forwardWith(loaded, input))
}

function forwardWith(Agent: typeof UndiciAgent, input: ForwardInput): Promise<ForwardResult> {
  const { res } = input
  // Most requests carry no query: its parameters are looked at only when there is one.
  const query = input.query !== ''
  let requestPath: string
  let target: URL | undefined
  try {
    if (query) target = upstreamUrl(input.urlFamily, input.upstream.baseUrl, input.path, input.query)
    else requestPath = queryFreePath(input.urlFamily, input.upstream.baseUrl, input.path)
  } catch (error) {
    return Promise.resolve({
      status: 502,
      usage: NO_USAGE,
      unreachable: (error as Error).message,
      aborted: false,
    })
  }
  // What is not sent is left out as the headers are copied, not deleted afterwards: a delete turns the
  // object into a slow dictionary, which undici then walks. Left out: hop-by-hop headers, the body's coding
  // once it was decoded, and the client's credentials where Hangar sends the key (or must drop them).
  const { apiKey, dropClientAuth } = input.upstream
  const headers: Record<string, string | string[]> = {}
  const from = input.headers
  for (const name in from) {
    const value = from[name]
    if (value === undefined || HOP_BY_HOP.has(name)) continue
    if (name === 'content-encoding' && input.bodyDecoded) continue
    if (
      AUTH_HEADERS.has(name) &&
      (apiKey !== undefined || dropClientAuth || String(value).includes(STAND_IN_KEY))
    )
      continue
    headers[name] = value
  }
  if (input.extraHeaders) Object.assign(headers, input.extraHeaders)
  if (apiKey !== undefined) {
    headers[KEY_HEADER[input.urlFamily]] = input.urlFamily === 'openai' ? `Bearer ${apiKey}` : apiKey
    if (target?.searchParams.has('key')) target.searchParams.set('key', apiKey)
  } else if (target && dropClientAuth) target.searchParams.delete('key')
  if (target) requestPath = `${target.pathname}${target.search}`
  // The usage filter works on the bytes as they are: ask for them unencoded.
  if (input.hideUsageChunk) headers['accept-encoding'] = 'identity'
  if (input.body.length > 0 || input.method === 'POST' || input.method === 'PUT')
    headers['content-length'] = String(input.body.length)
  const { origin, basicAuth } = parsedBase(input.upstream.baseUrl)
  if (basicAuth !== undefined && headers.authorization === undefined) headers.authorization = basicAuth

  return new Promise((resolve) => {
    // The client left while its body was read or feeds fetched: nothing is sent upstream.
    if (clientGone(input)) return resolve({ status: 499, usage: NO_USAGE, aborted: true })
    let settled = false
    let aborted = false
    let timedOut: 'connect' | 'idle' | undefined
    let controller: Dispatcher.DispatchController | undefined
    let status = 502
    /** A successful response's usage is read (its coding, for the decoded copy the meter reads). */
    let metering = false
    let coding: string | undefined
    let meter: ReturnType<typeof createUsageMeter> | undefined
    let decoder: ReturnType<typeof createBodyDecoder> | undefined
    /** The meter and its decoder, made with the first chunk they read (meterLater), not before a byte goes. */
    const meterParts = () => {
      if (meter) return { meter, decoder }
      const made = createUsageMeter(input.family, input.stream, input.model)
      meter = made
      decoder = createBodyDecoder(coding)
      if (decoder) {
        decoder.on('data', (chunk: Buffer) => made.push(chunk))
        decoder.on('error', () => {})
      }
      return { meter: made, decoder }
    }
    let filter: ReturnType<typeof createUsageChunkFilter> | undefined
    /** Body bytes were written to the client (and its headers with them). */
    let bodySent = false
    const done = (result: Omit<ForwardResult, 'aborted' | 'timedOut'>) => {
      if (settled) return
      settled = true
      clearTimeout(connectTimer)
      resolve({ ...result, aborted, ...(timedOut && { timedOut }) })
    }
    // Until the request is on a connection: a wait for a free one in the pool counts, as the connect does.
    // (undici's own deadlines take over from there: response headers, then each body chunk.)
    const connectTimer = setTimeout(() => {
      timedOut = 'connect'
      abandon(new Error('upstream connect timeout'))
    }, input.timeouts.connectMs)
    // Aborted before it reached a connection: undici is told when it hands the request one.
    let abandoned: Error | undefined
    const abandon = (reason: Error) => {
      abandoned ??= reason
      if (!controller) settleError(reason)
    }
    res.once('close', () => {
      if (!res.writableFinished && !settled) {
        aborted = true
        if (controller) controller.abort(new Error('client went away'))
        else abandon(new Error('client went away'))
      }
    })
    const settleError = (error: Error & { code?: string }) => {
      if (aborted) return done({ status: 499, usage: NO_USAGE })
      if (error.code === 'UND_ERR_CONNECT_TIMEOUT') timedOut = 'connect'
      else if (error.code === 'UND_ERR_HEADERS_TIMEOUT' || error.code === 'UND_ERR_BODY_TIMEOUT')
        timedOut = 'idle'
      if (res.headersSent) {
        res.destroy()
        // After the chunks queued for the meter (meterLater).
        return meterLater(() => done({ status, usage: meter ? readingOf(meter) : NO_USAGE }))
      }
      if (timedOut) return done({ status: 504, usage: NO_USAGE })
      done({ status: 502, usage: NO_USAGE, unreachable: error.code ?? error.message })
    }

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(started) {
        controller = started
        if (abandoned) return started.abort(abandoned)
        clearTimeout(connectTimer)
      },
      onResponseStart(_controller, statusCode, fromUpstream, statusMessage) {
        // An informational response (103 Early Hints) is not the answer: the real one follows.
        if (statusCode < 200) return
        status = statusCode
        filter = input.hideUsageChunk && status < 300 ? createUsageChunkFilter() : undefined
        const responseHeaders: Record<string, string | string[]> = {}
        for (const name in fromUpstream) {
          const value = fromUpstream[name]
          if (value !== undefined && (!HOP_BY_HOP.has(name) || (name === 'content-length' && !filter)))
            responseHeaders[name] = value
        }
        res.writeHead(status, statusMessage, responseHeaders)
        // Headers go with the first body bytes: one write instead of two, and the client's first byte comes
        // with them. A stream's client still learns at once that its answer has begun: when the first
        // bytes were not in the same read as the headers, they go alone once this read is handled.
        if (input.stream)
          queueMicrotask(() => {
            if (!bodySent && !res.writableEnded && !res.destroyed) res.flushHeaders()
          })
        metering = status < 300
        coding = fromUpstream['content-encoding'] as string | undefined
      },
      onResponseData(paused, chunk) {
        if (metering)
          meterLater(() => {
            const parts = meterParts()
            if (parts.decoder) parts.decoder.write(chunk)
            else parts.meter.push(chunk)
          })
        const out = filter ? filter.push(chunk) : chunk
        if (out.length === 0) return
        bodySent = true
        // Held back for a slow client: undici's idle deadline does not run while paused.
        if (!res.write(out)) {
          paused.pause()
          res.once('drain', () => paused.resume())
        }
      },
      onResponseEnd() {
        const tail = filter?.end()
        if (tail && tail.length > 0) res.write(tail)
        res.end()
        if (!metering) return done({ status, usage: NO_USAGE })
        meterLater(() => {
          const { meter: metered, decoder: decoding } = meterParts()
          const usage = readingOf(metered)
          if (!decoding) return done({ status, usage })
          decoding.once('end', () => done({ status, usage }))
          decoding.once('error', () => done({ status, usage }))
          decoding.end()
        })
      },
      onResponseError(_controller, error) {
        settleError(error)
      },
    }
    dispatcherFor(Agent, input.upstream.lookup, input.timeouts.connectMs).dispatch(
      {
        origin,
        path: requestPath,
        method: input.method as Dispatcher.HttpMethod,
        headers,
        body: input.body,
        headersTimeout: input.timeouts.idleMs,
        bodyTimeout: input.timeouts.idleMs,
      },
      handler,
    )
  })
}

/**
 * Usage is read once the bytes of this read are on their way to the client: Node writes a response's chunks
 * on the next tick (corked), and microtasks run after it, in order. So reading usage (on a stream's first
 * chunk: the meter's set-up, a decompressor for a gzip answer, a JSON.parse of its message_start) never
 * delays a byte to the agent, and the meter still sees every chunk, in order, before its result is taken.
 */
const meterLater = (work: () => void): void => queueMicrotask(work)

/** The client's connection closed (a fully read request is destroyed too, so only the response tells). */
function clientGone({ res }: Pick<ForwardInput, 'res'>): boolean {
  return res.destroyed || (res.socket?.destroyed ?? false)
}
