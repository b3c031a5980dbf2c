// Who may fetch what from a service with its credentials. A feed of a hangar.yaml profile is the operator's
// own: any safe path of the service. A feed of a profile made in the UI or API (by any user) is not, or a
// member could make the daemon fetch `/admin/export` with the operator's bearer and read the answer in
// their agent's context (a confused deputy): it may only use paths under the service's `userFeedPaths`
// (none by default). The manifest applies this when it is built and the fetcher again before it fetches.

import type { ProfileConfig, ServiceConfig } from '../core/config.js'
import { deriveFeedName } from '../core/feed-names.js'
import { feedPathProblem, isUnderPathPrefix } from '../core/feed-paths.js'

/** `operator`: declared in hangar.yaml. `user`: a profile made in the UI or API. */
export type FeedTrust = 'operator' | 'user'

/** Why a feed with this (resolved) path may not be fetched from `service`; undefined when it may. */
export function feedPolicyProblem(
  path: string,
  source: string,
  service: ServiceConfig | undefined,
  trust: FeedTrust,
): string | undefined {
  const syntax = feedPathProblem(path)
  if (syntax) return `path "${path}" is refused: ${syntax}`
  if (trust === 'operator') return undefined
  if (!service) return `unknown service "${source}"`
  const prefixes = service.userFeedPaths ?? []
  if (prefixes.some((prefix) => isUnderPathPrefix(path, prefix))) return undefined
  return `path "${path}" is not under a prefix service "${source}" allows to profiles made in the UI or API (${allowedText(source, prefixes)})`
}

/** The allow-list of a service in words, for messages. */
export function allowedText(source: string, prefixes: readonly string[]): string {
  return prefixes.length
    ? `allowed: ${prefixes.join(', ')}`
    : `it allows none: the operator may list some under services.${source}.userFeedPaths in hangar.yaml`
}

export interface FeedRefusal {
  /** 0-based position in the profile's feeds. */
  index: number
  name: string
  source: string
  path: string
  /** One line; it names the allowed prefixes when `outsideAllowList`. */
  reason: string
  /** The path itself is fine, but not under the service's `userFeedPaths`. */
  outsideAllowList: boolean
  /** The service's `userFeedPaths` (empty when it has none or is unknown). */
  allowedPrefixes: string[]
}

/**
 * Every feed of a user-made profile that would be refused, checked as the proxy will fetch it: with
 * `{agent}` replaced by the profile's name. An unknown service is refused too (a typo would go silent).
 */
export function userProfileFeedRefusals(
  profileName: string,
  profile: Pick<ProfileConfig, 'feeds'>,
  services: Record<string, ServiceConfig>,
): FeedRefusal[] {
  const refusals: FeedRefusal[] = []
  profile.feeds?.forEach((feed, index) => {
    const service = Object.hasOwn(services, feed.source) ? services[feed.source] : undefined
    const path = substituteAgent(feed.path, profileName)
    const reason = service
      ? feedPolicyProblem(path, feed.source, service, 'user')
      : `unknown service "${feed.source}" (${Object.keys(services).length ? `known: ${Object.keys(services).join(', ')}` : 'hangar.yaml declares none'})`
    if (reason)
      refusals.push({
        index,
        name: deriveFeedName(feed, index),
        source: feed.source,
        path: feed.path,
        reason,
        outsideAllowList: service !== undefined && feedPathProblem(path) === undefined,
        allowedPrefixes: service?.userFeedPaths ?? [],
      })
  })
  return refusals
}

/** `{agent}` → the profile name, percent-encoded (a name can never add a segment or a dot-segment). */
export function substituteAgent(path: string, profile: string): string {
  return path.replaceAll('{agent}', encodeURIComponent(profile))
}
