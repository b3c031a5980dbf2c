// Per-user provider base URLs are an SSRF risk: the settings route checks them before storing.
import { afterEach, describe, expect, it } from 'vitest'
import { jsonInit, openTestApp, type TestApp } from '../../test/helpers/test-runtime.js'

describe('settings-routes', () => {
  let testApp: TestApp | undefined
  afterEach(async () => {
    await testApp?.testStore.dispose()
  })

  it('refuses metadata and link-local base URLs, and local ones when local providers are not allowed', async () => {
    testApp = await openTestApp({ allowPrivateNetworks: false })
    const cookie = await testApp.signIn()
    const put = (baseUrl: string) =>
      testApp!.app.request(
        'http://localhost/api/settings/providers/custom',
        jsonInit('PUT', { baseUrl }, { cookie }),
      )
    for (const baseUrl of [
      'http://169.254.169.254/latest',
      'http://metadata.google.internal/',
      'http://127.0.0.1:11434/v1',
    ]) {
      const response = await put(baseUrl)
      expect(response.status, baseUrl).toBe(400)
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('invalid_request')
    }
    expect((await put('https://api.example.com/v1')).status).toBe(200)
    expect(await testApp.credentials.list(testApp.owner.id)).toHaveLength(1)
  })

  it('allows a loopback base URL when local providers are allowed', async () => {
    testApp = await openTestApp({ allowPrivateNetworks: true })
    const cookie = await testApp.signIn()
    const response = await testApp.app.request(
      'http://localhost/api/settings/providers/ollama',
      jsonInit('PUT', { baseUrl: 'http://127.0.0.1:11434/v1' }, { cookie }),
    )
    expect(response.status).toBe(200)
  })

  // Found by npm run fuzz: any name answered 200 with blank settings, and an empty PUT stored a row for
  // a provider that has no base URL anywhere.
  it('answers 404 for a provider nobody declared, and refuses an empty change or one with no base URL', async () => {
    testApp = await openTestApp()
    const cookie = await testApp.signIn()
    const request = (method: string, provider: string, body?: unknown) =>
      testApp!.app.request(
        `http://localhost/api/settings/providers/${provider}`,
        body === undefined ? { method, headers: { cookie } } : jsonInit(method, body, { cookie }),
      )
    expect((await request('GET', 'constructor')).status).toBe(404)
    expect((await request('GET', 'anthropic')).status).toBe(200)
    expect((await request('PUT', 'constructor', {})).status).toBe(400)
    expect((await request('PUT', 'anthropic', {})).status).toBe(400)
    const keyOnly = await request('PUT', 'my-gateway', { apiKey: 'sk-gateway-0123456789' })
    expect(keyOnly.status).toBe(400)
    expect(((await keyOnly.json()) as { error: { message: string } }).error.message).toMatch(
      /give it a baseUrl/,
    )
    expect(await testApp.credentials.list(testApp.owner.id)).toEqual([])
    expect((await request('PUT', 'my-gateway', { baseUrl: 'https://gateway.example.com/v1' })).status).toBe(
      200,
    )
    expect((await request('PUT', 'my-gateway', { apiKey: 'sk-gateway-0123456789' })).status).toBe(200)
    expect((await request('GET', 'my-gateway')).status).toBe(200)
  })
})
