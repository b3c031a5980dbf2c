// The proxy's bookkeeping after an answer: held back until the event loop has slept, done in order, and
// at once when drained (a budget check, a run's end, a stop).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createAfterAnswerQueue } from './after-answer-queue.js'
import { proxyBookkeepingRan, type ProxyWorkMessage } from './proxy-timing.js'

describe('after-answer queue', () => {
  it('does nothing on add, and everything in order on its own a moment later', async () => {
    const done: number[] = []
    const queue = createAfterAnswerQueue<number>({ work: (item) => done.push(item), onError: () => {} })
    queue.add(1)
    queue.add(2)
    // Not in the microtasks after the add: only once the loop has gone round (the timer).
    await Promise.resolve()
    await new Promise<void>((resolve) => queueMicrotask(resolve))
    expect(done).toEqual([])
    expect(queue.size).toBe(2)
    await new Promise<void>((resolve) => {
      const check = () => (done.length === 2 ? resolve() : setTimeout(check, 1))
      check()
    })
    expect(done).toEqual([1, 2])
    expect(queue.size).toBe(0)
  })

  it('tells a subscriber of its diagnostics channel when each drain with work ran, and how many items', () => {
    const drains: ProxyWorkMessage[] = []
    const listen = (message: unknown) => drains.push(message as ProxyWorkMessage)
    proxyBookkeepingRan.subscribe(listen)
    try {
      const queue = createAfterAnswerQueue<number>({ work: () => {}, onError: () => {}, delayMs: 10 })
      queue.drain()
      expect(drains).toEqual([])
      queue.add(1)
      queue.add(2)
      queue.drain()
      expect(drains).toEqual([{ startedAt: expect.any(Number), endedAt: expect.any(Number), items: 2 }])
      expect(drains[0]!.endedAt).toBeGreaterThanOrEqual(drains[0]!.startedAt)
    } finally {
      proxyBookkeepingRan.unsubscribe(listen)
    }
  })

  it('does everything held at once when drained, and each item once', async () => {
    const done: number[] = []
    const queue = createAfterAnswerQueue<number>({
      work: (item) => done.push(item),
      onError: () => {},
      delayMs: 10,
    })
    queue.add(1)
    queue.add(2)
    queue.drain()
    expect(done).toEqual([1, 2])
    expect(queue.size).toBe(0)
    queue.add(3)
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(done).toEqual([1, 2, 3])
  })

  it('calls afterDrain once after a drain that did work, and not after an empty one', () => {
    const calls: string[] = []
    const queue = createAfterAnswerQueue<number>({
      work: (item) => calls.push(`work ${item}`),
      onError: (error) => calls.push(`error ${(error as Error).message}`),
      afterDrain: () => {
        calls.push('after')
        if (calls.length > 3) throw new Error('look failed')
      },
    })
    queue.drain()
    expect(calls).toEqual([])
    queue.add(1)
    queue.add(2)
    queue.drain()
    expect(calls).toEqual(['work 1', 'work 2', 'after'])
    queue.add(3)
    queue.drain()
    expect(calls).toEqual(['work 1', 'work 2', 'after', 'work 3', 'after', 'error look failed'])
  })

  it('goes on past an item whose work throws, and reports it', () => {
    const done: number[] = []
    const errors: unknown[] = []
    const queue = createAfterAnswerQueue<number>({
      work: (item) => {
        if (item === 2) throw new Error('row 2 is bad')
        done.push(item)
      },
      onError: (error) => errors.push(error),
    })
    for (const item of [1, 2, 3]) queue.add(item)
    queue.drain()
    expect(done).toEqual([1, 3])
    expect(errors).toEqual([new Error('row 2 is bad')])
  })

  describe('while requests are in flight', () => {
    beforeEach(() => void vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }))
    afterEach(() => void vi.useRealTimers())

    /** A queue whose clock and timers move together, by advance(). */
    function clockedQueue(options: { delayMs?: number; maxHoldMs: number; busy: () => boolean }) {
      let clock = 0
      const done: number[] = []
      const queue = createAfterAnswerQueue<number>({
        work: (item) => done.push(item),
        onError: () => {},
        now: () => clock,
        ...options,
      })
      const advance = async (ms: number) => {
        clock += ms
        await vi.advanceTimersByTimeAsync(ms)
      }
      return { queue, done, advance }
    }

    it('holds the work while one is, and does it a moment after the last one ends', async () => {
      let inFlight = 0
      const { queue, done, advance } = clockedQueue({
        delayMs: 2,
        maxHoldMs: 10,
        busy: () => inFlight > 0,
      })
      queue.add(1)
      // The next request came before the moment was up: its answer must not wait for the work.
      await advance(1)
      inFlight = 1
      await advance(3)
      expect(done).toEqual([])
      inFlight = 0
      queue.idle()
      await advance(1)
      expect(done).toEqual([])
      await advance(1)
      expect(done).toEqual([1])
      // With nothing in flight, the delay after the answer, as before.
      queue.add(2)
      await advance(2)
      expect(done).toEqual([1, 2])
    })

    it('does the held work after maxHoldMs when requests never pause', async () => {
      const { queue, done, advance } = clockedQueue({ maxHoldMs: 5, busy: () => true })
      queue.add(1)
      await advance(3)
      queue.add(2)
      // A request ending while another is still in flight does not put the work later than the bound.
      queue.idle()
      await advance(1)
      expect(done).toEqual([])
      await advance(1)
      expect(done).toEqual([1, 2])
    })

    it('holds the work at least its delay, however short maxHoldMs is', async () => {
      const { queue, done, advance } = clockedQueue({ delayMs: 50, maxHoldMs: 5, busy: () => false })
      queue.add(1)
      queue.idle()
      await advance(49)
      expect(done).toEqual([])
      await advance(1)
      expect(done).toEqual([1])
    })
  })
})
