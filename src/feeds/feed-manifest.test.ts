import { describe, expect, it } from 'vitest'
import type { ProfileConfig, ServiceConfig } from '../core/config.js'
import { ProfileSchema } from '../core/config.js'
import { deriveFeedName } from '../core/feed-names.js'
import { resolveFeedManifest } from './feed-manifest.js'

const services: Record<string, ServiceConfig> = {
  'market-api': { url: 'http://127.0.0.1:8080/' },
  'news-api': { url: 'http://127.0.0.1:9090/base//', auth: { bearerEnv: 'NEWS_TOKEN' } },
}

function profile(feeds: unknown[]): ProfileConfig {
  return ProfileSchema.parse({ adapter: 'claude-code', feeds })
}

describe('feed names', () => {
  it('derives the last non-empty path segment', () => {
    expect(deriveFeedName({ source: 'market-api', path: '/api/v1/market-summary' }, 0)).toBe('market-summary')
    expect(deriveFeedName({ source: 'market-api', path: '/api/v1/portfolio/' }, 0)).toBe('portfolio')
  })

  it('names a root path after its source and 1-based position', () => {
    expect(deriveFeedName({ source: 'market-api', path: '/' }, 2)).toBe('market-api-feed-3')
  })

  it('lets an explicit name win', () => {
    expect(deriveFeedName({ name: 'alerts', source: 'market-api', path: '/api/v1/portfolio' }, 0)).toBe(
      'alerts',
    )
  })
})

describe('feed-manifest', () => {
  it('resolves feeds in declaration order with names, substituted paths and URLs', () => {
    const manifest = resolveFeedManifest(
      'reviewer',
      profile([
        { source: 'market-api', path: '/api/v1/market-summary', ttl: 300 },
        { source: 'news-api', path: '/agents/{agent}/news', ttl: 30 },
        { name: 'alerts', source: 'market-api', path: '/alerts/{agent}/x?for={agent}', ttl: 5 },
        { source: 'market-api', path: '/', ttl: 60 },
      ]),
      services,
      'operator',
    )
    expect(manifest).toEqual([
      {
        name: 'market-summary',
        source: 'market-api',
        path: '/api/v1/market-summary',
        ttl: 300,
        url: 'http://127.0.0.1:8080/api/v1/market-summary',
        trust: 'operator',
      },
      {
        name: 'news',
        source: 'news-api',
        path: '/agents/reviewer/news',
        ttl: 30,
        url: 'http://127.0.0.1:9090/base/agents/reviewer/news',
        trust: 'operator',
      },
      {
        name: 'alerts',
        source: 'market-api',
        path: '/alerts/reviewer/x?for=reviewer',
        ttl: 5,
        url: 'http://127.0.0.1:8080/alerts/reviewer/x?for=reviewer',
        trust: 'operator',
      },
      {
        name: 'market-api-feed-4',
        source: 'market-api',
        path: '/',
        ttl: 60,
        url: 'http://127.0.0.1:8080/',
        trust: 'operator',
      },
    ])
  })

  it('derives the name before substituting {agent}, so it is the same for every profile', () => {
    const config = profile([{ source: 'market-api', path: '/portfolio/{agent}/summary', ttl: 60 }])
    const first = resolveFeedManifest('alpha', config, services, 'operator')[0]
    const second = resolveFeedManifest('beta', config, services, 'operator')[0]
    expect(first?.name).toBe('summary')
    expect(second?.name).toBe('summary')
    expect(first?.path).toBe('/portfolio/alpha/summary')
    expect(second?.path).toBe('/portfolio/beta/summary')
  })

  it('passes over a segment that is only {agent} when deriving a name', () => {
    const config = profile([
      { source: 'market-api', path: '/alerts/{agent}', ttl: 60 },
      { source: 'market-api', path: '/{agent}/', ttl: 60 },
    ])
    expect(
      resolveFeedManifest('alpha', config, services, 'operator').map((feed) => [feed.name, feed.path]),
    ).toEqual([
      ['alerts', '/alerts/alpha'],
      ['market-api-feed-2', '/alpha/'],
    ])
  })

  it('percent-encodes the profile name it substitutes, and refuses what that encoding could smuggle', () => {
    const config = profile([{ source: 'market-api', path: '/for/{agent}', ttl: 60 }])
    const [feed] = resolveFeedManifest('a b/c', config, services, 'operator')
    expect(feed?.path).toBe('/for/a%20b%2Fc')
    expect(feed?.refused).toMatch(/encoded character "%2F"/)
  })

  // Issue 18 item 5: a feed of an unknown source was dropped without a word; it is listed, refused.
  it('returns nothing for a profile without feeds and lists an unknown source as refused', () => {
    expect(resolveFeedManifest('reviewer', undefined, services, 'operator')).toEqual([])
    expect(resolveFeedManifest('reviewer', profile([]), services, 'operator')).toEqual([])
    const manifest = resolveFeedManifest(
      'reviewer',
      profile([
        { source: 'gone', path: '/a', ttl: 1 },
        { source: 'constructor', path: '/b', ttl: 1 },
        { source: 'market-api', path: '/c', ttl: 1 },
      ]),
      services,
      'operator',
    )
    expect(manifest.map((feed) => [feed.name, feed.refused !== undefined])).toEqual([
      ['a', true],
      ['b', true],
      ['c', false],
    ])
    expect(manifest[0]?.refused).toMatch(/unknown service "gone"/)
  })

  it('never carries credentials, not even user:password written into a service URL', () => {
    const manifest = resolveFeedManifest(
      'reviewer',
      profile([{ source: 'secret', path: '/x', ttl: 1 }]),
      {
        secret: { url: 'http://user:hunter2@127.0.0.1:8080', auth: { bearerEnv: 'TOKEN' } },
      },
      'operator',
    )
    expect(manifest).toEqual([
      { name: 'x', source: 'secret', path: '/x', ttl: 1, url: 'http://127.0.0.1:8080/x', trust: 'operator' },
    ])
    expect(JSON.stringify(manifest)).not.toMatch(/hunter2|TOKEN|bearer/i)
  })
})

