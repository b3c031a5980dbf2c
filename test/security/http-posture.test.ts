// Issue 17 item 10: the web and HTTP posture, attacked through the app as a browser, a rebinding page, a
// reverse proxy and a token guesser would reach it. Each block names the attack it replays.
import { createHash } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { HttpPosture } from '../../src/server/http-posture.js'
import { listen } from '../../src/server/listen.js'
import { mintToken } from '../../src/store/secret-token.js'
import {
  bearer,
  envelope,
  errorEnvelopeOf,
  jsonInit,
  openTestApp,
  type TestApp,
  type TestAppOptions,
} from '../helpers/test-runtime.js'

const LOOPBACK: HttpPosture = { trustProxy: false, bindHost: '127.0.0.1', allowedHosts: [] }
const BEHIND_PROXY: HttpPosture = { ...LOOPBACK, trustProxy: true }

/** What @hono/node-server hands the app for a real connection: the socket's ends (URLs then name the port). */
const socketEnv = (remoteAddress: string, localPort = 7456) => ({
  incoming: { socket: { remoteAddress, localPort } },
})

let testApp: TestApp | undefined
afterEach(async () => {
  await testApp?.dispose()
  testApp = undefined
})

async function open(options: TestAppOptions = {}): Promise<TestApp> {
  testApp = await openTestApp(options)
  return testApp
}

/** A cookie-authenticated token creation: the write a CSRF page would want. */
function createTokenWithCookie(
  app: TestApp,
  cookie: string,
  headers: Record<string, string>,
  base = 'http://localhost',
) {
  return app.app.request(`${base}/api/tokens`, jsonInit('POST', { name: 'csrf' }, { cookie, ...headers }))
}

describe('CSRF on cookie-authenticated writes (issue 17 item 10)', () => {
  // Attack: a page on another site posts with the victim's cookie; the browser omits Origin but says
  // Sec-Fetch-Site: cross-site (or same-site, from a sibling subdomain).
  it('refuses a write without Origin when Sec-Fetch-Site says another site sent it', async () => {
    const app = await open()
    const cookie = await app.signIn()
    for (const site of ['cross-site', 'same-site']) {
      const response = await createTokenWithCookie(app, cookie, { 'sec-fetch-site': site })
      expect(await errorEnvelopeOf(response, 403)).toEqual(
        envelope('forbidden', `cross-origin request (Sec-Fetch-Site: ${site}) refused`),
      )
    }
    expect(await app.store.forUser(app.owner.id).tokens.list()).toEqual([])
    for (const site of ['same-origin', 'none'])
      expect((await createTokenWithCookie(app, cookie, { 'sec-fetch-site': site })).status).toBe(201)
  })

  // Attack: http://localhost:7456 and https://localhost:7456 (or another port) are different origins.
  it('compares the scheme and port of Origin, not just the host', async () => {
    const app = await open()
    const cookie = await app.signIn()
    for (const origin of ['https://localhost', 'http://localhost:8080', 'http://LOCALHOST.evil.example']) {
      const response = await createTokenWithCookie(app, cookie, { origin })
      expect(await errorEnvelopeOf(response, 403)).toEqual(
        envelope('forbidden', `cross-origin request from ${origin} refused`),
      )
    }
    expect((await createTokenWithCookie(app, cookie, { origin: 'http://localhost' })).status).toBe(201)
  })

  it('takes the scheme from X-Forwarded-Proto only behind a trusted proxy', async () => {
    const headers = { origin: 'https://localhost', 'x-forwarded-proto': 'https' }
    const direct = await open()
    expect((await createTokenWithCookie(direct, await direct.signIn(), headers)).status).toBe(403)
    await direct.dispose()
    const proxied = await open({ posture: BEHIND_PROXY })
    expect((await createTokenWithCookie(proxied, await proxied.signIn(), headers)).status).toBe(201)
  })
})

