// Feeds reach the model only through Hangar's proxy. A run that goes out unproxied — `proxy: false`, a CLI
// login the proxy cannot carry (Codex on a ChatGPT login, Gemini on a Google login, Copilot on GitHub's),
// a CLI that cannot be pointed at another endpoint (Cursor) — would drop its profile's feeds without a
// word; instead it gets one visible warning event naming the feeds and why (issue 18 item 7).
import { errorEvent } from '../adapters/parsers/agent-error-codes.js'
import type { AdapterDef } from '../adapters/types.js'
import type { ErrorEvent } from '../core/events.js'

/** Why a run is not proxied. */
export type UnproxiedCause = 'proxy-off' | 'no-proxy' | 'unroutable'

export interface UndeliveredFeeds {
  agent: string
  adapter: Pick<AdapterDef, 'displayName' | 'endpointFamilies'>
  /** Names of the feeds the run would have had. */
  feeds: readonly string[]
  cause: UnproxiedCause
}

/** The `feeds_not_delivered` warning for an unproxied run, or undefined when it has no feeds to miss. */
export function feedsNotDeliveredEvent(input: UndeliveredFeeds): ErrorEvent | undefined {
  const count = input.feeds.length
  if (count === 0) return undefined
  const quoted = input.feeds.map((name) => `"${name}"`).join(', ')
  const theFeeds = count === 1 ? `the feed ${quoted}` : `the ${count} feeds (${quoted})`
  const itsFeeds = count === 1 ? `its feed ${quoted}` : `its ${count} feeds (${quoted})`
  const { agent, adapter } = input
  let reason: string
  if (input.cause === 'proxy-off')
    reason = `agent "${agent}" has proxy: false, so its model traffic does not pass through Hangar's proxy and ${itsFeeds} cannot be injected; remove proxy: false from the profile to deliver them`
  else if (input.cause === 'no-proxy')
    reason = `Hangar's proxy is not running for this run, so ${theFeeds} of agent "${agent}" cannot be injected`
  else if (adapter.endpointFamilies.length === 0)
    reason = `${adapter.displayName} cannot be pointed at another model endpoint, so its traffic never passes through Hangar's proxy and ${theFeeds} of agent "${agent}" cannot be injected; use an agent Hangar can route to deliver them`
  else
    reason = `${adapter.displayName} runs on its own login here (no API key or endpoint Hangar could route), which cannot go through Hangar's proxy, so ${theFeeds} of agent "${agent}" cannot be injected; give Hangar an API key for it (Settings → Providers, or providers: in hangar.yaml) to deliver them`
  return errorEvent('feeds_not_delivered', `feeds not delivered: ${reason}`, false)
}
