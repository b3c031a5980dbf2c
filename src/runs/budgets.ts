// Budgets per profile (`budget: { usd, window }`), in one place for the proxy, which refuses a request once
// one is spent, and for GET /api/usage, which shows how close each is. A profile of hangar.yaml wins over
// one of the user's own with the same name (the profile routes keep the names apart anyway).
import { isAdapterId } from '../core/adapter-ids.js'
import type { BudgetStatus } from '../core/api-types.js'
import { type HangarConfig, type ProfileConfig, ProfileSchema } from '../core/config.js'
import { parseDuration } from '../core/duration.js'
import type { StoredProfile } from '../store/repositories/profiles-repository.js'
import type { Store } from '../store/store.js'
import { loadUserProfiles } from './resolve-agent.js'

export type Budget = NonNullable<ProfileConfig['budget']>

export type { BudgetStatus }

export interface BudgetDeps {
  config: Pick<HangarConfig, 'agents'>
  store: Store
  now?: () => Date
}

async function statusOf(
  deps: BudgetDeps,
  userId: string,
  profile: string,
  budget: Budget,
): Promise<BudgetStatus> {
  const now = deps.now?.() ?? new Date()
  const since = new Date(now.getTime() - parseDuration(budget.window, 'budget window')).toISOString()
  const spentUsd = await deps.store.forUser(userId).proxyRequests.spentSince(profile, since)
  return { profile, usd: budget.usd, window: budget.window, since, spentUsd, fraction: spentUsd / budget.usd }
}

/** The budget a profile has, if any: hangar.yaml's, else the user's own profile's. */
export async function budgetOf(
  deps: BudgetDeps,
  userId: string,
  profile: string,
  /** How the user's own profile is read (the proxy reads it once per request for all its checks). */
  stored: () => Promise<StoredProfile | undefined> = () => deps.store.forUser(userId).profiles.get(profile),
): Promise<Budget | undefined> {
  // Runs on every proxied request: one row read at most, none for hangar.yaml's or a bare adapter id.
  const configured = deps.config.agents[profile]
  if (configured) return configured.budget
  if (isAdapterId(profile)) return undefined
  return ProfileSchema.shape.budget.safeParse((await stored())?.definition.budget).data
}

/** The budget of one profile and what it spent, or undefined when the profile has none. */
export async function budgetStatus(
  deps: BudgetDeps,
  userId: string,
  profile: string,
): Promise<BudgetStatus | undefined> {
  const budget = await budgetOf(deps, userId, profile)
  return budget ? statusOf(deps, userId, profile, budget) : undefined
}

/** Every budgeted profile the user can run: hangar.yaml's, then their own. */
export async function allBudgets(deps: BudgetDeps, userId: string): Promise<BudgetStatus[]> {
  const profiles: Record<string, ProfileConfig> = { ...deps.config.agents }
  for (const [name, profile] of Object.entries(await loadUserProfiles(deps.store, userId)))
    profiles[name] ??= profile
  const budgeted = Object.entries(profiles).flatMap(([name, profile]) =>
    profile.budget ? [[name, profile.budget] as const] : [],
  )
  return Promise.all(budgeted.map(([name, budget]) => statusOf(deps, userId, name, budget)))
}
