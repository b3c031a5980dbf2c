// The LLM proxy: `/proxy/<token>/<family>/<path>` → the family's upstream + <path>. It is a plain Node
// request handler (not a framework route) so the body is read once, the response is passed through chunk
// by chunk with backpressure, and nothing is buffered or re-encoded on the way back. Feeds are spliced
// into the raw request body (lossless); usage is read from a decoded copy of the response.
// Before anything goes upstream, on every method and path: a request that already passed through this
// Hangar is refused (a loop), the token must be live (read per request, so a revocation holds at once) and
// the profile's budget unspent; a body in a coding we cannot read is refused rather than passed on unread.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { AppError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { FeedCaps, FeedFetcher, InjectedFeedSummary, ResolvedFeed } from '../feeds/index.js'
import { formatFeedBlocks } from '../feeds/index.js'
import { codingsOf, decodeBody, DecodedBodyTooLarge } from './content-coding.js'
import { familyOfPath, type ProxyFamily, type ProxyRoute } from './families.js'
import { forwardUpstream, type Upstream, type UpstreamTimeouts } from './forward-upstream.js'
import { feedsEdit } from './inject-feeds.js'
import { applyEditsToBytes, type JsonEdit } from './json-spans.js'
import { streamUsageEdit } from './openai-usage-opt-in.js'
import { proxyErrorBody, type ProxyErrorKind, type UrlFamily } from './proxy-errors.js'
import { NO_USAGE, type UsageReading } from './usage-meter.js'

export interface ProxySession {
  tokenId: string
  userId: string
  runId: string | null
  /** The agent profile (or adapter id) the token was minted for. */
  profile: string
}

/** What one proxied request did, for the request log, the run's `usage` event and the budget. */
export interface ProxiedRequest {
  family: ProxyFamily
  method: string
  /** The path after the family, without the token. */
  path: string
  model: string | undefined
  stream: boolean
  status: number
  feeds: InjectedFeedSummary[]
  /** Read by `record`, which may wait until the answer is out (after-answer-queue). */
  usage: UsageReading
  error: string | undefined
  /** What the request's run should be told (an `error` event): the upstream missed a deadline. */
  runError?: { code: 'timeout'; message: string; retryable: boolean }
  startedAt: Date
  durationMs: number
}

/** Answered at once when it is known (from memory), else later: the request path awaits only then. */
type Maybe<T> = T | Promise<T>

export interface ProxyDeps {
  authenticate(token: string): Maybe<ProxySession | undefined>
  upstreamFor(session: ProxySession, family: UrlFamily): Maybe<Upstream>
  feedsFor(session: ProxySession): Maybe<{ feeds: readonly ResolvedFeed[]; project: string }>
  fetcher: FeedFetcher
  caps: FeedCaps
  openaiPlacement: 'system' | 'user'
  bodyLimitBytes: number
  /** This proxy's own id in the hop header: seeing it come back in means the request looped. */
  instanceId: string
  timeouts: UpstreamTimeouts
  /** A message when the session's profile has spent its budget (no upstream call is made then). */
  budgetExceeded(session: ProxySession): Maybe<string | undefined>
  /** Stores the request (queued, written behind); never throws (failures are logged by the implementation). */
  record(session: ProxySession, request: ProxiedRequest): Maybe<void>
  /** A request of `session` arrived; the result is called once its response is over (run idle limits). */
  requestStarted?(session: ProxySession): () => void
  log: Logger
}

const URL_FAMILIES = new Set<string>(['anthropic', 'openai', 'gemini'])
const PREFIX = '/proxy/'

/** Sent on every upstream request: the ids of the Hangar proxies the request went through, in order. */
export const HOP_HEADER = 'x-hangar-hop'
/** A chain this long through other Hangars is a loop too (one that never comes back to us). */
const MAX_HOPS = 8

