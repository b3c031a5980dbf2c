// Fetches and caches context feeds for the proxy. A model request must always go on, so `collect` never
// rejects: a failed feed is served stale (its last good value) or unavailable, with a short reason. Values
// are cached per (agent, url) for their TTL; a failure is remembered for min(ttl, 30) s so a dead feed does
// not cost every request a timeout; one fetch per (agent, url) is in flight at a time, shared by callers.

import type { ServiceConfig } from '../core/config.js'
import { feedPathProblem } from '../core/feed-paths.js'
import { splitFrontmatter } from './feed-frontmatter.js'
import { type ResolvedFeed, serviceBase } from './feed-manifest.js'
import { feedPolicyProblem } from './feed-path-policy.js'

export type FeedStatus = 'fresh' | 'stale' | 'unavailable'

export interface FeedResult {
  feed: ResolvedFeed
  status: FeedStatus
  /** Frontmatter stripped; '' when unavailable. */
  content: string
  /** Content-Type `application/json` or `*\/*+json`. */
  json: boolean
  /** Byte length of the whole content (after frontmatter); undefined when reading stopped at maxBodyBytes. */
  totalBytes?: number
  /**
   * When the value's data was refreshed: the source's own `refreshed` frontmatter when it gives one (never
   * later than our fetch), else our fetch time. Absent when unavailable.
   */
  refreshedAt?: Date
  /** A stale value's age in whole seconds, from `refreshedAt` to when it was served. */
  ageSeconds?: number
  /** Why the value is stale or unavailable. Never holds a credential. */
  reason?: string
}

/** What the cache knows about one feed of one agent (ISO timestamps), for `hangar feeds` and the API. */
export interface FeedFetchState {
  status: FeedStatus | 'never'
  lastSuccessAt?: string
  lastAttemptAt?: string
  expiresAt?: string
  reason?: string
}

export interface FeedRequestContext {
  agent: string
  project: string
  runId?: string
}

export interface FeedFetcher {
  /**
   * One result per feed, in the same order; never rejects. At once (no promise) when every value is
   * cached fresh, as on most requests: the proxy then does not wait a turn.
   */
  collect(feeds: readonly ResolvedFeed[], context: FeedRequestContext): FeedResult[] | Promise<FeedResult[]>
  /** Reads the cache only; never fetches. */
  state(agent: string, feed: ResolvedFeed): FeedFetchState
}

export interface FeedFetcherOptions {
  /**
   * hangar.yaml's services: the fetcher checks each feed's URL against its service and the path policy
   * again before it sends a credential (a manifest is data; this is the last gate).
   */
  services: Record<string, ServiceConfig>
  timeoutMs: number
  /** Bearer token of a service, resolved at fetch time (env var or vault); undefined when it has none. */
  credentialFor(service: string): string | undefined | Promise<string | undefined>
  now?: () => number
  /** Stop reading a body past this many bytes (default 4 MiB); keep it above the per-feed injection cap. */
  maxBodyBytes?: number
}

const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
const MAX_FAILURE_BACKOFF_SECONDS = 30

interface CachedValue {
  content: string
  json: boolean
  totalBytes: number | undefined
  fetchedAt: number
  /** The source's refresh time, else `fetchedAt`. */
  refreshedAt: number
  expiresAt: number
  /** The fresh result served for this value, kept so every request while it is fresh gets the same one. */
  fresh?: FeedResult
}

interface CacheEntry {
  value?: CachedValue
  failure?: { at: number; retryAt: number; reason: string }
  lastAttemptAt?: number
  inFlight?: Promise<void>
}

interface FetchOutcome {
  value: Omit<CachedValue, 'fetchedAt' | 'refreshedAt' | 'expiresAt'>
  ttlSeconds?: number
  sourceRefreshedAt?: Date
}

