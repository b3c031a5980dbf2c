import { describe, expect, it } from 'vitest'
import type { AgentEvent, EventEnvelope } from '../core/events.js'
import { createEventBus, type EventBus, type EventPosition, type Subscription } from './event-bus.js'

const USER = 'usr_1'
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function envelopeOf(runId: string, seq: number, event: AgentEvent): EventEnvelope {
  return { ...event, v: 1, runId, seq, ts: '2026-01-01T00:00:00.000Z' }
}

/**
 * A run's event log as the one writer keeps it: each batch is stored first, then published. Reads take a
 * random few milliseconds so that live batches arrive while a subscriber is replaying.
 */
function fakeRun(bus: EventBus, runId: string, conversationId: string | null = null) {
  const stored: EventEnvelope[] = []
  let seq = 0
  return {
    stored,
    write(events: AgentEvent[]) {
      const batch = events.map((event) => envelopeOf(runId, ++seq, event))
      stored.push(...batch)
      bus.publish(batch, { userId: USER, conversationId })
    },
    end() {
      this.write([{ type: 'run-end', status: 'succeeded' }])
    },
    async loadStored(afterSeq: number, pageSize = 7): Promise<EventEnvelope[]> {
      await sleep(Math.random() * 4)
      return stored.filter((envelope) => envelope.seq > afterSeq).slice(0, pageSize)
    },
  }
}

const text = (value: string): AgentEvent => ({ type: 'text-delta', text: value })

/** Everything a subscription yields; closed after `deadlineMs` so that a lost run-end fails, not hangs. */
async function collect(subscription: Subscription, limit = Number.POSITIVE_INFINITY, deadlineMs = 5000) {
  const deadline = setTimeout(() => subscription.close(), deadlineMs)
  const received: EventEnvelope[] = []
  try {
    for await (const envelope of subscription) {
      received.push(envelope)
      if (received.length >= limit) break
    }
  } finally {
    clearTimeout(deadline)
  }
  return received
}

const seqsOf = (envelopes: EventEnvelope[]) => envelopes.map((envelope) => envelope.seq)
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => from + index)