describe('Host header against DNS rebinding (issue 17 item 10)', () => {
  let webRoot: string | undefined
  afterEach(async () => {
    if (webRoot) await rm(webRoot, { recursive: true, force: true })
    webRoot = undefined
  })

  async function openWithWebUi(options: TestAppOptions = {}): Promise<TestApp> {
    webRoot = await mkdtemp(path.join(os.tmpdir(), 'hangar-web-'))
    await writeFile(path.join(webRoot, 'index.html'), '<!doctype html><div id="root"></div>')
    return open({ ...options, webRoot })
  }

  const get = (app: TestApp, route: string, host: string, env?: object) =>
    app.app.request(`http://localhost${route}`, { headers: { host } }, env)

  // Attack: attacker.example now resolves to 127.0.0.1; the page reads the unauthenticated routes.
  it('refuses a foreign Host on every route, signed-in or not', async () => {
    const app = await openWithWebUi()
    const link = await app.auth.createLoginLink(app.owner.id)
    const foreign = 'attacker.example:7456'
    const responses = [
      await get(app, '/api/health', foreign),
      await get(app, '/login', foreign),
      await get(app, '/', foreign),
      await get(app, '/conversations', foreign),
      await get(app, '/api/openapi.json', foreign),
      await app.app.request(
        'http://localhost/api/login',
        jsonInit('POST', { token: link }, { host: foreign }),
      ),
    ]
    for (const response of responses) {
      expect(await errorEnvelopeOf(response, 403)).toEqual(
        envelope(
          'forbidden',
          expect.stringMatching(
            /^requests for host "attacker\.example:7456" are refused.*server\.allowedHosts/,
          ),
        ),
      )
    }
    // The link was not spent by the refused request.
    expect(
      (await app.app.request('http://localhost/api/login', jsonInit('POST', { token: link }))).status,
    ).toBe(200)
  })

  it('accepts the loopback names with our own port on a loopback bind, and nothing else', async () => {
    const app = await openWithWebUi()
    const env = socketEnv('127.0.0.1', 7456)
    for (const host of ['localhost:7456', '127.0.0.1:7456', '[::1]:7456', 'LOCALHOST:7456'])
      expect((await get(app, '/api/health', host, env)).status, host).toBe(200)
    for (const host of [
      'localhost:80',
      'localhost',
      '127.0.0.1:7457',
      '10.0.0.5:7456',
      'localhost.attacker.example:7456',
    ])
      expect((await get(app, '/api/health', host, env)).status, host).toBe(403)
  })

  it('accepts the names of server.allowedHosts (a reverse proxy) on any port', async () => {
    const app = await open({ posture: { ...BEHIND_PROXY, allowedHosts: ['hangar.example.com'] } })
    expect((await get(app, '/api/health', 'hangar.example.com', socketEnv('127.0.0.1'))).status).toBe(200)
    expect((await get(app, '/api/health', 'other.example.com', socketEnv('127.0.0.1'))).status).toBe(403)
  })

  it('on a public wildcard bind accepts address literals (they cannot be rebound) but no foreign name', async () => {
    const app = await open({ posture: { ...LOOPBACK, bindHost: '0.0.0.0' } })
    const env = socketEnv('192.0.2.7', 7456)
    for (const host of ['192.0.2.10:7456', '127.0.0.1:7456', 'localhost:7456'])
      expect((await get(app, '/api/health', host, env)).status, host).toBe(200)
    expect((await get(app, '/api/health', 'attacker.example:7456', env)).status).toBe(403)
  })

  // Over a real socket: the guard reads the real port, and leaves /proxy to the proxy (agents on SSH
  // targets reach it through a tunnel as 127.0.0.1:<the host's port>, and it trusts only its path token).
  it('guards a real listener, and leaves /proxy to the proxy', async () => {
    const app = await open()
    const server = await listen(app.app, {
      host: '127.0.0.1',
      port: 0,
      proxy: async (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/plain' })
        response.end('proxied')
      },
    })
    try {
      const send = (route: string, host: string) =>
        new Promise<number>((resolve, reject) => {
          const outgoing = httpRequest({
            host: '127.0.0.1',
            port: server.port,
            path: route,
            headers: { host },
          })
          outgoing.on('response', (incoming) => {
            incoming.resume()
            resolve(incoming.statusCode ?? 0)
          })
          outgoing.on('error', reject)
          outgoing.end()
        })
      expect(await send('/api/health', `attacker.example:${server.port}`)).toBe(403)
      expect(await send('/api/health', `127.0.0.1:${server.port + 1}`)).toBe(403)
      expect(await send('/api/health', `localhost:${server.port}`)).toBe(200)
      expect(await send('/proxy/hgr_x/anthropic/v1/messages', `127.0.0.1:${server.port + 1}`)).toBe(200)
    } finally {
      await server.close()
    }
  })
})

