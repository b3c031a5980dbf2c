// Context feeds: the per-agent manifest, fetching with a TTL cache, and formatting for injection.
export { resolveFeedManifest, type ResolvedFeed } from './feed-manifest.js'
export {
  allowedText,
  feedPolicyProblem,
  type FeedRefusal,
  type FeedTrust,
  userProfileFeedRefusals,
} from './feed-path-policy.js'
export { splitFrontmatter } from './feed-frontmatter.js'
export {
  createFeedFetcher,
  type FeedFetcher,
  type FeedFetcherOptions,
  type FeedFetchState,
  type FeedRequestContext,
  type FeedResult,
  type FeedStatus,
} from './feed-fetcher.js'
export { formatFeedBlocks, type FeedCaps, type InjectedFeedSummary } from './feed-blocks.js'
