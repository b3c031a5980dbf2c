import { Hono } from 'hono'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  bearer,
  envelope,
  errorEnvelopeOf,
  jsonInit,
  openTestApp,
  type TestApp,
} from '../../test/helpers/test-runtime.js'
import type { LogFields, Logger } from '../core/logger.js'
import { API_BODY_LIMIT_BYTES } from './app.js'
import { createErrorHandler } from './error-envelope.js'

const URL_BASE = 'http://localhost'
const API_KEY = 'sk-ant-api03-THIS-IS-A-VERY-SECRET-KEY-9876'
const TOO_LARGE = 'x'.repeat(API_BODY_LIMIT_BYTES + 1)

function recordingLogger(): Logger & { records: { level: string; message: string; fields?: LogFields }[] } {
  const records: { level: string; message: string; fields?: LogFields }[] = []
  const logger = {
    records,
    debug: (message: string, fields?: LogFields) => void records.push({ level: 'debug', message, fields }),
    info: (message: string, fields?: LogFields) => void records.push({ level: 'info', message, fields }),
    warn: (message: string, fields?: LogFields) => void records.push({ level: 'warn', message, fields }),
    error: (message: string, fields?: LogFields) => void records.push({ level: 'error', message, fields }),
    child: () => logger,
  }
  return logger
}

