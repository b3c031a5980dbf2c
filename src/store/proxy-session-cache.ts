// Authenticated proxy sessions kept in memory, so a proxied request does not wait on the store to learn
// who it is. Keyed by the whole presented token: a wrong secret never matches an entry. Not by a hash of it:
// the entries live in this process's memory, as the requests that present the tokens do, and a SHA-256 on
// every proxied request was a measured part of the proxy's added latency (issue 19).
// Correctness rests on invalidation, never on age alone: whatever revokes a token drops its entry here
// at once (auth-service), and other daemons sharing a PostgreSQL hear of it through NOTIFY
// (proxy-revocations). A generation counter keeps a lookup that raced a revocation from caching what it
// read before the revocation committed. Entries are re-read after `maxAgeMs`, a safety net for changes
// made outside Hangar (a row edited by hand) and the moment `lastUsedAt` gets written.

export interface CachedProxySession {
  tokenId: string
  userId: string
  runId: string | null
  profile: string
}

interface Entry {
  session: CachedProxySession
  /** The token's own expiry (ms since epoch). */
  expiresAtMs: number
  /** When this entry stops being trusted and the store is read again. */
  staleAtMs: number
  /** The count of insertions when it was last put at the recent end. */
  order: number
}

export interface ProxySessionCache {
  get(key: string, nowMs: number): CachedProxySession | undefined
  /** The generation to hand back to `set`: a lookup that began before an invalidation is not cached. */
  generation(): number
  set(
    key: string,
    generation: number,
    entry: { session: CachedProxySession; expiresAtMs: number; nowMs: number },
  ): void
  forgetToken(tokenId: string): void
  forgetRun(runId: string): void
  /** Everything (a lost notification connection: what it missed is unknown). */
  clear(): void
  /** While suspended nothing is answered nor stored (the notification connection is down). */
  suspend(): void
  resume(): void
  readonly size: number
}

export function createProxySessionCache(options: {
  maxEntries: number
  maxAgeMs: number
}): ProxySessionCache {
  // A Map iterates in insertion order: re-inserting an entry that is hit makes the first key the least
  // recently used. Only one in the older half is moved, though: a delete and a set on every hit made the Map
  // rebuild its table every few requests, garbage that outlived scavenges and kept the proxy in a
  // Mark-Compact every ~15k requests under load. One of the newer half is not near eviction anyway.
  const entries = new Map<string, Entry>()
  let insertions = 0
  let generation = 0
  let suspended = false

  function forgetWhere(matches: (session: CachedProxySession) => boolean) {
    generation++
    for (const [key, entry] of entries) if (matches(entry.session)) entries.delete(key)
  }

  return {
    get(key, nowMs) {
      if (suspended) return undefined
      const entry = entries.get(key)
      if (!entry) return undefined
      if (nowMs >= entry.expiresAtMs || nowMs >= entry.staleAtMs) {
        entries.delete(key)
        return undefined
      }
      if (insertions - entry.order > options.maxEntries / 2) {
        entries.delete(key)
        entry.order = ++insertions
        entries.set(key, entry)
      }
      return entry.session
    },
    generation: () => generation,
    set(key, seen, { session, expiresAtMs, nowMs }) {
      if (suspended || seen !== generation || options.maxEntries <= 0) return
      entries.delete(key)
      entries.set(key, { session, expiresAtMs, staleAtMs: nowMs + options.maxAgeMs, order: ++insertions })
      while (entries.size > options.maxEntries) entries.delete(entries.keys().next().value!)
    },
    forgetToken: (tokenId) => forgetWhere((session) => session.tokenId === tokenId),
    forgetRun: (runId) => forgetWhere((session) => session.runId === runId),
    clear() {
      generation++
      entries.clear()
    },
    suspend() {
      suspended = true
      this.clear()
    },
    resume() {
      this.clear()
      suspended = false
    },
    get size() {
      return entries.size
    },
  }
}
