// The upstream of a proxied request is resolved once and then remembered for a few seconds: once known it
// is answered at once (no promise), so the proxy's request path does not wait a turn for it.
import { describe, expect, it, vi } from 'vitest'
import { parseConfig } from '../core/config.js'
import type { CredentialsService } from '../store/credentials-service.js'
import { createProxyUpstreams } from './proxy-upstreams.js'

function upstreamsWith(list: () => Promise<[]>) {
  return createProxyUpstreams({
    config: parseConfig('agents: {}\n')!,
    env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/anthropic', ANTHROPIC_API_KEY: 'sk-operator' },
    credentials: { list, revealKey: async () => null } as unknown as CredentialsService,
    profileFor: async () => null,
  })
}

const requester = { userId: 'usr_1', profile: 'claude-code', runId: 'run_1' }

describe('proxy upstreams', () => {
  it('resolves an upstream once, then answers it at once from memory', async () => {
    const list = vi.fn(async () => [] as [])
    const upstreams = upstreamsWith(list)
    const first = upstreams.upstreamFor(requester, 'anthropic')
    expect(first).toBeInstanceOf(Promise)
    expect(await first).toMatchObject({ baseUrl: 'http://127.0.0.1:9/anthropic', apiKey: 'sk-operator' })
    const again = upstreams.upstreamFor(requester, 'anthropic')
    expect(again).not.toBeInstanceOf(Promise)
    expect(again).toBe(await first)
    // Another user's request is resolved on its own.
    expect(upstreams.upstreamFor({ ...requester, userId: 'usr_2' }, 'anthropic')).toBeInstanceOf(Promise)
  })

  it('forgets a failed resolution, so the next request tries again', async () => {
    let fail = true
    const upstreams = upstreamsWith(async () => {
      if (fail) throw new Error('store down')
      return []
    })
    await expect(upstreams.upstreamFor(requester, 'anthropic')).rejects.toThrow('store down')
    fail = false
    await expect(upstreams.upstreamFor(requester, 'anthropic')).resolves.toMatchObject({
      apiKey: 'sk-operator',
    })
  })
})
