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
    )
    expect(manifest).toEqual([
      {
        name: 'market-summary',
        source: 'market-api',
        path: '/api/v1/market-summary',
        ttl: 300,
        url: 'http://127.0.0.1:8080/api/v1/market-summary',
      },
      {
        name: 'news',
        source: 'news-api',
        path: '/agents/reviewer/news',
        ttl: 30,
        url: 'http://127.0.0.1:9090/base/agents/reviewer/news',
      },
      {
        name: 'alerts',
        source: 'market-api',
        path: '/alerts/reviewer/x?for=reviewer',
        ttl: 5,
        url: 'http://127.0.0.1:8080/alerts/reviewer/x?for=reviewer',
      },
      { name: 'market-api-feed-4', source: 'market-api', path: '/', ttl: 60, url: 'http://127.0.0.1:8080/' },
    ])
  })

  it('derives the name before substituting {agent}, so it is the same for every profile', () => {
    const config = profile([{ source: 'market-api', path: '/portfolio/{agent}/summary', ttl: 60 }])
    const first = resolveFeedManifest('alpha', config, services)[0]
    const second = resolveFeedManifest('beta', config, services)[0]
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
    expect(resolveFeedManifest('alpha', config, services).map((feed) => [feed.name, feed.path])).toEqual([
      ['alerts', '/alerts/alpha'],
      ['market-api-feed-2', '/alpha/'],
    ])
  })

  it('percent-encodes the profile name it substitutes', () => {
    const config = profile([{ source: 'market-api', path: '/for/{agent}', ttl: 60 }])
    expect(resolveFeedManifest('a b/c', config, services)[0]?.path).toBe('/for/a%20b%2Fc')
  })

  it('returns nothing for a profile without feeds and skips an unknown source', () => {
    expect(resolveFeedManifest('reviewer', undefined, services)).toEqual([])
    expect(resolveFeedManifest('reviewer', profile([]), services)).toEqual([])
    const manifest = resolveFeedManifest(
      'reviewer',
      profile([
        { source: 'gone', path: '/a', ttl: 1 },
        { source: 'constructor', path: '/b', ttl: 1 },
        { source: 'market-api', path: '/c', ttl: 1 },
      ]),
      services,
    )
    expect(manifest.map((feed) => feed.name)).toEqual(['c'])
  })

  it('never carries credentials, not even user:password written into a service URL', () => {
    const manifest = resolveFeedManifest('reviewer', profile([{ source: 'secret', path: '/x', ttl: 1 }]), {
      secret: { url: 'http://user:hunter2@127.0.0.1:8080', auth: { bearerEnv: 'TOKEN' } },
    })
    expect(manifest).toEqual([
      { name: 'x', source: 'secret', path: '/x', ttl: 1, url: 'http://127.0.0.1:8080/x' },
    ])
    expect(JSON.stringify(manifest)).not.toMatch(/hunter2|TOKEN|bearer/i)
  })
})