describe('app', () => {
  let testApp: TestApp
  let cookie: string

  beforeEach(async () => {
    testApp = await openTestApp()
    cookie = await testApp.signIn()
  })
  afterEach(async () => {
    await testApp.dispose()
  })

  const request = (path: string, init: RequestInit = {}) => testApp.app.request(`${URL_BASE}${path}`, init)

  /** Everything a bad request could have written: the owner's tokens and audit rows. */
  async function storeSnapshot(): Promise<unknown> {
    const scope = testApp.store.forUser(testApp.owner.id)
    return {
      tokens: await scope.tokens.list({ includeRevoked: true }),
      audit: await scope.audit.list({ limit: 1000 }),
      credentials: await scope.credentials.list(),
    }
  }

  describe('health and unknown routes', () => {
    it('answers GET /api/health without auth', async () => {
      const response = await request('/api/health')
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({
        status: 'ok',
        version: '0.0.0-test',
        nodeId: 'test-node',
        engine: 'sqlite',
        database: 'ok',
        vault: 'ok',
        uptimeSeconds: expect.any(Number),
      })
    })

    it('answers 404 with the envelope for an unknown route or method', async () => {
      const unknown = await request('/api/nope', { headers: { cookie } })
      expect(await errorEnvelopeOf(unknown, 404)).toEqual(envelope('not_found', 'no route GET /api/nope'))
      const wrongMethod = await request('/api/tokens', { method: 'PATCH', headers: { cookie } })
      expect(await errorEnvelopeOf(wrongMethod, 404)).toEqual(
        envelope('not_found', 'no route PATCH /api/tokens'),
      )
      expect(await errorEnvelopeOf(await request('/nope'), 404)).toEqual(
        envelope('not_found', 'no route GET /nope'),
      )
    })

    it('answers 401, not 404, for an unknown /api route without credentials', async () => {
      const response = await request('/api/nope')
      expect((await errorEnvelopeOf(response, 401)).error.code).toBe('unauthorized')
    })
  })

  describe('bad input', () => {
    const createToken = (body: string, headers: Record<string, string> = {}) =>
      request('/api/tokens', {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie, ...headers },
        body,
      })

    it('answers 400 invalid_json to a body that is not JSON', async () => {
      const before = await storeSnapshot()
      expect(await errorEnvelopeOf(await createToken('{"name":'), 400)).toEqual(
        envelope(
          'invalid_json',
          'the request body is not valid JSON; send a JSON object with Content-Type: application/json',
        ),
      )
      expect(await storeSnapshot()).toEqual(before)
    })

    // Found by npm run fuzz: a claimed Content-Encoding was ignored and the bytes parsed as they were.
    it('answers 415 to a compressed body, and creates nothing', async () => {
      const before = await storeSnapshot()
      for (const coding of ['gzip', 'compress', 'identity, identity']) {
        const response = await createToken(JSON.stringify({ name: 'ci' }), { 'content-encoding': coding })
        expect((await errorEnvelopeOf(response, 415)).error.code, coding).toBe('unsupported_media_type')
      }
      expect(await storeSnapshot()).toEqual(before)
    })

    it('answers 400 invalid_request naming the field for a schema failure', async () => {
      const before = await storeSnapshot()
      const empty = await errorEnvelopeOf(await createToken(JSON.stringify({ name: '' })), 400)
      expect(empty).toEqual(
        envelope('invalid_request', expect.stringMatching(/^name: /), {
          fields: [{ path: 'name', message: expect.any(String) }],
        }),
      )
      const wrongType = await errorEnvelopeOf(
        await createToken(JSON.stringify({ name: 'ci', scopes: ['root'] })),
        400,
      )
      expect(wrongType.error.details).toEqual({
        fields: [{ path: 'scopes[0]', message: expect.any(String) }],
      })
      const notObject = await errorEnvelopeOf(await createToken('[1, 2]'), 400)
      expect(notObject.error.details).toEqual({ fields: [{ path: '(body)', message: expect.any(String) }] })
      expect(await storeSnapshot()).toEqual(before)
    })

    // Regression: zod reports an unknown key on its parent object, so the field path was "(body)".
    it('answers 400 invalid_request naming an unknown key', async () => {
      const before = await storeSnapshot()
      const response = await createToken(JSON.stringify({ name: 'ci', admin: true }))
      expect(await errorEnvelopeOf(response, 400)).toEqual(
        envelope('invalid_request', expect.stringContaining('admin'), {
          fields: [{ path: 'admin', message: expect.stringContaining('admin') }],
        }),
      )
      expect(await storeSnapshot()).toEqual(before)
    })

    it('answers 400 to an expiresIn that is not a duration', async () => {
      const before = await storeSnapshot()
      for (const expiresIn of ['forever', '0d', '-1d', '30 days']) {
        const response = await createToken(JSON.stringify({ name: 'ci', expiresIn }))
        expect(await errorEnvelopeOf(response, 400)).toEqual(
          envelope('invalid_request', expect.stringContaining(`expiresIn "${expiresIn}" is not a duration`)),
        )
      }
      expect(await storeSnapshot()).toEqual(before)
    })

    // Regression: an expiry past year 9999 made toISOString throw (500 internal), or wrote "+010240-…",
    // which sorts before every real date, so the new token was expired from its first use.
    it('answers 400 to an expiresIn beyond 100 years instead of 500 or a dead token', async () => {
      const before = await storeSnapshot()
      for (const expiresIn of ['36501d', '3000000d', '99999999999w']) {
        const response = await createToken(JSON.stringify({ name: 'ci', expiresIn }))
        expect(await errorEnvelopeOf(response, 400)).toEqual(
          envelope('invalid_request', expect.stringContaining('at most 36500 days'), {
            fields: [{ path: 'expiresIn', message: expect.any(String) }],
          }),
        )
      }
      expect(await storeSnapshot()).toEqual(before)
      expect((await createToken(JSON.stringify({ name: 'ci', expiresIn: '36500d' }))).status).toBe(201)
    })

    it('answers 413 payload_too_large to a body over 1 MB with a Content-Length header', async () => {
      const before = await storeSnapshot()
      const response = await createToken(TOO_LARGE, { 'content-length': String(TOO_LARGE.length) })
      expect(await errorEnvelopeOf(response, 413)).toEqual(
        envelope('payload_too_large', 'the request body is larger than 1 MB', {
          limitBytes: API_BODY_LIMIT_BYTES,
        }),
      )
      expect(await storeSnapshot()).toEqual(before)
    })

    it('answers 413 payload_too_large to a streamed body over 1 MB without a Content-Length', async () => {
      const before = await storeSnapshot()
      const chunk = new TextEncoder().encode('x'.repeat(64 * 1024))
      let sent = 0
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent > API_BODY_LIMIT_BYTES) return controller.close()
          sent += chunk.length
          controller.enqueue(chunk)
        },
      })
      const streamed = new Request(`${URL_BASE}/api/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie },
        body,
        duplex: 'half',
      } as RequestInit)
      expect(streamed.headers.has('content-length')).toBe(false)
      const response = await testApp.app.request(streamed)
      expect(await errorEnvelopeOf(response, 413)).toEqual(
        envelope('payload_too_large', 'the request body is larger than 1 MB', {
          limitBytes: API_BODY_LIMIT_BYTES,
        }),
      )
      expect(await storeSnapshot()).toEqual(before)
    })

    it('answers 413 on /api/login too, before it reads the link', async () => {
      const response = await request('/api/login', { method: 'POST', body: TOO_LARGE })
      expect((await errorEnvelopeOf(response, 413)).error.code).toBe('payload_too_large')
    })
  })

  describe('provider settings', () => {
    it('stores a key write-only: PUT and GET show keyConfigured and keyLast4, never the key', async () => {
      const put = await request(
        '/api/settings/providers/anthropic',
        jsonInit('PUT', { apiKey: API_KEY, model: 'claude-sonnet-4-6' }, { cookie }),
      )
      expect(put.status).toBe(200)
      const putText = await put.text()
      const expected = {
        provider: 'anthropic',
        keyConfigured: true,
        keyLast4: '9876',
        model: 'claude-sonnet-4-6',
        baseUrl: null,
        updatedAt: expect.any(String),
      }
      expect(JSON.parse(putText)).toEqual(expected)
      const got = await request('/api/settings/providers/anthropic', { headers: { cookie } })
      const gotText = await got.text()
      expect(JSON.parse(gotText)).toEqual(JSON.parse(putText))
      const list = await request('/api/settings/providers', { headers: { cookie } })
      const listText = await list.text()
      expect(JSON.parse(listText)).toEqual([expected])
      for (const text of [putText, gotText, listText]) {
        expect(text).not.toContain(API_KEY.slice(0, 20))
        expect(text).not.toContain('hv1.')
      }
      expect(await testApp.credentials.revealKey(testApp.owner.id, 'anthropic')).toBe(API_KEY)
    })

    it('answers GET for an unconfigured provider with keyConfigured false', async () => {
      const response = await request('/api/settings/providers/openai', { headers: { cookie } })
      expect(await response.json()).toEqual({
        provider: 'openai',
        keyConfigured: false,
        keyLast4: null,
        model: null,
        baseUrl: null,
        updatedAt: null,
      })
    })

    it('answers 400 to a provider name that is not one', async () => {
      const response = await request('/api/settings/providers/..%2Fetc', { headers: { cookie } })
      expect((await errorEnvelopeOf(response, 400)).error.code).toBe('invalid_request')
    })

    it('leaves the row unchanged when revealKey meets a tampered envelope', async () => {
      await request('/api/settings/providers/anthropic', jsonInit('PUT', { apiKey: API_KEY }, { cookie }))
      const scope = testApp.store.forUser(testApp.owner.id)
      const stored = (await scope.credentials.get('anthropic'))!.keyEnvelope!
      const parts = stored.split('.')
      parts[3] = (parts[3]![0] === 'A' ? 'B' : 'A') + parts[3]!.slice(1)
      const tampered = parts.join('.')
      await scope.credentials.upsert('anthropic', { keyEnvelope: tampered })
      const before = await scope.credentials.get('anthropic')

      await expect(testApp.credentials.revealKey(testApp.owner.id, 'anthropic')).rejects.toMatchObject({
        code: 'secret_unreadable',
      })
      expect(await scope.credentials.get('anthropic')).toEqual(before)
      expect(before!.keyEnvelope).toBe(tampered)
      const view = await request('/api/settings/providers/anthropic', { headers: { cookie } })
      expect(await view.json()).toMatchObject({ keyConfigured: true, keyLast4: '9876' })
    })
  })

  describe('without a vault', () => {
    let keyless: TestApp

    beforeEach(async () => {
      keyless = await openTestApp({ vaultState: { vault: null, reason: 'HANGAR_SECRET_KEYS is not set' } })
    })
    afterEach(async () => {
      await keyless.dispose()
    })

    it('answers 503 vault_unavailable to a key change and still stores keyless settings', async () => {
      const token = await keyless.createPat()
      const keyPut = await keyless.app.request(
        `${URL_BASE}/api/settings/providers/anthropic`,
        jsonInit('PUT', { apiKey: API_KEY }, bearer(token)),
      )
      const body = await errorEnvelopeOf(keyPut, 503)
      expect(body).toEqual(
        envelope('vault_unavailable', expect.stringContaining('HANGAR_SECRET_KEYS is not set')),
      )
      expect(JSON.stringify(body)).not.toContain(API_KEY)
      expect(await keyless.store.forUser(keyless.owner.id).credentials.get('anthropic')).toBeUndefined()

      const keylessPut = await keyless.app.request(
        `${URL_BASE}/api/settings/providers/ollama`,
        jsonInit('PUT', { baseUrl: 'http://127.0.0.1:11434/v1' }, bearer(token)),
      )
      expect(keylessPut.status).toBe(200)
      expect(await keylessPut.json()).toMatchObject({
        provider: 'ollama',
        keyConfigured: false,
        baseUrl: 'http://127.0.0.1:11434/v1',
      })
      const health = await keyless.app.request(`${URL_BASE}/api/health`)
      expect(await health.json()).toMatchObject({ status: 'ok', vault: 'unavailable' })
    })
  })

  describe('internal errors', () => {
    it('answers 500 internal without the message or stack of a plain Error, and logs them', async () => {
      const log = recordingLogger()
      const app = new Hono()
      app.get('/boom', () => {
        throw new Error('connect ECONNREFUSED postgres://admin:hunter2@db')
      })
      app.onError(createErrorHandler(log))
      const response = await app.request(`${URL_BASE}/boom`)
      const text = await response.clone().text()
      expect(await errorEnvelopeOf(response, 500)).toEqual(envelope('internal', 'internal error'))
      expect(text).not.toContain('hunter2')
      expect(text).not.toContain('ECONNREFUSED')
      expect(text).not.toMatch(/\bat\b.*\.ts/)
      expect(log.records).toEqual([
        {
          level: 'error',
          message: 'request failed',
          fields: expect.objectContaining({
            method: 'GET',
            path: '/boom',
            error: {
              message: expect.stringContaining('hunter2'),
              stack: expect.stringContaining('app.test.ts'),
            },
          }),
        },
      ])
    })

    it('answers 500 internal when the store fails under a real route', async () => {
      const token = await testApp.createPat()
      vi.spyOn(testApp.store.authLookups, 'findToken').mockRejectedValue(
        new Error('disk I/O error at /var/secret'),
      )
      const response = await request('/api/settings/providers', { headers: bearer(token) })
      const text = await response.clone().text()
      expect(await errorEnvelopeOf(response, 500)).toEqual(envelope('internal', 'internal error'))
      expect(text).not.toContain('/var/secret')
    })
  })

  describe('secrets in responses', () => {
    it('never returns a PAT secret or an API key after they were created', async () => {
      const created = await request('/api/tokens', jsonInit('POST', { name: 'ci' }, { cookie }))
      const { token } = (await created.json()) as { token: string }
      const secretPart = token.slice(17, 49)
      await request('/api/settings/providers/openai', jsonInit('PUT', { apiKey: API_KEY }, bearer(token)))

      const texts = await Promise.all(
        [
          request('/api/tokens', { headers: { cookie } }),
          request('/api/health'),
          request('/api/settings/providers', { headers: bearer(token) }),
          request('/api/settings/providers/openai', { headers: { cookie } }),
          request('/api/settings/providers/openai', jsonInit('PUT', { model: 'gpt-5' }, { cookie })),
        ].map(async (pending) => {
          const response = await pending
          expect(response.status).toBe(200)
          return response.text()
        }),
      )
      for (const text of texts) {
        expect(text).not.toContain(token)
        expect(text).not.toContain(secretPart)
        expect(text).not.toContain(API_KEY.slice(0, 20))
      }
      const audit = JSON.stringify(await testApp.store.forUser(testApp.owner.id).audit.list())
      expect(audit).not.toContain(secretPart)
      expect(audit).not.toContain(API_KEY)
    })
  })
})
