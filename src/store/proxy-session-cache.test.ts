// Proxy tokens answered from memory: a hit never reads the store, yet a revocation — of the token, or of a
// run's tokens at its end — refuses the very next request on this node, and reaches the other nodes
// sharing a PostgreSQL through NOTIFY. Expiry holds on a cached token; the cache stays within its size.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import { type AuthService, createAuthService } from './auth-service.js'
import { createProxySessionCache } from './proxy-session-cache.js'
import type { User } from './repositories/users-repository.js'
import { openStore, type Store } from './store.js'

async function waitFor(condition: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe.each(STORE_ENGINES)('proxy session cache ($name)', (engine) => {
  let testStore: TestStore
  let auth: AuthService
  let owner: User
  let now: Date

  beforeEach(async () => {
    now = new Date('2026-06-01T00:00:00.000Z')
    testStore = await engine.open({ clock: () => now })
    auth = createAuthService({ store: testStore.store, clock: () => now })
    owner = await testStore.store.users.create({ name: 'owner', role: 'owner' })
  })
  afterEach(async () => {
    vi.restoreAllMocks()
    await testStore.dispose()
  })

  const proxyToken = (input: { runId?: string; expiresInMs?: number } = {}) =>
    auth.createToken('system', owner.id, { name: 'p', kind: 'proxy', profile: 'reviewer', ...input })

  it('answers a known token from memory, without reading the store', async () => {
    const { token, record } = await proxyToken()
    expect(await auth.authenticateProxy(token)).toMatchObject({ tokenId: record.id, profile: 'reviewer' })
    const lookup = vi.spyOn(testStore.store.authLookups, 'findToken')
    const users = vi.spyOn(testStore.store.users, 'findById')
    for (let i = 0; i < 3; i++)
      expect(await auth.authenticateProxy(token)).toMatchObject({ tokenId: record.id, userId: owner.id })
    expect(lookup).not.toHaveBeenCalled()
    expect(users).not.toHaveBeenCalled()
  })

  it('refuses every other credential while a proxy token is cached, most without any lookup', async () => {
    const { token } = await proxyToken()
    expect(await auth.authenticateProxy(token)).toBeDefined()
    const api = await auth.createToken('system', owner.id, { name: 'api' })
    const session = await auth.createSession(owner.id, 'cli')
    const lookup = vi.spyOn(testStore.store.authLookups, 'findToken')
    // One character changed (the checksum no longer matches), cut short, or not a token at all: refused
    // by the parse, before any database lookup.
    const flipped = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`
    for (const forged of [flipped, token.slice(0, -1), `${token}x`, 'hgr_', ''])
      expect(await auth.authenticateProxy(forged)).toBeUndefined()
    expect(lookup).not.toHaveBeenCalled()
    // Well-formed but not a proxy token: a user's api PAT, or a CLI session's secret.
    expect(await auth.authenticateProxy(api.token)).toBeUndefined()
    expect(await auth.authenticateProxy(session)).toBeUndefined()
    expect(await auth.authenticateProxy(token)).toBeDefined()
  })

  it('refuses a revoked token on the very next request', async () => {
    const { token, record } = await proxyToken()
    expect(await auth.authenticateProxy(token)).toBeDefined()
    await auth.revokeToken('system', owner.id, record.id)
    expect(await auth.authenticateProxy(token)).toBeUndefined()
  })

  it('answers a session it holds at once, without a promise, and a revoked one not at all', async () => {
    const { token, record } = await proxyToken()
    expect(auth.authenticateProxy(token)).toBeInstanceOf(Promise)
    await auth.authenticateProxy(token)
    const cached = auth.authenticateProxy(token)
    expect(cached).not.toBeInstanceOf(Promise)
    expect(cached).toMatchObject({ tokenId: record.id, profile: 'reviewer' })
    await auth.revokeToken('system', owner.id, record.id)
    expect(await auth.authenticateProxy(token)).toBeUndefined()
  })

  it("refuses a run's tokens on the very next request once the run's tokens are revoked", async () => {
    const run = await testStore.store
      .forUser(owner.id)
      .runs.create({ agent: 'reviewer', adapter: 'claude-code', prompt: 'p', cwd: '/w' })
    const first = await proxyToken({ runId: run.id })
    const second = await proxyToken({ runId: run.id })
    const other = await proxyToken()
    for (const { token } of [first, second, other]) expect(await auth.authenticateProxy(token)).toBeDefined()
    await auth.revokeRunTokens(owner.id, run.id)
    expect(await auth.authenticateProxy(first.token)).toBeUndefined()
    expect(await auth.authenticateProxy(second.token)).toBeUndefined()
    expect(await auth.authenticateProxy(other.token)).toBeDefined()
  })

  it('refuses a cached token once it has expired', async () => {
    const { token } = await proxyToken({ expiresInMs: 60_000 })
    expect(await auth.authenticateProxy(token)).toBeDefined()
    now = new Date(now.getTime() + 60_000)
    expect(await auth.authenticateProxy(token)).toBeUndefined()
  })

  it('does not cache a session read while a revocation went through', async () => {
    const { token, record } = await proxyToken()
    // The lookup reads the row, then the revocation commits before the lookup finishes.
    const lookups = testStore.store.authLookups
    const realFind = lookups.findToken.bind(lookups)
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const slow = vi.spyOn(lookups, 'findToken').mockImplementationOnce(async (id) => {
      const row = await realFind(id)
      await gate
      return row
    })
    const inFlight = auth.authenticateProxy(token)
    await waitFor(async () => slow.mock.calls.length > 0, 'the lookup to start')
    await auth.revokeToken('system', owner.id, record.id)
    release()
    expect(await inFlight).toBeDefined() // concurrent with the revocation: it may pass
    expect(await auth.authenticateProxy(token)).toBeUndefined()
  })

  it('holds at most its bound of sessions', async () => {
    const small = createAuthService({ store: testStore.store, clock: () => now, proxyCacheSize: 2 })
    const tokens = await Promise.all([proxyToken(), proxyToken(), proxyToken()])
    for (const { token } of tokens) expect(await small.authenticateProxy(token)).toBeDefined()
    expect(small.cachedProxySessions()).toBe(2)
    // The evicted one is read from the store again, and still works.
    const lookup = vi.spyOn(testStore.store.authLookups, 'findToken')
    expect(await small.authenticateProxy(tokens[0]!.token)).toBeDefined()
    expect(lookup).toHaveBeenCalledTimes(1)
  })
})

describe('proxy session cache eviction', () => {
  const session = (tokenId: string) => ({ tokenId, userId: 'u', runId: null, profile: 'p' })
  const put = (cache: ReturnType<typeof createProxySessionCache>, key: string) =>
    cache.set(key, cache.generation(), { session: session(key), expiresAtMs: 1e15, nowMs: 0 })

  it('evicts the least recently used session: one hit often enough stays, however many come after it', () => {
    const cache = createProxySessionCache({ maxEntries: 4, maxAgeMs: 1e12 })
    for (const key of ['a', 'b', 'c', 'd']) put(cache, key)
    for (let index = 0; index < 20; index++) {
      expect(cache.get('a', 1)?.tokenId).toBe('a')
      put(cache, `new-${index}`)
      expect(cache.size).toBeLessThanOrEqual(4)
    }
    expect(cache.get('a', 1)?.tokenId).toBe('a')
    // Not hit: gone once four others came after it.
    for (const key of ['b', 'c', 'd', 'new-0', 'new-15']) expect(cache.get(key, 1)).toBeUndefined()
    expect(cache.get('new-19', 1)?.tokenId).toBe('new-19')
  })
})

const postgres = STORE_ENGINES.find((engine) => engine.name === 'postgres')!

describe('proxy session cache across nodes (postgres)', () => {
  let testStore: TestStore
  let owner: User
  const stops: (() => Promise<void>)[] = []
  // A clock that stands still: a cached session would never be re-read on its own.
  const now = new Date('2026-06-01T00:00:00.000Z')

  beforeEach(async () => {
    testStore = await postgres.open({ clock: () => now })
    owner = await testStore.store.users.create({ name: 'owner', role: 'owner' })
  })
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop()
    await testStore.dispose()
  })

  async function node(): Promise<AuthService> {
    const auth = createAuthService({ store: testStore.store, clock: () => now })
    stops.push(await auth.listenForProxyRevocations({ onError: () => {} }))
    return auth
  }

  it('a token revoked on one node is refused by the other, which had it cached', async () => {
    const [a, b] = [await node(), await node()]
    const { token, record } = await a.createToken('system', owner.id, {
      name: 'p',
      kind: 'proxy',
      profile: 'reviewer',
    })
    expect(await b.authenticateProxy(token)).toBeDefined()
    expect(await a.authenticateProxy(token)).toBeDefined()
    await a.revokeToken('system', owner.id, record.id)
    expect(await a.authenticateProxy(token)).toBeUndefined()
    await waitFor(async () => (await b.authenticateProxy(token)) === undefined, 'node b to refuse the token')
  })

  it("a run's tokens revoked on one node are refused by the other", async () => {
    const [a, b] = [await node(), await node()]
    const run = await testStore.store
      .forUser(owner.id)
      .runs.create({ agent: 'reviewer', adapter: 'claude-code', prompt: 'p', cwd: '/w' })
    const { token } = await a.createToken('system', owner.id, {
      name: 'p',
      kind: 'proxy',
      profile: 'reviewer',
      runId: run.id,
    })
    expect(await b.authenticateProxy(token)).toBeDefined()
    await a.revokeRunTokens(owner.id, run.id)
    await waitFor(async () => (await b.authenticateProxy(token)) === undefined, 'node b to refuse the token')
  })
})

describe('proxy session cache, another process on the same SQLite file', () => {
  let testStore: TestStore
  let other: Store
  let owner: User

  beforeEach(async () => {
    testStore = await STORE_ENGINES.find((engine) => engine.name === 'sqlite')!.open()
    // Its own connection, as `hangar token revoke` in another process has.
    other = await openStore({ dataDir: testStore.dataDir })
    owner = await testStore.store.users.create({ name: 'owner', role: 'owner' })
  })
  afterEach(async () => {
    await other.close()
    await testStore.dispose()
  })

  /** The daemon's auth service holding a proxy token (cached), and a revocation of it by the other process. */
  async function tokenHeldByDaemon() {
    const daemon = createAuthService({ store: testStore.store })
    const cli = createAuthService({ store: other })
    const { token, record } = await cli.createToken('system', owner.id, {
      name: 'p',
      kind: 'proxy',
      profile: 'reviewer',
    })
    expect(await daemon.authenticateProxy(token)).toBeDefined()
    expect(await daemon.authenticateProxy(token)).toBeDefined()
    return { daemon, token, revoke: () => cli.revokeToken('system', owner.id, record.id) }
  }

  it('a token revoked by another process is refused at the very next request once that process is done', async () => {
    const { daemon, token, revoke } = await tokenHeldByDaemon()
    await revoke()
    // As `hangar token revoke` does before it returns: its store closes, having waited out the daemon's look.
    await other.close()
    expect(await daemon.authenticateProxy(token)).toBeUndefined()
  })

  // The proxy looks ahead once an answer is out (checkOtherWriters): what that look finds must still reach
  // the next request, which then does not look again within the interval.
  it('a token revoked by another process is refused after a look done ahead of the request', async () => {
    const { daemon, token, revoke } = await tokenHeldByDaemon()
    await revoke()
    await other.close()
    daemon.checkOtherWriters()
    expect(await daemon.authenticateProxy(token)).toBeUndefined()
  })

  it('a token revoked by a process that stays open is refused within the look interval', async () => {
    const { daemon, token, revoke } = await tokenHeldByDaemon()
    await revoke()
    await waitFor(async () => (await daemon.authenticateProxy(token)) === undefined, 'the revocation seen')
  })
})