describe('/api/login (issue 17 item 10)', () => {
  // Attack: a cross-site form posts text/plain (no preflight) to sign the browser in to the attacker's
  // account (login CSRF), or a page on another origin posts the JSON itself.
  it('takes only application/json', async () => {
    const app = await open()
    const link = await app.auth.createLoginLink(app.owner.id)
    for (const contentType of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ]) {
      const response = await app.app.request('http://localhost/api/login', {
        method: 'POST',
        headers: { 'content-type': contentType },
        body: JSON.stringify({ token: link }),
      })
      expect(await errorEnvelopeOf(response, 415)).toEqual(
        envelope('unsupported_media_type', expect.stringContaining('sign-in takes a JSON body')),
      )
      expect(response.headers.get('set-cookie')).toBeNull()
    }
    const json = await app.app.request(
      'http://localhost/api/login',
      jsonInit('POST', { token: link }, { 'content-type': 'application/json; charset=utf-8' }),
    )
    expect(json.status).toBe(200)
  })

  it('refuses a foreign Origin (or Sec-Fetch-Site: cross-site) and leaves the link unspent', async () => {
    const app = await open()
    const link = await app.auth.createLoginLink(app.owner.id)
    const login = (headers: Record<string, string>) =>
      app.app.request('http://localhost/api/login', jsonInit('POST', { token: link }, headers))
    expect(await errorEnvelopeOf(await login({ origin: 'http://evil.example' }), 403)).toEqual(
      envelope('forbidden', 'cross-origin request from http://evil.example refused'),
    )
    expect((await login({ 'sec-fetch-site': 'cross-site' })).status).toBe(403)
    expect((await login({ origin: 'http://localhost', 'sec-fetch-site': 'same-origin' })).status).toBe(200)
  })
})

describe('cookies behind a TLS reverse proxy (issue 17 item 10)', () => {
  const signInHeaders = async (app: TestApp, headers: Record<string, string>, base = 'http://localhost') => {
    const link = await app.auth.createLoginLink(app.owner.id)
    const response = await app.app.request(`${base}/api/login`, jsonInit('POST', { token: link }, headers))
    expect(response.status).toBe(200)
    return response.headers.get('set-cookie') ?? ''
  }

  // Failure: the proxy speaks https to the browser and http to us, so the session cookie went out without
  // Secure and a downgraded (http) request would carry it in clear text.
  it('marks the session cookie Secure when the trusted proxy says the request came over https', async () => {
    const app = await open({ posture: BEHIND_PROXY })
    expect(await signInHeaders(app, { 'x-forwarded-proto': 'https' })).toMatch(/; Secure/)
    expect(await signInHeaders(app, { 'x-forwarded-proto': 'http' })).not.toMatch(/Secure/)
  })

  it('ignores X-Forwarded-Proto without trustProxy, and marks a direct https request Secure', async () => {
    const app = await open()
    expect(await signInHeaders(app, { 'x-forwarded-proto': 'https' })).not.toMatch(/Secure/)
    expect(await signInHeaders(app, {}, 'https://localhost')).toMatch(/; Secure/)
  })
})

describe('content security and frames (issue 17 item 10)', () => {
  // Attack: /login framed by another site (clickjacking), or a script injected into the page.
  it('gives /login a CSP that allows only its own script and style by hash, and no framing', async () => {
    const app = await open()
    const response = await app.app.request('http://localhost/login')
    const html = await response.text()
    const csp = response.headers.get('content-security-policy') ?? ''
    const sha = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!
    expect(csp).toContain(`script-src ${sha(script)}`)
    expect(csp).toContain(`style-src ${sha(style)}`)
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain('unsafe-inline')
    expect(response.headers.get('x-frame-options')).toBe('DENY')
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
    expect(response.headers.get('referrer-policy')).toBe('no-referrer')
  })

  it("gives the web UI script-src 'self', no inline code and no framing", async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'hangar-web-'))
    try {
      await writeFile(path.join(root, 'index.html'), '<!doctype html><div id="root"></div>')
      const app = await open({ webRoot: root })
      for (const route of ['/', '/conversations/conv_1']) {
        const response = await app.app.request(`http://localhost${route}`)
        const csp = response.headers.get('content-security-policy') ?? ''
        expect(csp).toContain("script-src 'self'")
        expect(csp).toContain("frame-ancestors 'none'")
        expect(csp).not.toContain('unsafe')
        expect(response.headers.get('x-frame-options')).toBe('DENY')
        expect(response.headers.get('x-content-type-options')).toBe('nosniff')
      }
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })
})

