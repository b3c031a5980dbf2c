// Who is calling: personal access tokens, sessions and one-time sign-in links. Every secret is shown
// once and stored as a SHA-256 of its secret part; a malformed or mistyped token (bad checksum) is
// refused before any database lookup.
import { AppError } from '../core/errors.js'
import { type Clock, systemClock } from '../core/ids.js'
import {
  forgetRevoked,
  listenForRevocations,
  publishRevocation,
  type RevocationNotice,
} from './proxy-revocations.js'
import { type CachedProxySession, createProxySessionCache } from './proxy-session-cache.js'
import type { AccessTokenRecord, TokenKind, TokenScope } from './repositories/tokens-repository.js'
import type { User } from './repositories/users-repository.js'
import { hashSecret, mintToken, parseToken, type SecretTokenKind, secretMatches } from './secret-token.js'
import type { Repositories, Store } from './store.js'

export const DEFAULT_TOKEN_TTL_MS = 90 * 86_400_000
export const LOGIN_LINK_TTL_MS = 15 * 60_000
export const INVITE_LINK_TTL_MS = 7 * 86_400_000
export const BROWSER_SESSION_TTL_MS = 30 * 86_400_000
/**
 * How stale a proxy token's `lastUsedAt` may get: the proxy's hot path skips the write in between. Also how
 * long a cached proxy session is trusted without reading the store (revocations through Hangar reach the
 * cache at once; this bounds only changes made behind its back).
 */
const PROXY_TOUCH_EVERY_MS = 60_000
const PROXY_CACHE_SIZE = 10_000
/** 100 years. Longer would reach past year 9999, where ISO dates stop sorting (or stop existing). */
export const MAX_TOKEN_TTL_MS = 36_500 * 86_400_000

export type Principal =
  | { via: 'session'; user: User; sessionId: string; sessionKind: 'browser' | 'cli' }
  | {
      via: 'token'
      user: User
      tokenId: string
      kind: TokenKind
      scopes: TokenScope[]
      profile: string | null
    }

/** A principal's audit actor string: never a secret, always enough to find the credential used. */
export function actorOf(principal: Principal | 'system'): string {
  if (principal === 'system') return 'system'
  return principal.via === 'session' ? `user:${principal.user.id}` : `pat:${principal.tokenId}`
}

const unauthorized = (message: string) =>
  new AppError('unauthorized', message, {
    hint: 'sign in again (hangar login) or create a new token (hangar token create)',
  })

export interface AuthServiceOptions {
  store: Store
  clock?: Clock
  /** How many authenticated proxy sessions to keep in memory (default 10,000; 0 = none). */
  proxyCacheSize?: number
}

