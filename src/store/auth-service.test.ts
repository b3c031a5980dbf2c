import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { dumpStore } from '../../test/helpers/store-dump.js'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import { type AuthService, createAuthService } from './auth-service.js'
import type { User } from './repositories/users-repository.js'
import { hashSecret, mintToken, parseToken } from './secret-token.js'

describe.each(STORE_ENGINES)('auth-service ($name)', (engine) => {
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
    await testStore.dispose()
  })

  it('authenticates a fresh PAT with its scopes and records an audit row', async () => {
    const { token, record } = await auth.createToken('system', owner.id, { name: 'ci', scopes: ['approve'] })
    expect(token).toMatch(/^hgr_/)
    const principal = await auth.authenticate(token)
    expect(principal).toMatchObject({ via: 'token', tokenId: record.id, scopes: ['api', 'approve'] })
    expect(principal.user.id).toBe(owner.id)
    const audit = await testStore.store.forUser(owner.id).audit.list()
    expect(audit[0]).toMatchObject({ action: 'token.create', targetId: record.id, actor: 'system' })
    expect(JSON.stringify(audit)).not.toContain(token)
  })

  it('rejects a token with a bad checksum without a database lookup', async () => {
    const { token } = await auth.createToken('system', owner.id, { name: 'ci' })
    const lookup = vi.spyOn(testStore.store.authLookups, 'findToken')
    const typo = token.slice(0, 20) + (token[20] === 'a' ? 'b' : 'a') + token.slice(21)
    await expect(auth.authenticate(typo)).rejects.toMatchObject({ code: 'unauthorized' })
    await expect(auth.authenticate('hgr_nonsense')).rejects.toMatchObject({ code: 'unauthorized' })
    expect(lookup).not.toHaveBeenCalled()
  })

  it('rejects a well-formed token whose secret does not match the stored hash', async () => {
    const minted = mintToken('pat')
    await testStore.store.forUser(owner.id).tokens.create({
      id: minted.lookupId,
      name: 'other',
      kind: 'user',
      scopes: ['api'],
      secretHash: hashSecret('a different secret'),
      expiresAt: '2999-01-01T00:00:00.000Z',
    })
    await expect(auth.authenticate(minted.token)).rejects.toThrow(/not valid/)
  })

  it('rejects a revoked token and an expired one', async () => {
    const { token, record } = await auth.createToken('system', owner.id, { name: 'ci', expiresInMs: 60_000 })
    await auth.authenticate(token)
    now = new Date(now.getTime() + 61_000)
    await expect(auth.authenticate(token)).rejects.toThrow(/expired/)
    now = new Date('2026-06-01T00:00:00.000Z')
    await auth.revokeToken('system', owner.id, record.id)
    await expect(auth.authenticate(token)).rejects.toThrow(/revoked/)
  })

  it('never stores the token secret', async () => {
    const { token } = await auth.createToken('system', owner.id, { name: 'ci' })
    const sessionToken = await auth.createSession(owner.id, 'cli')
    await testStore.store.close()
    const dump = await dumpStore(testStore.databaseUrl, testStore.dataDir)
    testStore = await engine.open()
    expect(dump).toContain(parseToken(token)!.lookupId)
    expect(dump).not.toContain(parseToken(token)!.secret)
    expect(dump).not.toContain(parseToken(sessionToken)!.secret)
  })

  it('does not let a PAT manage tokens', async () => {
    const { token } = await auth.createToken('system', owner.id, { name: 'ci' })
    const principal = await auth.authenticate(token)
    await expect(auth.createToken(principal, owner.id, { name: 'more' })).rejects.toMatchObject({
      code: 'forbidden',
    })
  })

  it('trades a login link for a session once', async () => {
    const link = await auth.createLoginLink(owner.id)
    const { sessionToken, user } = await auth.redeemLoginLink(link)
    expect(user.id).toBe(owner.id)
    expect(await auth.authenticate(sessionToken)).toMatchObject({ via: 'session', sessionKind: 'browser' })
    await expect(auth.redeemLoginLink(link)).rejects.toThrow(/already used or has expired/)
  })

  it('signs a session out', async () => {
    const sessionToken = await auth.createSession(owner.id, 'browser')
    const principal = await auth.authenticate(sessionToken)
    await auth.endSession(principal)
    await expect(auth.authenticate(sessionToken)).rejects.toThrow(/signed out/)
  })

  it('refuses an expired login link', async () => {
    const link = await auth.createLoginLink(owner.id)
    now = new Date(now.getTime() + 16 * 60_000)
    await expect(auth.redeemLoginLink(link)).rejects.toMatchObject({ code: 'unauthorized' })
  })
})
