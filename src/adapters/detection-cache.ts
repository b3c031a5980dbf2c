// Detection cached in the data dir (agents.json) for 24 hours, keyed on PATH, HOME and `adapters.<id>.path`,
// and per adapter on what decided its sign-in (auth-inputs.ts): a variable its probe read set, changed or
// removed, or a credential file written, and that adapter alone is detected again — no `--refresh` needed.
import { rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { permissionsInfo } from '../core/permissions.js'
import { authFingerprint, type AuthInputs } from './auth-inputs.js'
import {
  type DetectedAdapter,
  type DetectionOptions,
  detectAllWithInputs,
  readJsonFile,
  versionWarning,
} from './detection.js'
import type { AdapterDef } from './types.js'

export const DETECTION_TTL_MS = 24 * 60 * 60 * 1000
const CACHE_FILE = 'agents.json'
/** Bumped when DetectedAdapter or this file changes shape: an older cache is detected again. */
const CACHE_FORMAT = 3

interface DetectionCache {
  /** When the oldest answer in it was detected (the TTL counts from there). */
  detectedAt: string
  /** PATH and HOME at detection time: a different environment means a different answer. */
  key: string
  adapters: DetectedAdapter[]
  /** Per adapter: what its sign-in probe read (names and paths only) and their fingerprint then. */
  authInputs: Record<string, AuthInputs & { fingerprint: string }>
}

export interface Detection {
  adapters: DetectedAdapter[]
  detectedAt: Date
  /** Nothing was detected for this answer (`hangar agents`, `up` and `run` say so). */
  fromCache: boolean
}

function cacheKey(options: DetectionOptions): string {
  const paths = Object.entries(options.paths ?? {})
    .map(([id, override]) => `${id}=${override?.path ?? ''}`)
    .join(',')
  return `${CACHE_FORMAT}|${options.env.PATH ?? ''}|${options.home}|${paths}`
}

/** The cache when it answers for these adapters, this environment and this time; else undefined. */
async function usableCache(
  file: string,
  definitions: readonly AdapterDef[],
  options: DetectionOptions,
  now: Date,
): Promise<DetectionCache | undefined> {
  const cached = (await readJsonFile(file)) as DetectionCache | undefined
  if (!cached || cached.key !== cacheKey(options) || typeof cached.authInputs !== 'object') return undefined
  const age = now.getTime() - Date.parse(cached.detectedAt)
  if (!(age >= 0 && age < DETECTION_TTL_MS)) return undefined
  const ids = definitions.map((definition) => definition.id).join(',')
  return cached.adapters.map((adapter) => adapter.id).join(',') === ids ? cached : undefined
}

/** The adapters whose sign-in inputs (variables, credential files) changed since they were cached. */
async function changedSignIn(cached: DetectionCache, options: DetectionOptions): Promise<Set<string>> {
  const changed = new Set<string>()
  for (const adapter of cached.adapters) {
    const recorded = cached.authInputs[adapter.id]
    if (!recorded || (await authFingerprint(recorded, options.env)) !== recorded.fingerprint)
      changed.add(adapter.id)
  }
  return changed
}

async function detectWithFingerprints(definitions: readonly AdapterDef[], options: DetectionOptions) {
  const results = await detectAllWithInputs(definitions, options)
  const authInputs: DetectionCache['authInputs'] = {}
  for (const { detected, inputs } of results)
    authInputs[detected.id] = { ...inputs, fingerprint: await authFingerprint(inputs, options.env) }
  return { adapters: results.map((result) => result.detected), authInputs }
}

async function writeCache(file: string, cache: DetectionCache): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`
  try {
    await writeFile(temporary, JSON.stringify(cache, null, 2), { mode: 0o600 })
    await rename(temporary, file)
  } catch {
    // A read-only data dir only costs the cache.
  }
}

/**
 * Cached detection: everything detected again when `refresh`, older than the TTL or from another
 * PATH/HOME; only the adapters whose sign-in inputs changed (a key set or removed, a credentials file
 * written) otherwise.
 */
/**
 * Detections under way, by cache file and key: callers that find no usable cache while one runs (every run
 * submitted to a daemon that has just started) share it instead of each probing every CLI again.
 */
const detecting = new Map<string, Promise<Detection>>()

export async function loadDetection(
  definitions: readonly AdapterDef[],
  options: DetectionOptions & { dataDir: string; refresh?: boolean },
): Promise<Detection> {
  const file = path.join(options.dataDir, CACHE_FILE)
  const now = options.now ?? new Date()
  const cached = options.refresh ? undefined : await usableCache(file, definitions, options, now)
  if (!cached) {
    const running = `${file}|${cacheKey(options)}`
    const shared = options.refresh ? undefined : detecting.get(running)
    if (shared) return shared
    const detection = (async (): Promise<Detection> => {
      const fresh = await detectWithFingerprints(definitions, options)
      await writeCache(file, { detectedAt: now.toISOString(), key: cacheKey(options), ...fresh })
      return { adapters: fresh.adapters, detectedAt: now, fromCache: false }
    })().finally(() => {
      if (detecting.get(running) === detection) detecting.delete(running)
    })
    detecting.set(running, detection)
    return detection
  }
  const changed = await changedSignIn(cached, options)
  let adapters = cached.adapters
  if (changed.size > 0) {
    const again = await detectWithFingerprints(
      definitions.filter((definition) => changed.has(definition.id)),
      options,
    )
    adapters = adapters.map((adapter) => again.adapters.find((fresh) => fresh.id === adapter.id) ?? adapter)
    // The others' answers keep their age: the TTL still counts from the oldest.
    await writeCache(file, { ...cached, adapters, authInputs: { ...cached.authInputs, ...again.authInputs } })
  }
  // The ranges, capabilities and permissions are the running release's, not the cached one's.
  const current = adapters.map((adapter, index) => ({
    ...adapter,
    capabilities: definitions[index]!.capabilities,
    permissions: permissionsInfo(definitions[index]!.id),
    testedVersions: definitions[index]!.testedVersions,
    versionWarning: versionWarning(definitions[index]!, adapter.version),
  }))
  return changed.size > 0
    ? { adapters: current, detectedAt: now, fromCache: false }
    : { adapters: current, detectedAt: new Date(cached.detectedAt), fromCache: true }
}