export function createFeedFetcher(options: FeedFetcherOptions): FeedFetcher {
  const now = options.now ?? Date.now
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const cache = new Map<string, CacheEntry>()
  const refusals = new WeakMap<ResolvedFeed, string | undefined>()
  const entryFor = (agent: string, url: string): CacheEntry => {
    const key = `${agent}\u0000${url}`
    let entry = cache.get(key)
    if (!entry) cache.set(key, (entry = {}))
    return entry
  }

  async function refresh(entry: CacheEntry, feed: ResolvedFeed, context: FeedRequestContext): Promise<void> {
    entry.lastAttemptAt = now()
    try {
      const outcome = await fetchFeed(feed, context, options, maxBodyBytes)
      const fetchedAt = now()
      const ttlSeconds = outcome.ttlSeconds ?? feed.ttl
      // A source clock ahead of ours must not make a value look newer than our fetch of it.
      const refreshedAt = Math.min(outcome.sourceRefreshedAt?.getTime() ?? fetchedAt, fetchedAt)
      entry.value = { ...outcome.value, fetchedAt, refreshedAt, expiresAt: fetchedAt + ttlSeconds * 1000 }
      entry.failure = undefined
    } catch (error) {
      const at = now()
      const backoffSeconds = Math.min(feed.ttl, MAX_FAILURE_BACKOFF_SECONDS)
      entry.failure = { at, retryAt: at + backoffSeconds * 1000, reason: failureReason(error, options) }
    }
  }

  async function resolve(feed: ResolvedFeed, context: FeedRequestContext): Promise<FeedResult> {
    // hangar.yaml's manifests are resolved once, so checked once; a user's profile is re-resolved per request.
    if (!refusals.has(feed)) refusals.set(feed, refusalOf(feed, options.services))
    const refused = refusals.get(feed)
    if (refused) return unavailable(feed, `refused: ${refused}`)
    const entry = entryFor(context.agent, feed.url)
    const isFresh = () => entry.value !== undefined && now() < entry.value.expiresAt
    const inBackoff = () => entry.failure !== undefined && now() < entry.failure.retryAt
    if (!isFresh() && !inBackoff()) {
      entry.inFlight ??= refresh(entry, feed, context).finally(() => {
        entry.inFlight = undefined
      })
      await entry.inFlight
    }
    const { value, failure } = entry
    // Right after a successful fetch the value is served fresh even if a fake clock has moved past its TTL.
    // (One object per value and feed, so the block formatted from it is formatted once.)
    if (value && (failure === undefined || failure.at < value.fetchedAt))
      return value.fresh?.feed === feed ? value.fresh : (value.fresh = served(feed, value, 'fresh'))
    if (value) {
      const ageSeconds = Math.max(0, Math.floor((now() - value.refreshedAt) / 1000))
      return { ...served(feed, value, 'stale'), ageSeconds, reason: failure?.reason ?? 'refresh failed' }
    }
    return unavailable(feed, failure?.reason ?? 'not fetched')
  }

  /** The result `resolve` would give at once for a value cached fresh, else undefined (resolve decides). */
  function freshResult(feed: ResolvedFeed, agent: string): FeedResult | undefined {
    if (!refusals.has(feed) || refusals.get(feed) !== undefined) return undefined
    const entry = cache.get(`${agent}\u0000${feed.url}`)
    const value = entry?.value
    if (!value || !(now() < value.expiresAt)) return undefined
    if (entry.failure !== undefined && !(entry.failure.at < value.fetchedAt)) return undefined
    return value.fresh?.feed === feed ? value.fresh : (value.fresh = served(feed, value, 'fresh'))
  }

  return {
    collect(feeds, context) {
      // Every value cached fresh (most requests): no promise per feed.
      const ready: FeedResult[] = []
      for (const feed of feeds) {
        const result = freshResult(feed, context.agent)
        if (result === undefined) break
        ready.push(result)
      }
      if (ready.length === feeds.length) return ready
      return Promise.all(
        feeds.map((feed) =>
          resolve(feed, context).catch(() => unavailable(feed, 'internal error while fetching the feed')),
        ),
      )
    },
    state(agent, feed) {
      const entry = cache.get(`${agent}\u0000${feed.url}`)
      if (!entry) return { status: 'never' }
      const { value, failure } = entry
      const state: FeedFetchState = {
        status: value ? (now() < value.expiresAt ? 'fresh' : 'stale') : failure ? 'unavailable' : 'never',
      }
      if (value) state.lastSuccessAt = new Date(value.fetchedAt).toISOString()
      if (entry.lastAttemptAt !== undefined) state.lastAttemptAt = new Date(entry.lastAttemptAt).toISOString()
      if (value) state.expiresAt = new Date(value.expiresAt).toISOString()
      if (failure && (!value || failure.at >= value.fetchedAt)) state.reason = failure.reason
      return state
    },
  }
}

/**
 * Why the fetcher will not request this feed: the manifest refused it, its URL is not its service's URL
 * plus its path, or the path policy refuses it (for a user's feed, also without a known service).
 */
