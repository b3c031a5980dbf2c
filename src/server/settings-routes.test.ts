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
})
