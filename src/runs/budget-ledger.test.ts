// Budget state from memory: seeded from the store once per re-seed interval, then kept up to date as
// requests are metered, so a spent budget refuses the next request without reading the store — and a
// budget never overshoots by more than the requests that were in flight when it ran out.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { proxyRequestRow } from '../../test/helpers/proxy-request-row.js'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import { parseConfig } from '../core/config.js'
import { type BudgetLedger, createBudgetLedger } from './budget-ledger.js'

describe.each(STORE_ENGINES)('budget ledger ($name)', (engine) => {
  let testStore: TestStore
  let ledger: BudgetLedger
  let userId: string
  let now: Date
  let rows = 0

  let log: ReturnType<TestStore['store']['forUser']>['proxyRequests']
  const spend = (costUsd: number, profile = 'reviewer') =>
    log.record(proxyRequestRow({ id: `p${++rows}`, profile, startedAt: now.toISOString(), costUsd }))

  beforeEach(async () => {
    now = new Date('2026-03-10T12:00:00.000Z')
    testStore = await engine.open()
    userId = (await testStore.store.users.create({ name: 'owner', role: 'owner' })).id
    log = testStore.store.forUser(userId).proxyRequests
    const config = parseConfig(
      'agents:\n  reviewer: { adapter: claude-code, budget: { usd: 1, window: 1h } }\n',
    )
    ledger = createBudgetLedger({ config: config!, store: testStore.store, now: () => now, reseedMs: 5_000 })
  })
  afterEach(async () => {
    vi.restoreAllMocks()
    await testStore.dispose()
  })

  it('seeds from the store once, then answers from memory', async () => {
    await spend(0.25)
    const reads = vi.spyOn(testStore.store, 'forUser')
    expect(await ledger.status(userId, 'reviewer')).toMatchObject({ spentUsd: 0.25, usd: 1, window: '1h' })
    const afterSeed = reads.mock.calls.length
    for (let i = 0; i < 5; i++)
      expect(await ledger.status(userId, 'reviewer')).toMatchObject({ spentUsd: 0.25 })
    expect(reads.mock.calls.length).toBe(afterSeed)
  })

  it('answers spentFromMemory without a promise once seeded, and re-seeds behind it after the interval', async () => {
    const budget = { usd: 1, window: '1h' }
    await spend(0.25)
    // Nothing read yet: the proxy must wait for status() this once.
    expect(ledger.spentFromMemory(userId, 'reviewer', budget)).toBeUndefined()
    await ledger.status(userId, 'reviewer')
    expect(ledger.spentFromMemory(userId, 'reviewer', budget)).toBe(0.25)
    ledger.metered(userId, 'reviewer', 0.5)
    expect(ledger.spentFromMemory(userId, 'reviewer', budget)).toBe(0.75)
    // Another window of the same profile is its own sum, read on its own first status().
    expect(ledger.spentFromMemory(userId, 'reviewer', { usd: 1, window: '2h' })).toBeUndefined()
    // Spent elsewhere (another daemon): the figure in memory answers at once, and the re-read it starts
    // behind brings the store's figure in (0.25 + 0.125 stored; the 0.5 metered was never stored here).
    await spend(0.125)
    now = new Date(now.getTime() + 5_000)
    expect(ledger.spentFromMemory(userId, 'reviewer', budget)).toBe(0.75)
    await expect.poll(() => ledger.spentFromMemory(userId, 'reviewer', budget)).toBe(0.375)
  })

  it('counts a metered request at once, and re-seeds from the store after the interval', async () => {
    const spentNow = async () => (await ledger.status(userId, 'reviewer'))!.spentUsd
    expect(await ledger.status(userId, 'reviewer')).toMatchObject({ spentUsd: 0 })
    await spend(0.5)
    ledger.metered(userId, 'reviewer', 0.5)
    expect(await ledger.status(userId, 'reviewer')).toMatchObject({ spentUsd: 0.5 })
    // Spent elsewhere (another daemon): seen once the re-seed the next request starts has read the store.
    await spend(0.125)
    now = new Date(now.getTime() + 5_000)
    await expect.poll(spentNow).toBe(0.625)
    // What leaves the window stops counting at the re-seed after it left (to the minute: the store sums
    // spend per minute, and the minute the window starts in counts whole).
    now = new Date(now.getTime() + 3_600_000)
    await expect.poll(spentNow).toBe(0.625)
    now = new Date(now.getTime() + 60_000)
    await expect.poll(spentNow).toBe(0)
  })

  it('answers from memory while a re-seed reads the store: no request waits on it', async () => {
    await spend(0.25)
    expect(await ledger.status(userId, 'reviewer')).toMatchObject({ spentUsd: 0.25 })
    now = new Date(now.getTime() + 5_000)
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const real = log.spentSince.bind(log)
    vi.spyOn(testStore.store, 'forUser').mockImplementation(
      () =>
        ({
          proxyRequests: {
            spentSince: async (profile: string, since: string) => {
              await gate
              return real(profile, since)
            },
          },
        }) as never,
    )
    await spend(0.5)
    // The re-read is held at the gate: the requests meanwhile are answered with what is in memory.
    expect(await ledger.status(userId, 'reviewer')).toMatchObject({ spentUsd: 0.25 })
    ledger.metered(userId, 'reviewer', 0.125)
    expect(await ledger.status(userId, 'reviewer')).toMatchObject({ spentUsd: 0.375 })
    release()
    await expect.poll(async () => (await ledger.status(userId, 'reviewer'))!.spentUsd).toBeCloseTo(0.875)
  })

  it('a spend metered while a re-seed reads the store is not lost', async () => {
    await ledger.status(userId, 'reviewer')
    now = new Date(now.getTime() + 5_000)
    const real = log.spentSince.bind(log)
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    vi.spyOn(testStore.store, 'forUser').mockImplementation(
      () =>
        ({
          proxyRequests: {
            spentSince: async (profile: string, since: string) => {
              const spent = await real(profile, since)
              await gate
              return spent
            },
          },
        }) as never,
    )
    const reseeding = ledger.status(userId, 'reviewer')
    await new Promise((resolve) => setTimeout(resolve, 50))
    await spend(0.5)
    ledger.metered(userId, 'reviewer', 0.5)
    release()
    await reseeding
    vi.restoreAllMocks()
    expect((await ledger.status(userId, 'reviewer'))!.spentUsd).toBeGreaterThanOrEqual(0.5)
  })

  it('never overshoots by more than the requests in flight', async () => {
    const COST = 0.3
    const IN_FLIGHT = 4
    let admitted = 0
    let refused = 0
    /** One proxied request: the budget check, the model's time, then metering. */
    async function request(): Promise<void> {
      const status = await ledger.status(userId, 'reviewer')
      if (status!.spentUsd >= status!.usd) {
        refused++
        return
      }
      admitted++
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10))
      await spend(COST)
      ledger.metered(userId, 'reviewer', COST)
    }
    // Waves of concurrent requests until the budget refuses a whole wave.
    while (refused < IN_FLIGHT) {
      refused = 0
      await Promise.all(Array.from({ length: IN_FLIGHT }, () => request()))
    }
    const spent = admitted * COST
    // The budget ran out; at most IN_FLIGHT requests were admitted past the point where it had enough.
    expect(spent).toBeGreaterThanOrEqual(1)
    expect(spent).toBeLessThan(1 + IN_FLIGHT * COST)
    // And the next request is refused at once, from memory.
    const reads = vi.spyOn(testStore.store, 'forUser')
    expect((await ledger.status(userId, 'reviewer'))!.spentUsd).toBeCloseTo(spent)
    expect(reads).not.toHaveBeenCalled()
  })
})