// Issue 17 item 4: feeds as a confused deputy. A profile made in the UI or API used to fetch any path of
// the operator's services with their credentials; the manifest now marks every feed outside the service's
// userFeedPaths (and every unsafe path, hangar.yaml's included) as refused, and the fetcher never sends it.
describe('feed-manifest path policy', () => {
  const guarded: Record<string, ServiceConfig> = {
    market: { url: 'http://127.0.0.1:8080', userFeedPaths: ['/api/v1', '/public/'] },
    closed: { url: 'http://127.0.0.1:8081' },
  }
  const feeds = (paths: string[], source = 'market') =>
    profile(paths.map((path, index) => ({ name: `f${index}`, source, path, ttl: 60 })))

  it("lets a user's feed use only paths under the service's userFeedPaths, on segment boundaries", () => {
    const manifest = resolveFeedManifest(
      'mine',
      feeds([
        '/api/v1',
        '/api/v1/summary?x=1',
        '/public/{agent}',
        '/api/v1admin',
        '/admin/export?all=1',
        '/',
      ]),
      guarded,
      'user',
    )
    expect(manifest.map((feed) => [feed.path, feed.refused === undefined])).toEqual([
      ['/api/v1', true],
      ['/api/v1/summary?x=1', true],
      ['/public/mine', true],
      ['/api/v1admin', false],
      ['/admin/export?all=1', false],
      ['/', false],
    ])
    expect(manifest.every((feed) => feed.trust === 'user')).toBe(true)
    expect(manifest[4]?.refused).toBe(
      'path "/admin/export?all=1" is not under a prefix service "market" allows to profiles made in the UI or API (allowed: /api/v1, /public/)',
    )
  })

  it("refuses every path of a service without userFeedPaths to a user's feed, not to the operator's", () => {
    const config = feeds(['/api/v1/summary'], 'closed')
    expect(resolveFeedManifest('mine', config, guarded, 'user')[0]?.refused).toMatch(/it allows none/)
    expect(resolveFeedManifest('mine', config, guarded, 'operator')[0]?.refused).toBeUndefined()
  })

  it('refuses dot segments and encoded dots or slashes even under an allowed prefix, and for the operator', () => {
    const hostile = [
      '/api/v1/../../etc/passwd',
      '/api/v1/%2e%2e/admin',
      '/api/v1/%2E%2E/admin',
      '/api/v1/.%2e/admin',
      '/api/v1/..%2fadmin',
      '/api/v1/..%5cadmin',
      '/api/v1/..\\admin',
      '/api/v1//admin',
      '/api/v1/..;/admin',
      '/api/v1/./x',
      '/api/v1/%252e%252e/admin',
      '/api/v1/.\t./admin',
    ]
    for (const trust of ['user', 'operator'] as const) {
      const manifest = resolveFeedManifest('mine', feeds(hostile), guarded, trust)
      expect(manifest.map((feed) => feed.refused === undefined)).toEqual(hostile.map(() => false))
    }
  })
})
