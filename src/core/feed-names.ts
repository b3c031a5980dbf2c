// A feed's name: the declared one, else derived from its path. It lives in core because config validation
// (duplicate names within one agent) and the feed manifest must derive it the same way.

/**
 * `/api/v1/market-summary` → `market-summary`, `/api/v1/portfolio/` → `portfolio`, `/` → `<source>-feed-<n>`
 * (n 1-based). Derived from the path as declared, before `{agent}` is substituted, so a name does not change
 * from one profile to another; a segment that is only `{agent}` is passed over (`/alerts/{agent}` →
 * `alerts`: a block titled "{agent}" would tell the model nothing). The query string is not part of it.
 */
export function deriveFeedName(
  feed: { name?: string | undefined; source: string; path: string },
  index: number,
): string {
  if (feed.name) return feed.name
  const segments = feed.path.split(/[?#]/, 1)[0]!.split('/')
  const last = segments.filter((segment) => segment.length > 0 && segment !== '{agent}').at(-1)
  return last ?? `${feed.source}-feed-${index + 1}`
}
