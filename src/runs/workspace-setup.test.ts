// The environment a workspace's setup and teardown commands get: toolchain basics and proxy settings,
// never the daemon's keys (a repository's committed commands could print or send them).
import { describe, expect, it } from 'vitest'
import { setupEnvironment } from './workspace-setup.js'

describe('setupEnvironment', () => {
  it("keeps PATH, HOME and the proxy settings, and drops the daemon's secrets", () => {
    const environment = setupEnvironment({
      PATH: '/usr/bin:/bin',
      HOME: '/home/me',
      HTTPS_PROXY: 'http://proxy.internal:3128',
      no_proxy: 'localhost',
      ANTHROPIC_API_KEY: 'sk-ant-secret',
      GITHUB_TOKEN: 'ghp_secret',
      HANGAR_SECRET_KEYS: 'k1:abc',
      HANGAR_DATABASE_URL: 'postgres://u:p@db/hangar',
    })
    expect(environment).toMatchObject({
      PATH: '/usr/bin:/bin',
      HOME: '/home/me',
      HTTPS_PROXY: 'http://proxy.internal:3128',
      no_proxy: 'localhost',
    })
    for (const secret of ['ANTHROPIC_API_KEY', 'GITHUB_TOKEN', 'HANGAR_SECRET_KEYS', 'HANGAR_DATABASE_URL'])
      expect(environment).not.toHaveProperty(secret)
  })
})