function refusalOf(feed: ResolvedFeed, services: Record<string, ServiceConfig>): string | undefined {
  if (feed.refused !== undefined) return feed.refused
  const service = Object.hasOwn(services, feed.source) ? services[feed.source] : undefined
  if (service && feed.url !== serviceBase(service.url) + feed.path)
    return `its URL is not service "${feed.source}"'s URL followed by its path`
  const policy = feedPolicyProblem(feed.path, feed.source, service, feed.trust)
  if (policy) return policy
  const requestPath = /^https?:\/\/[^/?#]+(\/.*)$/is.exec(feed.url)?.[1]
  if (requestPath === undefined) return 'its URL is not an http(s) URL with a path'
  const problem = feedPathProblem(requestPath)
  return problem && `URL path "${requestPath}" is refused: ${problem}`
}

function served(feed: ResolvedFeed, value: CachedValue, status: 'fresh' | 'stale'): FeedResult {
  const result: FeedResult = {
    feed,
    status,
    content: value.content,
    json: value.json,
    refreshedAt: new Date(value.refreshedAt),
  }
  if (value.totalBytes !== undefined) result.totalBytes = value.totalBytes
  return result
}

function unavailable(feed: ResolvedFeed, reason: string): FeedResult {
  return { feed, status: 'unavailable', content: '', json: false, reason }
}

/** A failure whose message is already the short reason to show. */
class FeedFailure extends Error {
  override readonly name = 'FeedFailure'
}

async function fetchFeed(
  feed: ResolvedFeed,
  context: FeedRequestContext,
  options: FeedFetcherOptions,
  maxBodyBytes: number,
): Promise<FetchOutcome> {
  // One deadline for the credential lookup, the headers and the body.
  const signal = AbortSignal.timeout(options.timeoutMs)
  const headers: Record<string, string> = {
    'X-Hangar-Agent': context.agent,
    'X-Hangar-Project': context.project,
  }
  if (context.runId) headers['X-Hangar-Run'] = context.runId
  const credential = await lookUpCredential(feed.source, options, signal)
  if (credential) headers.Authorization = `Bearer ${credential}`
  try {
    // A user's feed goes to its own path only: a redirect (an open one on the service) could lead the
    // credential elsewhere on it.
    const redirect = feed.trust === 'operator' ? 'follow' : 'manual'
    const response = await fetch(feed.url, { headers, signal, redirect })
    if (!response.ok) {
      await response.body?.cancel().catch(() => {})
      if (redirect === 'manual' && response.status >= 300 && response.status < 400)
        throw new FeedFailure(`HTTP ${response.status}: redirects are not followed for a user's feed`)
      throw new FeedFailure(`HTTP ${response.status} ${response.statusText}`.trim())
    }
    const mediaType = (response.headers.get('content-type') ?? '').split(';', 1)[0]!.trim().toLowerCase()
    const json = mediaType === 'application/json' || /^[\w.+-]+\/[\w.+-]+\+json$/.test(mediaType)
    const { text, complete } = await readText(response, maxBodyBytes)
    const { body, ttlSeconds, refreshedAt } = splitFrontmatter(text)
    const value = { content: body, json, totalBytes: complete ? Buffer.byteLength(body) : undefined }
    return {
      value,
      ...(ttlSeconds !== undefined && { ttlSeconds }),
      ...(refreshedAt !== undefined && { sourceRefreshedAt: refreshedAt }),
    }
  } catch (error) {
    throw withoutSecret(error, credential)
  }
}

/** Reads at most `maxBytes`, cut on a UTF-8 character boundary (the streaming decoder holds back a partial one). */
async function readText(response: Response, maxBytes: number): Promise<{ text: string; complete: boolean }> {
  if (!response.body) return { text: '', complete: true }
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  let text = ''
  let bytes = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return { text: text + decoder.decode(), complete: true }
    if (bytes + value.byteLength > maxBytes) {
      text += decoder.decode(value.subarray(0, maxBytes - bytes), { stream: true })
      await reader.cancel().catch(() => {})
      return { text, complete: false }
    }
    bytes += value.byteLength
    text += decoder.decode(value, { stream: true })
  }
}

/** A lookup error's message could quote the secret store, so only a fixed reason leaves this function. */
async function lookUpCredential(
  service: string,
  options: FeedFetcherOptions,
  signal: AbortSignal,
): Promise<string | undefined> {
  try {
    return await untilAborted(
      Promise.resolve().then(() => options.credentialFor(service)),
      signal,
    )
  } catch (error) {
    if (signal.aborted) throw error
    throw new FeedFailure(`credential lookup failed for service "${service}"`)
  }
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

function withoutSecret(error: unknown, credential: string | undefined): unknown {
  if (!credential || !(error instanceof Error) || !error.message.includes(credential)) return error
  return new Error(error.message.replaceAll(credential, '[redacted]'))
}

const ERROR_CODE_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_SOCKET: 'connection closed',
}

function failureReason(error: unknown, options: FeedFetcherOptions): string {
  if (error instanceof FeedFailure) return error.message
  if (error instanceof Error && error.name === 'TimeoutError')
    return `timed out after ${options.timeoutMs} ms`
  const code = errorCode(error) ?? errorCode(error instanceof Error ? error.cause : undefined)
  if (code) return ERROR_CODE_REASONS[code] ?? code
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined
  const message = cause ?? (error instanceof Error ? error.message : String(error))
  return message.replace(/\s+/g, ' ').trim().slice(0, 200) || 'fetch failed'
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined
  return typeof error.code === 'string' ? error.code : undefined
}
