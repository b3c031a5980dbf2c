// Which agent a run uses: a profile from hangar.yaml, one the user made in the UI or API, a bare adapter id
// (a profile with defaults), the configured `defaultAgent`, or else one that can run: the first installed and
// signed-in CLI in registry order, else the built-in agent when it has a provider, else a CLI whose sign-in
// cannot be told — never one known not to run (defaultAgentName).
import type { DetectedAdapter } from '../adapters/detection.js'
import { isUsable } from '../adapters/detection.js'
import type { AdapterRegistry } from '../adapters/registry.js'
import type { AdapterDef } from '../adapters/types.js'
import { isAdapterId } from '../core/adapter-ids.js'
import { type HangarConfig, type ProfileConfig, ProfileSchema } from '../core/config.js'
import { AppError } from '../core/errors.js'
import type { Store } from '../store/store.js'
import type { BuiltinReadiness } from './builtin-readiness.js'
import { assertRunnableUserProfile } from './profile-problems.js'

export type ResolvedAgent =
  | {
      kind: 'cli'
      /** The profile name (or the adapter id for a bare adapter). */
      name: string
      adapter: AdapterDef
      profile: ProfileConfig | null
      detected: DetectedAdapter
    }
  | { kind: 'builtin'; name: string; profile: ProfileConfig | null }

/** A user's own profiles by name (the profile routes keep their names apart from hangar.yaml's). */
export type UserProfiles = Readonly<Record<string, ProfileConfig>>

export async function loadUserProfiles(store: Store, userId: string): Promise<UserProfiles> {
  const stored = await store.forUser(userId).profiles.list()
  // No prototype: a name such as "constructor" must not find Object.prototype's member.
  const profiles = Object.create(null) as Record<string, ProfileConfig>
  // Each was checked by the same schema when saved; parsing again fills defaults added since.
  for (const profile of stored) {
    const parsed = ProfileSchema.safeParse(profile.definition)
    if (parsed.success) profiles[profile.name] = parsed.data
  }
  return profiles
}

/**
 * Whether resolving `name` may need the user's own profiles: not for a hangar.yaml profile or an adapter id
 * (the user's own never shadow either; the profile routes keep the names apart).
 */
export function needsUserProfiles(name: string | undefined, config: Pick<HangarConfig, 'agents'>): boolean {
  return name === undefined || (config.agents[name] === undefined && !isAdapterId(name))
}

/** loadUserProfiles, unless `name` cannot mean one of them (no store read then). */
export async function userProfilesFor(
  name: string | undefined,
  config: Pick<HangarConfig, 'agents'>,
  store: Store,
  userId: string,
): Promise<UserProfiles> {
  return needsUserProfiles(name, config) ? loadUserProfiles(store, userId) : NO_USER_PROFILES
}

/** The user profiles of a name that cannot mean one. */
export const NO_USER_PROFILES: UserProfiles = Object.freeze(
  Object.create(null) as Record<string, ProfileConfig>,
)

/**
 * A profile by name: hangar.yaml's, else the user's own. Every run resolves its profile here — a first run
 * and the continuation after a decision alike — so a stored profile never falls back to defaults.
 */
export function profileNamed(
  name: string,
  config: Pick<HangarConfig, 'agents'>,
  userProfiles: UserProfiles,
): ProfileConfig | undefined {
  return config.agents[name] ?? userProfiles[name]
}

function fromName(
  name: string,
  config: HangarConfig,
  registry: AdapterRegistry,
  userProfiles: UserProfiles,
): { adapterId: string; profile: ProfileConfig | null } {
  const profile = profileNamed(name, config, userProfiles)
  // hangar.yaml's were checked at start-up; a user's may have been left behind by a later hangar.yaml.
  if (profile && !config.agents[name]) assertRunnableUserProfile(name, profile, config)
  if (profile) return { adapterId: profile.adapter, profile }
  if (name === 'builtin' || registry.get(name)) return { adapterId: name, profile: null }
  const profiles = [...new Set([...Object.keys(config.agents), ...Object.keys(userProfiles)])]
  const adapters = [...registry.all().map((adapter) => adapter.id), 'builtin']
  throw new AppError('usage', `unknown agent "${name}"`, {
    hint: `use ${profiles.length ? `a profile (${profiles.join(', ')}) or ` : ''}an adapter id: ${adapters.join(', ')}`,
  })
}

function firstSignedInCli(detected: readonly DetectedAdapter[]): DetectedAdapter | undefined {
  return detected.find((candidate) => isUsable(candidate) && candidate.auth.state === 'ok')
}

/**
 * The agent for a request that names none: hangar.yaml's `defaultAgent`, else the first installed and
 * signed-in CLI, else the built-in agent when it can reach a model, else an installed CLI whose sign-in
 * cannot be told (it may run). When nothing can run, the error says how to fix that.
 */
export async function defaultAgentName(context: {
  config: HangarConfig
  detected: readonly DetectedAdapter[]
  builtinReadiness: () => Promise<BuiltinReadiness>
}): Promise<string> {
  const { config, detected } = context
  if (config.defaultAgent) return config.defaultAgent
  const signedIn = firstSignedInCli(detected)
  if (signedIn) return signedIn.id
  const builtin = await context.builtinReadiness()
  if (builtin.ready) return 'builtin'
  const maybe = detected.find((candidate) => isUsable(candidate) && candidate.auth.state === 'unknown')
  if (maybe) return maybe.id
  throw new AppError(
    'unavailable',
    'no agent can run here: no agent CLI is installed and signed in, and the built-in agent needs a provider',
    {
      retryable: false,
      hint: `for the built-in agent, ${builtin.fix}; or install an agent CLI and sign in to it (see hangar agents)`,
    },
  )
}

/** resolveAgent, with a request that names no agent given defaultAgentName's (one that can run). */
export async function resolveAgentOrDefault(
  requested: string | undefined,
  context: Parameters<typeof resolveAgent>[1] & { builtinReadiness: () => Promise<BuiltinReadiness> },
): Promise<ResolvedAgent> {
  return resolveAgent(requested ?? (await defaultAgentName(context)), context)
}

/** The agent a name stands for (a request naming none goes through resolveAgentOrDefault). */
export function resolveAgent(
  name: string,
  context: {
    config: HangarConfig
    registry: AdapterRegistry
    detected: readonly DetectedAdapter[]
    userProfiles?: UserProfiles
  },
): ResolvedAgent {
  const { config, registry, detected } = context
  const { adapterId, profile } = fromName(name, config, registry, context.userProfiles ?? Object.create(null))
  if (adapterId === 'builtin') return { kind: 'builtin', name, profile }
  const adapter = registry.require(adapterId)
  const detection = detected.find((candidate) => candidate.id === adapterId)
  if (!detection?.installed) {
    // Detection may know why (a config dir without the binary on PATH, a wrong adapters.<id>.path).
    const why = detection?.problem ? `: ${detection.problem}` : ''
    throw new AppError('unavailable', `${adapterId} is not installed${why}`, {
      retryable: false,
      hint: why ? 'then run hangar agents --refresh' : 'install it, then run hangar agents --refresh',
    })
  }
  if (!isUsable(detection)) {
    throw new AppError('unavailable', `${adapterId} cannot run: ${detection.problem ?? 'not usable'}`, {
      retryable: false,
      hint: 'see hangar agents --refresh',
    })
  }
  return { kind: 'cli', name, adapter, profile, detected: detection }
}
