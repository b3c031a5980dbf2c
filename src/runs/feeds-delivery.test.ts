// Issue 18 item 7: a run whose model traffic bypasses the proxy got none of its profile's feeds, silently.
import { describe, expect, it } from 'vitest'
import { codexAdapter } from '../adapters/defs/codex.js'
import { cursorAgentAdapter } from '../adapters/defs/cursor-agent.js'
import { feedsNotDeliveredEvent } from './feeds-delivery.js'

describe('feeds-delivery', () => {
  it('says nothing when the profile has no feeds', () => {
    expect(
      feedsNotDeliveredEvent({ agent: 'coder', adapter: codexAdapter, feeds: [], cause: 'proxy-off' }),
    ).toBeUndefined()
  })

  it('names the feeds and proxy: false as the reason, as a warning that fails nothing', () => {
    expect(
      feedsNotDeliveredEvent({
        agent: 'coder',
        adapter: codexAdapter,
        feeds: ['status', 'alerts'],
        cause: 'proxy-off',
      }),
    ).toEqual({
      type: 'error',
      code: 'feeds_not_delivered',
      retryable: false,
      message:
        'feeds not delivered: agent "coder" has proxy: false, so its model traffic does not pass through Hangar\'s proxy and its 2 feeds ("status", "alerts") cannot be injected; remove proxy: false from the profile to deliver them',
    })
  })

  it("says a CLI's own login cannot be routed, and how to route it", () => {
    const event = feedsNotDeliveredEvent({
      agent: 'coder',
      adapter: codexAdapter,
      feeds: ['status'],
      cause: 'unroutable',
    })
    expect(event?.message).toMatch(
      /^feeds not delivered: Codex CLI runs on its own login here \(no API key or endpoint Hangar could route\), which cannot go through Hangar's proxy, so the feed "status" of agent "coder" cannot be injected; .*API key/,
    )
  })

  it('says a CLI that cannot be pointed at another endpoint never gets feeds', () => {
    const event = feedsNotDeliveredEvent({
      agent: 'cursor',
      adapter: cursorAgentAdapter,
      feeds: ['status'],
      cause: 'unroutable',
    })
    expect(event?.message).toMatch(
      /^feeds not delivered: Cursor Agent cannot be pointed at another model endpoint/,
    )
  })

  it('says when the proxy is not served at all', () => {
    const event = feedsNotDeliveredEvent({
      agent: 'coder',
      adapter: codexAdapter,
      feeds: ['a'],
      cause: 'no-proxy',
    })
    expect(event?.message).toMatch(/^feeds not delivered: Hangar's proxy is not running for this run/)
  })
})
