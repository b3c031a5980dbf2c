// A budget set on a profile made in the UI or over the API was never enforced: the proxy read budgets
// from hangar.yaml only, so such a profile could spend without limit.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { proxyRequestRow } from '../../test/helpers/proxy-request-row.js'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import { parseConfig } from '../core/config.js'
import { allBudgets, type BudgetDeps, budgetStatus } from './budgets.js'

const NOW = new Date('2026-03-10T12:00:00.000Z')

describe('budgets', () => {
  let testStore: TestStore
  let deps: BudgetDeps
  let userId: string

  const spend = (id: string, profile: string, startedAt: string, costUsd: number) =>
    testStore.store.forUser(userId).proxyRequests.record(
      proxyRequestRow({
        id,
        profile,
        startedAt,
        costUsd,
        usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
      }),
    )

  beforeEach(async () => {
    testStore = await STORE_ENGINES[0]!.open()
    const { store } = testStore
    userId = (await store.users.create({ name: 'owner', role: 'owner' })).id
    const config = parseConfig(
      'agents:\n  reviewer: { adapter: claude-code, budget: { usd: 2, window: 1w } }\n  free: { adapter: codex }\n',
    )
    deps = { config: config!, store, now: () => NOW }
    const profiles = store.forUser(userId).profiles
    await profiles.put('mine', { adapter: 'builtin', budget: { usd: 1, window: '1d' } })
    // Same name as hangar.yaml's: the file wins.
    await profiles.put('reviewer', { adapter: 'builtin', budget: { usd: 100, window: '1d' } })
    await profiles.put('unbudgeted', { adapter: 'builtin' })
    await spend('p1', 'mine', '2026-03-10T08:00:00.000Z', 0.75)
    await spend('p2', 'mine', '2026-03-10T09:00:00.000Z', 0.5)
    // Outside the 1-day window.
    await spend('p3', 'mine', '2026-03-09T08:00:00.000Z', 10)
  })
  afterEach(async () => {
    await testStore.dispose()
  })

  it("enforces the budget of a user's own profile: spent within its window", async () => {
    expect(await budgetStatus(deps, userId, 'mine')).toEqual({
      profile: 'mine',
      usd: 1,
      window: '1d',
      since: '2026-03-09T12:00:00.000Z',
      spentUsd: 1.25,
      fraction: 1.25,
    })
  })

  it('prefers the budget of hangar.yaml and answers nothing for a profile without one', async () => {
    expect(await budgetStatus(deps, userId, 'reviewer')).toMatchObject({ usd: 2, window: '1w' })
    expect(await budgetStatus(deps, userId, 'free')).toBeUndefined()
    expect(await budgetStatus(deps, userId, 'unbudgeted')).toBeUndefined()
    expect(await budgetStatus(deps, userId, 'nobody')).toBeUndefined()
  })

  it("lists every budgeted profile, hangar.yaml's first, and none of another user's", async () => {
    expect((await allBudgets(deps, userId)).map((budget) => [budget.profile, budget.usd])).toEqual([
      ['reviewer', 2],
      ['mine', 1],
    ])
    const other = await testStore.store.users.create({ name: 'other', role: 'member' })
    expect((await allBudgets(deps, other.id)).map((budget) => budget.profile)).toEqual(['reviewer'])
    expect(await budgetStatus(deps, other.id, 'mine')).toBeUndefined()
  })
})
