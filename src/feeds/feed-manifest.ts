// The resolved feed manifest of one agent profile: what `hangar feeds PROFILE` and
// `GET /api/profiles/:name/feeds` show and what the proxy fetches. It is built from config alone, so it never
// holds a credential: service tokens are resolved at fetch time. A feed the path policy refuses stays in the
// manifest with its reason (so its owner sees why) and is never fetched.

import type { ProfileConfig, ServiceConfig } from '../core/config.js'
import { deriveFeedName } from '../core/feed-names.js'
import { feedPolicyProblem, type FeedTrust, substituteAgent } from './feed-path-policy.js'

export interface ResolvedFeed {
  name: string
  source: string
  /** The declared path with `{agent}` substituted. */
  path: string
  /** Seconds. */
  ttl: number
  url: string
  /** Who declared it: `operator` (hangar.yaml) or `user` (a profile made in the UI or API). */
  trust: FeedTrust
  /** Why it is not fetched (see feed-path-policy); absent when it may be. */
  refused?: string
}

/**
 * Feeds in declaration order. A feed whose source is unknown (a user's profile the config no longer
 * supports: hangar.yaml's own are rejected at start-up) stays, refused, so it is shown, never dropped.
 */
export function resolveFeedManifest(
  profile: string,
  config: ProfileConfig | undefined,
  services: Record<string, ServiceConfig>,
  trust: FeedTrust,
): ResolvedFeed[] {
  const manifest: ResolvedFeed[] = []
  config?.feeds?.forEach((feed, index) => {
    const service = Object.hasOwn(services, feed.source) ? services[feed.source] : undefined
    // The name comes from the path as declared, so it is the same for every profile sharing the feed.
    const name = deriveFeedName(feed, index)
    const path = substituteAgent(feed.path, profile)
    if (!service) {
      const known = Object.keys(services)
      manifest.push({
        name,
        source: feed.source,
        path,
        ttl: feed.ttl,
        url: '',
        trust,
        refused: `unknown service "${feed.source}" (${known.length ? `known: ${known.join(', ')}` : 'hangar.yaml declares none'})`,
      })
      return
    }
    const resolved: ResolvedFeed = {
      name,
      source: feed.source,
      path,
      ttl: feed.ttl,
      url: serviceBase(service.url) + path,
      trust,
    }
    const refused = feedPolicyProblem(path, feed.source, service, trust)
    if (refused) resolved.refused = refused
    manifest.push(resolved)
  })
  return manifest
}

/** The service URL without trailing slashes and without any `user:password@` (fetch refuses those anyway). */
export function serviceBase(url: string): string {
  return url.replace(/^(https?:\/\/)[^/?#@]*@/i, '$1').replace(/\/+$/, '')
}