describe('failed authentication is rate-limited per client (issue 17 item 10)', () => {
  const GUESSES = 21

  // Attack: 2000 token guesses in 2.5 s from one client, every one answered 401.
  it('answers 429 with Retry-After after more than 20 failed bearer tokens, even to a valid one', async () => {
    let now = new Date('2026-06-01T00:00:00Z')
    const app = await open({ clock: () => now })
    const pat = await app.createPat()
    const attacker = socketEnv('203.0.113.9')
    const tokens = (token: string, env = attacker) =>
      app.app.request('http://localhost:7456/api/tokens', { headers: bearer(token) }, env)
    for (let guess = 0; guess < GUESSES; guess++) {
      const token = guess % 2 ? mintToken('pat').token : `hgr_guess${guess}`
      expect((await tokens(token)).status).toBe(401)
    }
    const limited = await tokens(mintToken('pat').token)
    expect(await errorEnvelopeOf(limited, 429)).toEqual({
      error: {
        code: 'rate_limited',
        message: expect.stringContaining('too many failed sign-ins'),
        retryable: true,
        details: { retryAfterSeconds: 10 },
      },
    })
    expect(limited.headers.get('retry-after')).toBe('10')
    // Decision: a limited client's credential is not even looked at (no oracle for the guesser).
    expect(
      (
        await app.app.request(
          'http://localhost:7456/api/settings/providers',
          { headers: bearer(pat) },
          attacker,
        )
      ).status,
    ).toBe(429)
    // Another client is not affected.
    const providers = (env: object) =>
      app.app.request('http://localhost:7456/api/settings/providers', { headers: bearer(pat) }, env)
    expect((await providers(socketEnv('198.51.100.4'))).status).toBe(200)
    // Once the window has passed, the client is heard again.
    now = new Date(now.getTime() + 10_001)
    expect(
      (
        await app.app.request(
          'http://localhost:7456/api/settings/providers',
          { headers: bearer(pat) },
          attacker,
        )
      ).status,
    ).toBe(200)
  })

  it('never counts successes', async () => {
    const app = await open()
    const pat = await app.createPat()
    const env = socketEnv('203.0.113.10')
    const providers = (token: string) =>
      app.app.request('http://localhost:7456/api/settings/providers', { headers: bearer(token) }, env)
    for (let round = 0; round < 20; round++) {
      expect((await providers(mintToken('pat').token)).status).toBe(401)
      for (let success = 0; success < 3; success++) expect((await providers(pat)).status).toBe(200)
    }
    expect((await providers(pat)).status).toBe(200)
    expect((await providers(mintToken('pat').token)).status).toBe(401)
    expect((await providers(pat)).status).toBe(429)
  })

  it('limits guessed session cookies and sign-in links too', async () => {
    const app = await open()
    const env = socketEnv('203.0.113.11')
    for (let guess = 0; guess < GUESSES; guess++) {
      const response = await app.app.request(
        'http://localhost:7456/api/session',
        { headers: { cookie: `hangar_session=${mintToken('session').token}` } },
        env,
      )
      expect(response.status).toBe(401)
    }
    expect(
      (
        await app.app.request(
          'http://localhost:7456/api/session',
          { headers: { cookie: 'hangar_session=x' } },
          env,
        )
      ).status,
    ).toBe(429)

    const other = socketEnv('203.0.113.12')
    const link = await app.auth.createLoginLink(app.owner.id)
    const login = (token: string) =>
      app.app.request('http://localhost:7456/api/login', jsonInit('POST', { token }), other)
    for (let guess = 0; guess < GUESSES; guess++)
      expect((await login(mintToken('login').token)).status).toBe(401)
    expect((await login(link)).status).toBe(429)
    // Asking who is signed in without any credential is not a guess.
    const third = socketEnv('203.0.113.13')
    for (let ask = 0; ask < 30; ask++)
      expect((await app.app.request('http://localhost:7456/api/session', {}, third)).status).toBe(401)
  })

  it('behind a trusted proxy, limits by the hop the proxy added, not the spoofable leftmost one', async () => {
    const app = await open({ posture: BEHIND_PROXY })
    const proxySocket = socketEnv('127.0.0.1')
    const guess = (forwardedFor: string) =>
      app.app.request(
        'http://localhost:7456/api/tokens',
        { headers: { ...bearer(mintToken('pat').token), 'x-forwarded-for': forwardedFor } },
        proxySocket,
      )
    for (let attempt = 0; attempt < GUESSES; attempt++)
      expect((await guess(`10.9.${attempt}.1, 203.0.113.20`)).status).toBe(401)
    expect((await guess('10.9.99.1, 203.0.113.20')).status).toBe(429)
    // Another real client behind the same proxy is not limited.
    expect((await guess('203.0.113.21')).status).toBe(401)
  })
})