describe('event-bus', () => {
  it('replays what is stored, then delivers live in order, and ends after run-end', async () => {
    const bus = createEventBus()
    const run = fakeRun(bus, 'run_A')
    run.write([text('a'), text('b')])
    const subscription = bus.subscribeRun('run_A', {
      afterSeq: 0,
      loadStored: (after) => run.loadStored(after),
    })
    const received = collect(subscription)
    await sleep(10)
    run.write([text('c')])
    run.write([text('d'), text('e')])
    run.end()
    expect(seqsOf(await received)).toEqual([1, 2, 3, 4, 5, 6])
    expect(subscription.reason).toBe('run-end')
    await expect(subscription.ended).resolves.toBe('run-end')
  })

  it('leaves no gap and no duplicate at the replay/live seam while a publisher keeps writing', async () => {
    const bus = createEventBus()
    const run = fakeRun(bus, 'run_A')
    const total = 400
    const publisher = setInterval(() => {
      const left = total - 1 - run.stored.length
      if (left <= 0) {
        run.end()
        return clearInterval(publisher)
      }
      const size = Math.min(left, 1 + Math.floor(Math.random() * 3))
      run.write(Array.from({ length: size }, (_, index) => text(String(index))))
    }, 1)
    // Subscribers join at random moments, resuming from random points of what is already stored.
    const subscribers: Promise<{
      afterSeq: number
      received: EventEnvelope[]
      subscription: Subscription
    }>[] = []
    for (let index = 0; index < 30; index++) {
      await sleep(Math.random() * 12)
      const afterSeq = Math.floor(Math.random() * run.stored.length)
      const subscription = bus.subscribeRun('run_A', {
        afterSeq,
        loadStored: (after) => run.loadStored(after),
      })
      subscribers.push(collect(subscription).then((received) => ({ afterSeq, received, subscription })))
    }
    for (const { afterSeq, received, subscription } of await Promise.all(subscribers)) {
      expect(subscription.reason).toBe('run-end')
      expect(seqsOf(received)).toEqual(range(afterSeq + 1, total))
      expect(received).toEqual(run.stored.slice(afterSeq))
    }
    expect(run.stored.at(-1)!.type).toBe('run-end')
  })

  it('ends a subscriber that falls behind as lagging without blocking the publisher or other subscribers', async () => {
    const bus = createEventBus({ maxQueue: 3 })
    const run = fakeRun(bus, 'run_A')
    const stalled = bus.subscribeRun('run_A', { afterSeq: 0, loadStored: (after) => run.loadStored(after) })
    const stalledEvents = stalled[Symbol.asyncIterator]()
    const reader = bus.subscribeRun('run_A', { afterSeq: 0, loadStored: (after) => run.loadStored(after) })
    const received = collect(reader)
    await sleep(10)
    for (let index = 0; index < 20; index++) {
      run.write([text(String(index))])
      await sleep(0)
    }
    run.end()
    expect(stalled.reason).toBe('lagging')
    await expect(stalled.ended).resolves.toBe('lagging')
    // Nothing queued is handed out after the end: the client resumes from its last id instead.
    await expect(stalledEvents.next()).resolves.toEqual({ done: true, value: undefined })
    expect(seqsOf(await received)).toEqual(range(1, 21))
    expect(reader.reason).toBe('run-end')
  })

  it('ends as lagging when live events pile up during a slow replay', async () => {
    const bus = createEventBus({ maxQueue: 5 })
    const run = fakeRun(bus, 'run_A')
    const subscription = bus.subscribeRun('run_A', {
      afterSeq: 0,
      loadStored: () => sleep(50).then(() => []),
    })
    const received = collect(subscription)
    for (let index = 0; index < 6; index++) run.write([text(String(index))])
    expect(await received).toEqual([])
    expect(subscription.reason).toBe('lagging')
  })

  it('orders a conversation by run and resumes from a runId:seq position', async () => {
    const bus = createEventBus()
    const first = fakeRun(bus, 'run_01A', 'conv_1')
    const second = fakeRun(bus, 'run_01B', 'conv_1')
    const other = fakeRun(bus, 'run_01C', 'conv_2')
    const runs = [first, second]
    const loadStored = async (after: EventPosition | null) => {
      await sleep(Math.random() * 3)
      for (const run of runs) {
        const runId = run.stored[0]?.runId
        if (!runId || (after && runId < after.runId)) continue
        const page = await run.loadStored(after && runId === after.runId ? after.seq : 0, 3)
        if (page.length > 0) return page
      }
      return []
    }
    first.write([text('a'), text('b'), text('c')])
    first.end()
    const fromStart = bus.subscribeConversation('conv_1', { after: null, loadStored })
    const resumed = bus.subscribeConversation('conv_1', { after: { runId: 'run_01A', seq: 2 }, loadStored })
    const allEvents = collect(fromStart, 4 + 3)
    const resumedEvents = collect(resumed, 2 + 3)
    await sleep(10)
    second.write([text('x')])
    other.write([text('not this conversation')])
    second.write([text('y')])
    second.end()
    const idsOf = (envelopes: EventEnvelope[]) =>
      envelopes.map((envelope) => `${envelope.runId}:${envelope.seq}`)
    expect(idsOf(await allEvents)).toEqual([
      'run_01A:1',
      'run_01A:2',
      'run_01A:3',
      'run_01A:4',
      'run_01B:1',
      'run_01B:2',
      'run_01B:3',
    ])
    expect(idsOf(await resumedEvents)).toEqual([
      'run_01A:3',
      'run_01A:4',
      'run_01B:1',
      'run_01B:2',
      'run_01B:3',
    ])
    // A conversation stream outlives its runs' ends: only the client's break ended these.
    expect(fromStart.reason).toBe('closed')
  })

  it('finishes replaying an older run of a conversation while a newer one arrives live', async () => {
    const bus = createEventBus()
    const first = fakeRun(bus, 'run_01A', 'conv_1')
    const second = fakeRun(bus, 'run_01B', 'conv_1')
    first.write([text('a'), text('b'), text('c'), text('d')])
    first.end()
    let release = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    const subscription = bus.subscribeConversation('conv_1', {
      after: null,
      // The first page is held back until the newer run has started writing.
      loadStored: async (after) => {
        await gate
        if (!after || after.runId === 'run_01A') {
          const page = await first.loadStored(after?.seq ?? 0, 2)
          if (page.length > 0) return page
        }
        return after?.seq === Number.POSITIVE_INFINITY ? [] : second.loadStored(0, 2)
      },
    })
    const received = collect(subscription, 5 + 3)
    second.write([text('x'), text('y')])
    release()
    await sleep(5)
    second.end()
    expect((await received).map((envelope) => `${envelope.runId}:${envelope.seq}`)).toEqual([
      ...range(1, 5).map((seq) => `run_01A:${seq}`),
      ...range(1, 3).map((seq) => `run_01B:${seq}`),
    ])
  })

  it('replays an ended run without waiting for a run-end it never wrote', async () => {
    const bus = createEventBus()
    const run = fakeRun(bus, 'run_A')
    run.write([text('a'), { type: 'error', code: 'interrupted', message: 'daemon died', retryable: false }])
    const subscription = bus.subscribeRun('run_A', {
      afterSeq: 0,
      ended: true,
      loadStored: (after) => run.loadStored(after),
    })
    expect(seqsOf(await collect(subscription))).toEqual([1, 2])
    expect(subscription.reason).toBe('run-end')
  })

  it('ends a waiting iteration on close, and stops routing to it', async () => {
    const bus = createEventBus()
    const run = fakeRun(bus, 'run_A')
    const subscription = bus.subscribeRun('run_A', {
      afterSeq: 0,
      loadStored: (after) => run.loadStored(after),
    })
    const received = collect(subscription)
    await sleep(10)
    run.write([text('a')])
    await sleep(5)
    subscription.close()
    run.write([text('b')])
    expect(seqsOf(await received)).toEqual([1])
    expect(subscription.reason).toBe('closed')
    expect(() => subscription[Symbol.asyncIterator]()).toThrow(/only once/)
  })

  it('closes every subscription, open or later, when the bus closes', async () => {
    const bus = createEventBus()
    const run = fakeRun(bus, 'run_A')
    const loadStored = (after: number) => run.loadStored(after)
    const subscriptions = [
      bus.subscribeRun('run_A', { afterSeq: 0, loadStored }),
      bus.subscribeConversation('conv_1', { after: null, loadStored: async () => [] }),
    ]
    const iterations = subscriptions.map((subscription) => collect(subscription))
    await sleep(5)
    bus.close()
    expect(await Promise.all(iterations)).toEqual([[], []])
    expect(subscriptions.map((subscription) => subscription.reason)).toEqual(['closed', 'closed'])
    const late = bus.subscribeRun('run_A', { afterSeq: 0, loadStored })
    expect(late.reason).toBe('closed')
    expect(await collect(late)).toEqual([])
  })

  it('gives a user feed only the wanted types of that user, live, and never lags on text deltas', async () => {
    const bus = createEventBus({ maxQueue: 5 })
    const feed = bus.subscribeUser(USER, ['run-start', 'run-end', 'approval-required'])
    const mine = fakeRun(bus, 'run_A')
    const publishAsOther = (events: AgentEvent[]) =>
      bus.publish(
        events.map((event, index) => envelopeOf('run_B', index + 1, event)),
        { userId: 'usr_2', conversationId: null },
      )
    mine.write([{ type: 'run-start', agent: 'builtin', adapter: 'builtin', cwd: '/w', proxied: true }])
    // Far more deltas than the queue holds: filtered out before they are queued.
    mine.write(Array.from({ length: 50 }, (_, index) => text(`chunk ${index}`)))
    publishAsOther([{ type: 'run-start', agent: 'x', adapter: 'x', cwd: '/w', proxied: true }])
    mine.end()
    const received = await collect(feed, 2)
    expect(received.map((envelope) => [envelope.runId, envelope.type])).toEqual([
      ['run_A', 'run-start'],
      ['run_A', 'run-end'],
    ])
    expect(feed.reason).toBe('closed')
  })
})
