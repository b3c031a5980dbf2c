// What each budget has spent, kept in memory for the proxy: seeded from the store (the sum over the
// budget's window), then raised as each request is metered, so checking a budget does not wait on the
// store. A request is admitted while its budget is not spent, and counted when it is metered: a budget
// overshoots by at most the requests in flight when it ran out. The store is read again every `reseedMs`
// (default 5 s), behind the request that finds the figure stale (no request waits on a re-read, only on
// a budget's first): what left the window stops counting then, and what other daemons sharing the store
// spent is counted then (between re-seeds, on a cluster, a budget may overshoot by that too). The store
// sums per minute (proxy_spend), so a re-read costs the same however busy the profile is.
import type { BudgetStatus } from '../core/api-types.js'
import { parseDuration } from '../core/duration.js'
import type { StoredProfile } from '../store/repositories/profiles-repository.js'
import { type Budget, type BudgetDeps, budgetOf } from './budgets.js'

export const BUDGET_RESEED_MS = 5_000

interface Spend {
  spentUsd: number
  seededAtMs: number
  /** A re-seed reading the store, and what was metered since it began (the read may miss it). */
  seeding?: { done: Promise<void>; meteredUsd: number }
}

export interface BudgetLedger {
  /**
   * The profile's budget and what it spent, or undefined when it has none. `stored` reads the user's own
   * profile (by default from the store).
   */
  status(
    userId: string,
    profile: string,
    stored?: () => Promise<StoredProfile | undefined>,
  ): Promise<BudgetStatus | undefined>
  /**
   * What `budget` of the profile has spent, from memory: undefined until its first read from the store
   * (`status` waits for that one). The proxy's path for a hangar.yaml budget: no promise, no turn.
   */
  spentFromMemory(userId: string, profile: string, budget: Budget): number | undefined
  /** A request of the profile was metered at `costUsd` (stored already, or about to be). */
  metered(userId: string, profile: string, costUsd: number): void
}

export function createBudgetLedger(
  deps: BudgetDeps & {
    reseedMs?: number
    /** Stores what was metered but not yet written (the request log is written behind). */
    beforeSeed?: () => Promise<void>
  },
): BudgetLedger {
  const reseedMs = deps.reseedMs ?? BUDGET_RESEED_MS
  const nowMs = () => (deps.now ? deps.now().getTime() : Date.now())
  const sinceOf = (budget: Budget) =>
    new Date(nowMs() - parseDuration(budget.window, 'budget window')).toISOString()
  // user → profile → window → spend. A profile's budget may change its window; each window is its own sum.
  const spends = new Map<string, Map<string, Map<string, Spend>>>()

  function windowsOf(userId: string, profile: string): Map<string, Spend> {
    let byProfile = spends.get(userId)
    if (!byProfile) spends.set(userId, (byProfile = new Map()))
    let byWindow = byProfile.get(profile)
    if (!byWindow) byProfile.set(profile, (byWindow = new Map()))
    return byWindow
  }

  function seed(userId: string, profile: string, since: string, spend: Spend): Promise<void> {
    const startedAtMs = nowMs()
    const seeding = { meteredUsd: 0, done: Promise.resolve() }
    seeding.done = Promise.resolve(deps.beforeSeed?.())
      .then(() => deps.store.forUser(userId).proxyRequests.spentSince(profile, since))
      .then((stored) => {
        // Metered during the read: counted, whether or not the read saw it (never less than spent).
        spend.spentUsd = stored + seeding.meteredUsd
        spend.seededAtMs = startedAtMs
      })
      .finally(() => {
        if (spend.seeding === seeding) delete spend.seeding
      })
    spend.seeding = seeding
    return seeding.done
  }

  /**
   * Only the first read is waited for. A re-read goes on behind: meanwhile what is in memory answers,
   * and it is never below what this daemon metered (so the overshoot bound holds while it runs).
   */
  function spentFromMemory(userId: string, profile: string, budget: Budget): number | undefined {
    const spend = spends.get(userId)?.get(profile)?.get(budget.window)
    if (!spend || spend.seededAtMs === -Infinity) return undefined
    if (!spend.seeding && nowMs() - spend.seededAtMs >= reseedMs)
      // A failed re-read keeps the last figure; the next request tries again.
      seed(userId, profile, sinceOf(budget), spend).catch(() => {})
    return spend.spentUsd
  }

  async function spentOf(userId: string, profile: string, budget: Budget, since: string): Promise<number> {
    const known = spentFromMemory(userId, profile, budget)
    if (known !== undefined) return known
    const windows = windowsOf(userId, profile)
    let spend = windows.get(budget.window)
    if (!spend) windows.set(budget.window, (spend = { spentUsd: 0, seededAtMs: -Infinity }))
    await (spend.seeding?.done ?? seed(userId, profile, since, spend))
    return spend.spentUsd
  }

  return {
    async status(userId, profile, stored) {
      const budget = await budgetOf(deps, userId, profile, stored)
      if (!budget) return undefined
      const since = sinceOf(budget)
      const spentUsd = await spentOf(userId, profile, budget, since)
      return {
        profile,
        usd: budget.usd,
        window: budget.window,
        since,
        spentUsd,
        fraction: spentUsd / budget.usd,
      }
    },
    spentFromMemory,
    metered(userId, profile, costUsd) {
      if (!(costUsd > 0)) return
      for (const spend of spends.get(userId)?.get(profile)?.values() ?? []) {
        spend.spentUsd += costUsd
        if (spend.seeding) spend.seeding.meteredUsd += costUsd
      }
    },
  }
}