export function createAuthService(options: AuthServiceOptions) {
  const { store } = options
  const clock = options.clock ?? systemClock
  const inFuture = (ms: number) => new Date(clock().getTime() + ms).toISOString()
  const proxySessions = createProxySessionCache({
    maxEntries: options.proxyCacheSize ?? PROXY_CACHE_SIZE,
    maxAgeMs: PROXY_TOUCH_EVERY_MS,
  })

  // SQLite: another process (`hangar token revoke`, a second daemon on the file) may have revoked a token;
  // whenever anything else committed, nothing cached is trusted (PostgreSQL tells through NOTIFY instead).
  let othersWrote = store.writesByOthers?.()
  function dropIfOthersWrote(fresh = false): void {
    const now = store.writesByOthers?.(fresh)
    if (now === othersWrote) return
    othersWrote = now
    proxySessions.clear()
  }

  /** This node forgets at once; the others when the NOTIFY reaches them (PostgreSQL only). */
  async function revoked(notice: RevocationNotice): Promise<void> {
    forgetRevoked(proxySessions, notice)
    await publishRevocation(store.notifications, notice)
  }

  /** A proxy token not in memory: read from the store, then cached (unless a revocation raced the read). */
  async function lookupProxySession(
    parsed: NonNullable<ReturnType<typeof parseToken>>,
    secret: string,
  ): Promise<CachedProxySession | undefined> {
    const generation = proxySessions.generation()
    const row = await store.authLookups.findToken(parsed.lookupId)
    if (!row || row.kind !== 'proxy' || !row.profile || !secretMatches(parsed.secret, row.secret_hash))
      return undefined
    if (row.revoked_at || row.expires_at <= clock().toISOString()) return undefined
    const user = await store.users.findById(row.user_id)
    if (!user || user.disabledAt) return undefined
    // Read when not cached (at most once a minute per token); written at most once a minute.
    const now = clock().getTime()
    if (!row.last_used_at || Date.parse(row.last_used_at) < now - PROXY_TOUCH_EVERY_MS)
      await store.authLookups.touchToken(row.id)
    const session = { tokenId: row.id, userId: row.user_id, runId: row.run_id, profile: row.profile }
    proxySessions.set(secret, generation, { session, expiresAtMs: Date.parse(row.expires_at), nowMs: now })
    return session
  }

  async function loadActiveUser(userId: string): Promise<User> {
    const user = await store.users.findById(userId)
    if (!user || user.disabledAt) throw unauthorized('this account is disabled')
    return user
  }

  return {
    async createToken(
      principal: Principal | 'system',
      userId: string,
      input: {
        name: string
        expiresInMs?: number
        scopes?: TokenScope[]
        kind?: TokenKind
        profile?: string | null
        /** A run's own proxy token: part of the run's record, so not audited on its own. */
        runId?: string
      },
    ): Promise<{ record: AccessTokenRecord; token: string }> {
      if (principal !== 'system' && principal.via === 'token') {
        throw new AppError('forbidden', 'a personal access token cannot manage tokens', {
          hint: 'use the web UI or the hangar CLI on the daemon host',
        })
      }
      const ttlMs = input.expiresInMs ?? DEFAULT_TOKEN_TTL_MS
      if (!(ttlMs > 0 && ttlMs <= MAX_TOKEN_TTL_MS)) {
        const maxDays = MAX_TOKEN_TTL_MS / 86_400_000
        throw new AppError(
          'invalid_request',
          `a token lifetime must be more than 0 and at most ${maxDays} days`,
          {
            details: { fields: [{ path: 'expiresIn', message: `expected at most ${maxDays} days` }] },
          },
        )
      }
      const minted = mintToken('pat')
      const record = await store.transaction(async (repositories) => {
        const created = await repositories.forUser(userId).tokens.create({
          id: minted.lookupId,
          name: input.name,
          kind: input.kind ?? 'user',
          scopes: [...new Set<TokenScope>(['api', ...(input.scopes ?? [])])],
          profile: input.profile ?? null,
          runId: input.runId ?? null,
          secretHash: minted.secretHash,
          expiresAt: inFuture(ttlMs),
        })
        if (input.runId === undefined)
          await audit(repositories, principal, userId, 'token.create', created.id, {
            name: created.name,
            kind: created.kind,
            scopes: created.scopes,
            expiresAt: created.expiresAt,
          })
        return created
      })
      return { record, token: minted.token }
    },

    async revokeToken(
      principal: Principal | 'system',
      userId: string,
      tokenId: string,
    ): Promise<AccessTokenRecord> {
      if (principal !== 'system' && principal.via === 'token') {
        throw new AppError('forbidden', 'a personal access token cannot manage tokens')
      }
      const record = await store.transaction(async (repositories) => {
        const tokens = repositories.forUser(userId).tokens
        const existing = await tokens.get(tokenId)
        if (!existing)
          throw new AppError('not_found', `no token ${tokenId}`, { hint: 'list them with hangar token list' })
        if (existing.revokedAt) return existing
        const revoked = (await tokens.revoke(tokenId))!
        await audit(repositories, principal, userId, 'token.revoke', tokenId, { name: revoked.name })
        return revoked
      })
      // Also when it was revoked already: a retry after a failed notify reaches the other nodes.
      await revoked({ tokenId })
      return record
    },

    /** Revokes a run's proxy tokens (its end): refused from the next request on, on every node. */
    async revokeRunTokens(userId: string, runId: string): Promise<void> {
      await store.forUser(userId).tokens.revokeForRun(runId)
      await revoked({ runId })
    },

    /** Keeps this node's proxy-session cache in step with revocations made on the others (PostgreSQL). */
    async listenForProxyRevocations(handlers: { onError: (error: unknown) => void }) {
      if (!store.notifications) return async () => {}
      return listenForRevocations(store.notifications, proxySessions, handlers.onError)
    },

    /**
     * Looks now, whatever the look interval, whether another process committed (SQLite: `hangar token
     * revoke`, a second daemon on the file), and forgets the cached sessions if so. The proxy calls it once
     * an answer is out: a request that follows within the interval finds the look done (a read of the file's
     * header, some 25 µs of a request's latency between requests, cold). Done only when due, it was still in
     * the path of the requests that came just after the interval ran out (one in three to seven, in turns).
     */
    checkOtherWriters: () => dropIfOthersWrote(true),

    /** How many proxy sessions are held in memory. */
    cachedProxySessions: () => proxySessions.size,

    /**
     * The proxy token in a `/proxy/<token>/…` URL: a live PAT of kind `proxy`. Undefined for anything
     * else (the proxy answers 401 without saying why, in the family's own error shape). Answered at once
     * (no promise) when the session is in memory, so the proxy does not wait a turn.
     */
    authenticateProxy(
      secret: string,
    ): CachedProxySession | undefined | Promise<CachedProxySession | undefined> {
      // The cache first: it holds only secrets that parsed and matched a stored token, so a hit needs
      // neither the parse nor its checksum (a miss still meets both before any database lookup).
      dropIfOthersWrote()
      const cached = proxySessions.get(secret, clock().getTime())
      if (cached) return cached
      const parsed = parseToken(secret, 'pat')
      if (!parsed) return undefined
      return lookupProxySession(parsed, secret)
    },

    /** A PAT (`hgr_…`) or a CLI/browser session secret (`hgs_…`) presented as a bearer credential. */
    async authenticate(secret: string): Promise<Principal> {
      const parsed = parseToken(secret)
      if (!parsed || parsed.kind === 'login')
        throw unauthorized('the token is malformed (check for a copy-paste error)')
      const now = clock().toISOString()
      if (parsed.kind === 'pat') {
        const row = await store.authLookups.findToken(parsed.lookupId)
        if (!row || !secretMatches(parsed.secret, row.secret_hash))
          throw unauthorized('the token is not valid')
        if (row.revoked_at) throw unauthorized('the token was revoked')
        if (row.expires_at <= now) throw unauthorized('the token has expired')
        const user = await loadActiveUser(row.user_id)
        await store.authLookups.touchToken(row.id)
        return {
          via: 'token',
          user,
          tokenId: row.id,
          kind: row.kind,
          scopes: JSON.parse(row.scopes) as TokenScope[],
          profile: row.profile,
        }
      }
      const row = await store.authLookups.findSession(parsed.lookupId)
      if (!row || !secretMatches(parsed.secret, row.secret_hash))
        throw unauthorized('the session is not valid')
      if (row.revoked_at) throw unauthorized('the session was signed out')
      if (row.expires_at <= now) throw unauthorized('the session has expired')
      return {
        via: 'session',
        user: await loadActiveUser(row.user_id),
        sessionId: row.id,
        sessionKind: row.kind,
      }
    },

    async createSession(
      userId: string,
      kind: 'browser' | 'cli',
      ttlMs = BROWSER_SESSION_TTL_MS,
    ): Promise<string> {
      const minted = mintToken('session')
      await store.forUser(userId).sessions.create({
        id: minted.lookupId,
        kind,
        secretHash: minted.secretHash,
        expiresAt: inFuture(ttlMs),
      })
      return minted.token
    },

    async endSession(principal: Principal): Promise<void> {
      if (principal.via !== 'session')
        throw new AppError('forbidden', 'only a signed-in session can sign out')
      await store.forUser(principal.user.id).sessions.revoke(principal.sessionId)
    },

    /** A one-time secret for a sign-in (or invite) link. */
    async createLoginLink(userId: string, purpose: 'login' | 'invite' = 'login'): Promise<string> {
      const minted = mintToken('login')
      await store.forUser(userId).sessions.createLoginLink({
        id: minted.lookupId,
        purpose,
        secretHash: minted.secretHash,
        expiresAt: inFuture(purpose === 'invite' ? INVITE_LINK_TTL_MS : LOGIN_LINK_TTL_MS),
      })
      return minted.token
    },

    /** Trades a login link for a browser session. The link works once. */
    async redeemLoginLink(secret: string): Promise<{ user: User; sessionToken: string }> {
      const parsed = parseToken(secret, 'login' satisfies SecretTokenKind)
      if (!parsed) throw unauthorized('the sign-in link is malformed (was it cut short?)')
      const link = await store.authLookups.consumeLoginLink(parsed.lookupId, hashSecret(parsed.secret))
      if (!link) {
        throw new AppError('unauthorized', 'the sign-in link was already used or has expired', {
          hint: 'run hangar login for a fresh one',
        })
      }
      const user = await loadActiveUser(link.user_id)
      const sessionToken = await this.createSession(user.id, 'browser')
      await store.forUser(user.id).audit.append({
        actor: `user:${user.id}`,
        action: 'session.create',
        details: { purpose: link.purpose },
      })
      return { user, sessionToken }
    },
  }
}

async function audit(
  repositories: Repositories,
  principal: Principal | 'system',
  userId: string,
  action: string,
  targetId: string,
  details: Record<string, unknown>,
): Promise<void> {
  await repositories
    .forUser(userId)
    .audit.append({ actor: actorOf(principal), action, targetType: 'token', targetId, details })
}

export type AuthService = ReturnType<typeof createAuthService>
