import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { STORE_ENGINES } from '../../test/helpers/store-engines.js'
import {
  bearer,
  envelope,
  errorEnvelopeOf,
  jsonInit,
  openTestApp,
  sessionCookieOf,
  type TestApp,
} from '../../test/helpers/test-runtime.js'
import { mintToken } from '../store/secret-token.js'

const URL_BASE = 'http://localhost'

/** Every field a token listing may show; nothing that could authenticate. */
const TOKEN_RECORD_KEYS = [
  'createdAt',
  'expiresAt',
  'id',
  'kind',
  'lastUsedAt',
  'name',
  'profile',
  'revokedAt',
  'runId',
  'scopes',
  'userId',
].sort()

describe.each(STORE_ENGINES)('auth routes ($name)', (engine) => {
  let now: Date
  let testApp: TestApp

  beforeEach(async () => {
    now = new Date('2026-06-01T00:00:00.000Z')
    testApp = await openTestApp({ engine, clock: () => now })
  })
  afterEach(async () => {
    await testApp.dispose()
  })

  const get = (path: string, headers: Record<string, string> = {}) =>
    testApp.app.request(`${URL_BASE}${path}`, { headers })

  async function expectUnauthorized(response: Response, message: string | RegExp): Promise<void> {
    expect(await errorEnvelopeOf(response, 401)).toEqual(
      envelope('unauthorized', typeof message === 'string' ? expect.stringContaining(message) : message),
    )
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="hangar"/)
  }

  describe('bearer and cookie authentication', () => {
    it('answers health without credentials', async () => {
      const response = await get('/api/health')
      expect(response.status).toBe(200)
      expect(await response.json()).toMatchObject({ status: 'ok', engine: engine.name, vault: 'ok' })
    })

    it('answers 401 with WWW-Authenticate when no credentials are sent', async () => {
      await expectUnauthorized(await get('/api/tokens'), 'sign in first')
      await expectUnauthorized(await get('/api/settings/providers'), 'sign in first')
    })

    it('answers 401 when the Authorization header is not "Bearer <token>"', async () => {
      const token = await testApp.createPat()
      await expectUnauthorized(
        await get('/api/settings/providers', { authorization: `Basic ${token}` }),
        'Bearer',
      )
      await expectUnauthorized(await get('/api/settings/providers', { authorization: 'Bearer' }), 'Bearer')
      await expectUnauthorized(
        await get('/api/settings/providers', { authorization: 'Bearer hgr_nonsense' }),
        'malformed',
      )
    })

    it('answers 401 for a well-formed PAT that was never issued', async () => {
      await expectUnauthorized(
        await get('/api/settings/providers', bearer(mintToken('pat').token)),
        'not valid',
      )
    })

    it('answers 401 for a PAT with one character changed (bad checksum)', async () => {
      const token = await testApp.createPat()
      const typo = token.slice(0, 20) + (token[20] === 'a' ? 'b' : 'a') + token.slice(21)
      await expectUnauthorized(await get('/api/settings/providers', bearer(typo)), 'malformed')
      expect((await get('/api/settings/providers', bearer(token))).status).toBe(200)
    })

    it('answers 401 for a revoked PAT', async () => {
      const token = await testApp.createPat()
      expect((await get('/api/settings/providers', bearer(token))).status).toBe(200)
      const [record] = await testApp.store.forUser(testApp.owner.id).tokens.list()
      await testApp.auth.revokeToken('system', testApp.owner.id, record!.id)
      await expectUnauthorized(await get('/api/settings/providers', bearer(token)), 'revoked')
    })

    it('answers 401 for a PAT once its expiry has passed', async () => {
      const token = await testApp.createPat(testApp.owner, { expiresInMs: 3_600_000 })
      now = new Date(now.getTime() + 3_599_000)
      expect((await get('/api/settings/providers', bearer(token))).status).toBe(200)
      now = new Date(now.getTime() + 1_000)
      await expectUnauthorized(await get('/api/settings/providers', bearer(token)), 'expired')
    })

    it('answers 401 for a proxy token used on /api', async () => {
      const token = await testApp.createPat(testApp.owner, { kind: 'proxy' })
      await expectUnauthorized(await get('/api/settings/providers', bearer(token)), 'proxy token')
    })

    it('refuses a PAT or a login link presented as the session cookie', async () => {
      const token = await testApp.createPat()
      await expectUnauthorized(await get('/api/tokens', { cookie: `hangar_session=${token}` }), 'cookie')
      const link = await testApp.auth.createLoginLink(testApp.owner.id)
      await expectUnauthorized(await get('/api/tokens', { cookie: `hangar_session=${link}` }), 'malformed')
    })
  })

  describe('sign-in, tokens and sign-out', () => {
    it('signs in with a one-time link, creates and lists a PAT, and signs out', async () => {
      const link = await testApp.auth.createLoginLink(testApp.owner.id)
      const login = await testApp.app.request(`${URL_BASE}/api/login`, jsonInit('POST', { token: link }))
      expect(login.status).toBe(200)
      expect(await login.json()).toEqual({
        user: { id: testApp.owner.id, name: 'owner', role: 'owner' },
      })
      const setCookie = login.headers.get('set-cookie')!
      expect(setCookie).toMatch(/^hangar_session=hgs_[a-z2-7]{12}_[0-9A-Za-z]{38};/)
      expect(setCookie).toContain('; HttpOnly')
      expect(setCookie).toContain('; SameSite=Strict')
      expect(setCookie).toContain('; Path=/')
      expect(setCookie).not.toContain('Secure')
      const cookie = sessionCookieOf(login)

      const created = await testApp.app.request(
        `${URL_BASE}/api/tokens`,
        jsonInit('POST', { name: 'ci', expiresIn: '30d' }, { cookie }),
      )
      expect(created.status).toBe(201)
      const createdBody = (await created.json()) as Record<string, unknown>
      const token = createdBody.token as string
      expect(token).toMatch(/^hgr_/)
      expect(createdBody).toMatchObject({
        name: 'ci',
        kind: 'user',
        scopes: ['api'],
        userId: testApp.owner.id,
        expiresAt: '2026-07-01T00:00:00.000Z',
        revokedAt: null,
      })
      expect(Object.keys(createdBody).sort()).toEqual([...TOKEN_RECORD_KEYS, 'token'].sort())

      const listed = await get('/api/tokens', { cookie })
      expect(listed.status).toBe(200)
      const listText = await listed.text()
      const list = JSON.parse(listText) as Record<string, unknown>[]
      expect(list).toHaveLength(1)
      expect(Object.keys(list[0]!).sort()).toEqual(TOKEN_RECORD_KEYS)
      expect(list[0]).toMatchObject({ id: createdBody.id, name: 'ci' })
      expect(listText).not.toContain(token)
      expect(listText).not.toContain(token.slice(17, 49))

      expect((await get('/api/settings/providers', bearer(token))).status).toBe(200)
      const session = await get('/api/session', { cookie })
      expect(await session.json()).toEqual({
        user: { id: testApp.owner.id, name: 'owner', role: 'owner' },
        via: 'session',
      })

      const reused = await testApp.app.request(`${URL_BASE}/api/login`, jsonInit('POST', { token: link }))
      await expectUnauthorized(reused, 'already used')
      expect(reused.headers.get('set-cookie')).toBeNull()

      const logout = await testApp.app.request(`${URL_BASE}/api/logout`, {
        method: 'POST',
        headers: { cookie },
      })
      expect(logout.status).toBe(204)
      expect(logout.headers.get('set-cookie')).toMatch(/^hangar_session=; Max-Age=0; Path=\//)
      await expectUnauthorized(await get('/api/tokens', { cookie }), 'signed out')
      await expectUnauthorized(await get('/api/session', { cookie }), 'signed out')
      // Signing out ends the browser session only; the PAT it created keeps working.
      expect((await get('/api/settings/providers', bearer(token))).status).toBe(200)
    })

    it('answers 401 for a malformed or unknown sign-in link', async () => {
      const malformed = await testApp.app.request(
        `${URL_BASE}/api/login`,
        jsonInit('POST', { token: 'hgl_x' }),
      )
      await expectUnauthorized(malformed, 'malformed')
      const unknown = await testApp.app.request(
        `${URL_BASE}/api/login`,
        jsonInit('POST', { token: mintToken('login').token }),
      )
      await expectUnauthorized(unknown, 'already used or has expired')
    })

    it('answers 401 for a sign-in link once its 15 minutes have passed', async () => {
      const link = await testApp.auth.createLoginLink(testApp.owner.id)
      now = new Date(now.getTime() + 15 * 60_000 + 1)
      const login = await testApp.app.request(`${URL_BASE}/api/login`, jsonInit('POST', { token: link }))
      await expectUnauthorized(login, 'expired')
    })

    it('lets a CLI session sent as a bearer credential manage tokens', async () => {
      const session = await testApp.auth.createSession(testApp.owner.id, 'cli')
      const created = await testApp.app.request(
        `${URL_BASE}/api/tokens`,
        jsonInit('POST', { name: 'from-cli' }, bearer(session)),
      )
      expect(created.status).toBe(201)
    })
  })

  describe('CSRF', () => {
    let cookie: string
    const evil = { origin: 'http://evil.example', host: 'localhost' }

    beforeEach(async () => {
      cookie = await testApp.signIn()
    })

    const request = (path: string, init: RequestInit) => testApp.app.request(`${URL_BASE}${path}`, init)
    const createToken = (headers: Record<string, string>) =>
      request('/api/tokens', jsonInit('POST', { name: 'ci' }, { cookie, ...headers }))
    const tokenCount = async () =>
      (await testApp.store.forUser(testApp.owner.id).tokens.list({ includeRevoked: true })).length

    it('answers 403 to a cookie-authenticated POST from another origin and writes nothing', async () => {
      const audit = await testApp.store.forUser(testApp.owner.id).audit.list()
      const response = await createToken(evil)
      expect(await errorEnvelopeOf(response, 403)).toEqual(
        envelope('forbidden', 'cross-origin request from http://evil.example refused'),
      )
      expect(await tokenCount()).toBe(0)
      expect(await testApp.store.forUser(testApp.owner.id).audit.list()).toEqual(audit)
    })

    // Regression: `new URL('null')` threw, so an opaque origin got 500 internal instead of 403.
    it('answers 403 to a cookie-authenticated POST from an opaque origin (Origin: null)', async () => {
      const response = await createToken({ origin: 'null', host: 'localhost' })
      expect(await errorEnvelopeOf(response, 403)).toEqual(
        envelope('forbidden', 'cross-origin request from null refused'),
      )
      expect(await tokenCount()).toBe(0)
    })

    it('refuses a cross-origin sign-out, so the session keeps working', async () => {
      const response = await request('/api/logout', { method: 'POST', headers: { cookie, ...evil } })
      expect((await errorEnvelopeOf(response, 403)).error.code).toBe('forbidden')
      expect((await get('/api/tokens', { cookie })).status).toBe(200)
    })

    it('accepts a same-origin POST and a cross-origin GET', async () => {
      expect((await createToken({ origin: 'http://localhost', host: 'localhost' })).status).toBe(201)
      expect((await get('/api/tokens', { cookie, ...evil })).status).toBe(200)
    })

    it('does not apply to a bearer PAT, which a browser never sends on its own', async () => {
      const token = await testApp.createPat()
      const body = { baseUrl: 'http://127.0.0.1:11434/v1' }
      const response = await request(
        '/api/settings/providers/ollama',
        jsonInit('PUT', body, { ...bearer(token), ...evil }),
      )
      expect(response.status).toBe(200)
    })
  })

  describe('a PAT cannot manage PATs', () => {
    it('answers 403 to POST, GET and DELETE /api/tokens with a PAT and changes nothing', async () => {
      const token = await testApp.createPat()
      const [record] = await testApp.store.forUser(testApp.owner.id).tokens.list()
      const forbidden = envelope('forbidden', expect.stringContaining('cannot manage tokens'))

      const created = await testApp.app.request(
        `${URL_BASE}/api/tokens`,
        jsonInit('POST', { name: 'escalate' }, bearer(token)),
      )
      expect(await errorEnvelopeOf(created, 403)).toEqual(forbidden)
      expect(await errorEnvelopeOf(await get('/api/tokens', bearer(token)), 403)).toEqual(forbidden)
      const revoked = await testApp.app.request(`${URL_BASE}/api/tokens/${record!.id}`, {
        method: 'DELETE',
        headers: bearer(token),
      })
      expect(await errorEnvelopeOf(revoked, 403)).toEqual(forbidden)

      const after = await testApp.store.forUser(testApp.owner.id).tokens.list({ includeRevoked: true })
      expect(after).toEqual([{ ...record, lastUsedAt: expect.any(String) }])
      expect(after[0]!.revokedAt).toBeNull()
    })
  })

  describe('another user', () => {
    it("answers 404 to bob revoking alice's token, and alice's token keeps working", async () => {
      const alice = testApp.owner
      const bob = await testApp.store.users.create({ name: 'bob', role: 'member' })
      const aliceToken = await testApp.createPat(alice, { name: 'alice-ci' })
      const [aliceRecord] = await testApp.store.forUser(alice.id).tokens.list()
      const bobCookie = await testApp.signIn(bob)

      const response = await testApp.app.request(`${URL_BASE}/api/tokens/${aliceRecord!.id}`, {
        method: 'DELETE',
        headers: { cookie: bobCookie },
      })
      expect(await errorEnvelopeOf(response, 404)).toEqual(
        envelope('not_found', `no token ${aliceRecord!.id}; list them with hangar token list`),
      )
      expect(await (await get('/api/tokens', { cookie: bobCookie })).json()).toEqual([])
      expect((await get('/api/settings/providers', bearer(aliceToken))).status).toBe(200)
      expect((await testApp.store.forUser(alice.id).tokens.get(aliceRecord!.id))!.revokedAt).toBeNull()
    })

    it('revokes its own token by id, after which the token answers 401', async () => {
      const cookie = await testApp.signIn()
      const created = await testApp.app.request(
        `${URL_BASE}/api/tokens`,
        jsonInit('POST', { name: 'short-lived' }, { cookie }),
      )
      const { id, token } = (await created.json()) as { id: string; token: string }
      const revoked = await testApp.app.request(`${URL_BASE}/api/tokens/${id}`, {
        method: 'DELETE',
        headers: { cookie },
      })
      expect(revoked.status).toBe(200)
      const revokedText = await revoked.text()
      expect(JSON.parse(revokedText)).toMatchObject({ id, revokedAt: now.toISOString() })
      expect(revokedText).not.toContain(token)
      await expectUnauthorized(await get('/api/settings/providers', bearer(token)), 'revoked')
    })
  })
})