/** The hop ids a request arrived with. */
function hopsOf(header: string | string[] | undefined): string[] {
  // Most requests come straight from an agent: no header.
  if (header === undefined) return []
  const value = Array.isArray(header) ? header.join(',') : header
  return value
    .split(',')
    .map((hop) => hop.trim())
    .filter((hop) => hop !== '')
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`
}

export function isProxyPath(url: string | undefined): boolean {
  return url !== undefined && url.startsWith(PREFIX)
}

function sendError(
  res: ServerResponse,
  family: UrlFamily | undefined,
  kind: ProxyErrorKind,
  message: string,
) {
  const { status, body } = proxyErrorBody(family, kind, message)
  if (res.headersSent) {
    res.destroy()
    return status
  }
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
  res.end(body)
  return status
}

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'])
    if (declared > limit) return reject(new BodyTooLarge())
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        req.removeAllListeners('data')
        req.resume()
        reject(new BodyTooLarge())
      } else chunks.push(chunk)
    })
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)))
    req.once('error', reject)
  })
}

function modelOf(family: ProxyFamily, parsed: unknown, path: string): string | undefined {
  if (family === 'gemini') return /\/models\/([^/:]+):/.exec(path)?.[1]
  const model = (parsed as { model?: unknown }).model
  return typeof model === 'string' ? model : undefined
}

/**
 * Dot segments (plain or encoded), encoded slashes and backslashes: the URL parser would fold them and climb
 * above the path of the upstream's base URL (an operator's gateway prefix) with the key Hangar adds.
 */
const UNSAFE_PATH = /(^|\/)\.{1,2}(\/|$)|%2e|%2f|%5c|\\/i

/**
 * What a path is: its route, or 'unsafe' (UNSAFE_PATH). The same few paths come on every request
 * (`/v1/messages`, …), so each is worked out once and remembered (short ones only, a bounded number).
 */
const knownPaths = new Map<string, Readonly<ProxyRoute> | 'unsafe'>()
const MAX_KNOWN_PATHS = 1000
const MAX_KNOWN_PATH_LENGTH = 256

function routeOf(urlFamily: UrlFamily, rest: string): Readonly<ProxyRoute> | 'unsafe' {
  const key = urlFamily + rest
  let known = knownPaths.get(key)
  if (known !== undefined) return known
  known = UNSAFE_PATH.test(rest) ? 'unsafe' : Object.freeze(familyOfPath(urlFamily, rest))
  if (rest.length <= MAX_KNOWN_PATH_LENGTH) {
    if (knownPaths.size >= MAX_KNOWN_PATHS) knownPaths.clear()
    knownPaths.set(key, known)
  }
  return known
}

export function createProxyHandler(deps: ProxyDeps) {
  const log = deps.log.child({ component: 'proxy' })

  return async function handleProxy(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const startedAt = new Date()
    const url = req.url ?? '/'
    // `<token>/<family><rest>`, then the query: found by position, not split into an array per request.
    const queryAt = url.indexOf('?')
    const query = queryAt === -1 ? '' : url.slice(queryAt)
    const path = url.slice(PREFIX.length, queryAt === -1 ? url.length : queryAt)
    const tokenEnd = path.indexOf('/')
    const familyEnd = tokenEnd === -1 ? -1 : path.indexOf('/', tokenEnd + 1)
    const token = tokenEnd === -1 ? path : path.slice(0, tokenEnd)
    const urlFamilyName =
      tokenEnd === -1 ? '' : path.slice(tokenEnd + 1, familyEnd === -1 ? path.length : familyEnd)
    const urlFamily = URL_FAMILIES.has(urlFamilyName) ? (urlFamilyName as UrlFamily) : undefined
    const rest = familyEnd === -1 ? '/' : path.slice(familyEnd)
    if (!urlFamily) {
      sendError(
        res,
        undefined,
        'not_found',
        `unknown model family "${urlFamilyName}": expected anthropic, openai or gemini`,
      )
      return
    }
    const known = routeOf(urlFamily, rest)
    if (known === 'unsafe') {
      sendError(
        res,
        urlFamily,
        'not_found',
        `the path "${rest.slice(0, 200)}" holds a "." or ".." segment, an encoded dot or slash, or a backslash: a provider path never does`,
      )
      return
    }
    const hops = hopsOf(req.headers[HOP_HEADER])
    if (hops.includes(deps.instanceId) || hops.length >= MAX_HOPS) {
      // Logged here, once: the request goes no further, so the loop ends at its first repeat.
      log.warn('refused a proxy loop', { family: urlFamily, path: rest, hops: hops.length })
      const message = hops.includes(deps.instanceId)
        ? "this request came back to the Hangar proxy that forwarded it: the provider's base URL points at Hangar's own proxy; set it to the provider's endpoint"
        : `this request passed through ${hops.length} Hangar proxies: a base URL points from one to the next; set it to the provider's endpoint`
      sendError(res, urlFamily, 'loop_detected', message)
      return
    }
    const route = known
    let session: ProxySession | undefined
    try {
      const found = deps.authenticate(token)
      session = found instanceof Promise ? await found : found
    } catch (error) {
      log.error('proxy token lookup failed', { error })
    }
    if (!session) {
      sendError(
        res,
        urlFamily,
        'unauthorized',
        'the Hangar proxy token in this URL is unknown, expired or revoked',
      )
      return
    }
    // Open until the response's last byte or a dropped connection: while it is, the run is not idle.
    const requestEnded = deps.requestStarted?.(session)
    if (requestEnded) res.once('close', requestEnded)
    const method = req.method ?? 'GET'
    const outcome: ProxiedRequest = {
      family: route.family,
      method,
      path: rest,
      model: undefined,
      stream: route.stream ?? false,
      status: 0,
      feeds: [],
      usage: NO_USAGE,
      error: undefined,
      startedAt,
      durationMs: 0,
    }
    const finish = (status: number, error?: string) => {
      outcome.status = status
      outcome.error = error
      outcome.durationMs = Date.now() - startedAt.getTime()
      return deps.record(session, outcome)
    }

    // Every method, path and body (empty, or in any coding) meets the budget before anything goes upstream.
    const budget = deps.budgetExceeded(session)
    const overBudget = budget instanceof Promise ? await budget : budget
    if (overBudget) {
      await finish(sendError(res, urlFamily, 'budget_exceeded', overBudget), overBudget)
      return
    }
    const codings = codingsOf(req.headers['content-encoding'])
    if (!codings) {
      const coding = String(req.headers['content-encoding']).slice(0, 100)
      const message = `the request body's Content-Encoding "${coding}" is not one the proxy reads: send it unencoded, or as gzip, deflate or br`
      await finish(sendError(res, urlFamily, 'unsupported_media_type', message), 'unsupported content coding')
      return
    }

    const limitMb = Math.round(deps.bodyLimitBytes / (1024 * 1024))
    const tooLarge = (what: string) =>
      `the request body${what} is larger than the proxy's limit of ${limitMb} MB (proxy.bodyLimitMb in hangar.yaml)`
    let body: Buffer
    try {
      body = await readBody(req, deps.bodyLimitBytes)
    } catch (error) {
      if (error instanceof BodyTooLarge)
        await finish(sendError(res, urlFamily, 'payload_too_large', tooLarge('')), 'body too large')
      else res.destroy()
      return
    }

    let bodyDecoded = false
    if (route.injectable && method === 'POST' && body.length > 0) {
      let decoded: Buffer
      try {
        decoded = codings.length === 0 ? body : await decodeBody(body, codings, deps.bodyLimitBytes)
      } catch (error) {
        if (error instanceof DecodedBodyTooLarge) {
          const message = tooLarge(' (decompressed)')
          await finish(sendError(res, urlFamily, 'payload_too_large', message), 'body too large')
        } else {
          const message = (error as Error).message
          await finish(sendError(res, urlFamily, 'invalid_json', message), message)
        }
        return
      }
      // Decoded bytes are what goes upstream now: the header must say so.
      bodyDecoded = true
      const text = decoded.toString('utf8')
      let parsed: unknown
      try {
        parsed = JSON.parse(text)
      } catch (error) {
        const message = `the request body is not valid JSON: ${(error as Error).message}`
        await finish(sendError(res, urlFamily, 'invalid_json', message), 'invalid JSON')
        return
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        await finish(sendError(res, urlFamily, 'invalid_json', 'the request body must be a JSON object'))
        return
      }
      outcome.model = modelOf(route.family, parsed, rest)
      if (route.family !== 'gemini') outcome.stream = (parsed as { stream?: unknown }).stream === true
      // Changes to the body, as edits of the text: the bytes between them go upstream as they came.
      const edits: JsonEdit[] = []
      const found = deps.feedsFor(session)
      const { feeds, project } = found instanceof Promise ? await found : found
      if (feeds.length > 0) {
        const collected = deps.fetcher.collect(feeds, {
          agent: session.profile,
          project,
          ...(session.runId && { runId: session.runId }),
        })
        const results = collected instanceof Promise ? await collected : collected
        const blocks = formatFeedBlocks(results, deps.caps)
        outcome.feeds = blocks.feeds
        const edit = feedsEdit(route.family, text, parsed, blocks.text, {
          openaiPlacement: deps.openaiPlacement,
        })
        if (edit) edits.push(edit)
      }
      // Asked for on the client's behalf, so the usage chunk it did not ask for is hidden from it.
      const usageEdit =
        route.family === 'openai-chat' && outcome.stream ? streamUsageEdit(text, parsed) : undefined
      if (usageEdit) edits.push(usageEdit)
      edits.sort((a, b) => a.start - b.start)
      await forward(applyEditsToBytes(text, decoded, edits), usageEdit !== undefined)
      return
    }
    await forward(body, false)

    async function forward(payload: Buffer, hideUsageChunk: boolean): Promise<void> {
      let upstream: Upstream
      try {
        const found = deps.upstreamFor(session!, urlFamily!)
        upstream = found instanceof Promise ? await found : found
      } catch (error) {
        const message = (error as Error).message
        // A request this agent's upstream cannot serve (another family's path) is the client's mistake.
        const kind =
          error instanceof AppError && error.code === 'not_found' ? 'not_found' : 'upstream_unreachable'
        await finish(sendError(res, urlFamily, kind, message), message)
        return
      }
      const result = await forwardUpstream({
        upstream,
        urlFamily: urlFamily!,
        family: route.family,
        method,
        path: rest,
        query,
        headers: req.headers,
        bodyDecoded,
        extraHeaders: {
          [HOP_HEADER]: hops.length === 0 ? deps.instanceId : `${hops.join(', ')}, ${deps.instanceId}`,
        },
        body: payload,
        stream: outcome.stream,
        model: outcome.model,
        hideUsageChunk,
        req,
        res,
        timeouts: deps.timeouts,
      })
      outcome.usage = result.usage
      if (result.timedOut) {
        const message = timeoutMessage(upstream, result.timedOut)
        outcome.runError = { code: 'timeout', message, retryable: true }
        const status = res.headersSent
          ? result.status
          : sendError(res, urlFamily, 'upstream_timeout', message)
        await finish(status, message)
        return
      }
      if (result.unreachable) {
        const message = `the model provider could not be reached: ${result.unreachable}`
        await finish(sendError(res, urlFamily, 'upstream_unreachable', message), message)
        return
      }
      return finish(result.status, result.aborted ? 'client went away' : undefined)
    }
  }

  function timeoutMessage(upstream: Upstream, deadline: 'connect' | 'idle'): string {
    // The host only: a base URL may carry credentials or a key in its query.
    const host = URL.canParse(upstream.baseUrl) ? new URL(upstream.baseUrl).host : 'its base URL'
    return deadline === 'connect'
      ? `the model provider at ${host} did not accept a connection within ${seconds(deps.timeouts.connectMs)} (proxy.upstreamConnectTimeoutMs in hangar.yaml)`
      : `the model provider at ${host} sent nothing for ${seconds(deps.timeouts.idleMs)} (proxy.upstreamIdleTimeoutMs in hangar.yaml)`
  }
}
