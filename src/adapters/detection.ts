// Which agent CLIs are installed, at what version, and whether they are signed in. Every adapter is
// probed in parallel and in isolation: a broken or hanging CLI costs at most its own timeout. `--version`
// runs in a temp HOME and cwd so probing never touches the user's state. Results are cached in the data
// dir for 24 hours. `adapters.<id>.path` in hangar.yaml replaces the PATH search for that CLI; a CLI not
// found says what would fix it, and a version outside the adapter's tested range is flagged.
import { spawn } from 'node:child_process'
import { constants as fsConstants } from 'node:fs'
import { access, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { AdapterCapabilities, AdapterDef, AuthState, ResolvedExecutable } from './types.js'
import { permissionsInfo, type PermissionsInfo } from '../core/permissions.js'
import { versionInRange } from './version-range.js'

export const DETECTION_TTL_MS = 24 * 60 * 60 * 1000
export const VERSION_TIMEOUT_MS = 5000
/** A version probe that timed out among all the others is tried again alone, this many times as long. */
const ALONE_TIMEOUT_FACTOR = 4
const NO_ANSWER = '--version did not answer within'
const CACHE_FILE = 'agents.json'
/** Bumped when DetectedAdapter changes shape: an older cache is detected again. */
const CACHE_FORMAT = 2

export interface DetectedAdapter {
  id: string
  displayName: string
  installed: boolean
  /** The PATH hit, or the `adapters.<id>.path` of hangar.yaml. */
  path: string | null
  executable: ResolvedExecutable | null
  version: string | null
  configDirFound: boolean
  auth: AuthState
  verified: boolean
  capabilities: AdapterCapabilities
  /**
   * Why an installed CLI cannot be used (version probe failed, no suitable Node…), or what would make a
   * CLI that was not found usable (its config dir exists but it is not on PATH; a configured path is wrong).
   */
  problem: string | null
  /** The semver range of CLI versions the adapter was tested with. */
  testedVersions: string
  /** Set when the detected version is outside `testedVersions`. */
  versionWarning: string | null
  /** The default permission mode and what each mode becomes for this CLI. */
  permissions: PermissionsInfo
}

export interface DetectionOptions {
  env: Readonly<Record<string, string | undefined>>
  home: string
  /** `adapters.<id>.path` of hangar.yaml: these files instead of a PATH search. */
  paths?: Readonly<Partial<Record<AdapterDef['id'], { path: string } | undefined>>>
  versionTimeoutMs?: number
  now?: Date
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, fsConstants.X_OK)
    return (await stat(file)).isFile()
  } catch {
    return false
  }
}

export async function findOnPath(
  names: readonly string[],
  pathValue: string | undefined,
): Promise<string | null> {
  const directories = (pathValue ?? '').split(path.delimiter).filter(Boolean)
  for (const name of names) {
    for (const directory of directories) {
      const candidate = path.join(directory, name)
      if (await isExecutable(candidate)) return candidate
    }
  }
  return null
}

/** Runs `<executable> <args>` in a throwaway HOME and cwd; resolves with its output or null on failure. */
export async function probeVersion(
  executable: ResolvedExecutable,
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  timeoutMs: number,
): Promise<{ output: string } | { error: string }> {
  const sandbox = await mkdtemp(path.join(os.tmpdir(), 'hangar-probe-'))
  try {
    return await new Promise((resolve) => {
      const command = executable.interpreter ?? executable.path
      const argv = executable.interpreter ? [executable.path, ...args] : [...args]
      const child = spawn(command, argv, {
        cwd: sandbox,
        env: {
          ...env,
          HOME: sandbox,
          XDG_CONFIG_HOME: path.join(sandbox, '.config'),
          NO_COLOR: '1',
          CI: '1',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      })
      let output = ''
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString()
      })
      child.stderr.on('data', (chunk: Buffer) => {
        output += chunk.toString()
      })
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL')
        } catch {
          // already gone
        }
        resolve({ error: `${NO_ANSWER} ${timeoutMs / 1000} s` })
      }, timeoutMs)
      child.once('error', (error) => {
        clearTimeout(timer)
        resolve({ error: `cannot run it (${(error as NodeJS.ErrnoException).code ?? error.message})` })
      })
      child.once('close', (code) => {
        clearTimeout(timer)
        if (code === 0) resolve({ output })
        else
          resolve({
            error: `--version exited with ${code}: ${output.trim().split('\n')[0]?.slice(0, 200) ?? ''}`,
          })
      })
    })
  } finally {
    await rm(sandbox, { recursive: true, force: true }).catch(() => {})
  }
}

async function readJsonFile(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as unknown
  } catch {
    return undefined
  }
}

/** The warning for a version outside the adapter's tested range; null inside it or when unknown. */
export function versionWarning(definition: AdapterDef, version: string | null): string | null {
  if (version === null || versionInRange(version, definition.testedVersions) !== false) return null
  return `${definition.displayName} ${version} is outside the versions Hangar was tested with (${definition.testedVersions})`
}

/** Why a CLI was not found, when something says it is there after all (its config dir). */
function notFoundProblem(definition: AdapterDef, configDirFound: boolean): string | null {
  if (!configDirFound) return null
  const binary = definition.binaries[0]!
  return (
    `config dir ~/${definition.configDir} found but \`${binary}\` is not on the daemon's PATH; ` +
    `add its directory to the daemon's PATH, or set adapters.${definition.id}.path: /full/path/to/${binary} in hangar.yaml`
  )
}

/** The configured file, or why it cannot be used. */
async function configuredExecutable(
  id: AdapterDef['id'],
  file: string,
): Promise<{ found: string } | { problem: string }> {
  const where = `adapters.${id}.path: ${file} (hangar.yaml)`
  const info = await stat(file).catch(() => null)
  if (!info)
    return { problem: `${where} does not exist; fix the path, or remove it to search the daemon's PATH` }
  if (!(await isExecutable(file))) return { problem: `${where} is not an executable file` }
  return { found: file }
}

export async function detectAdapter(
  definition: AdapterDef,
  options: DetectionOptions,
): Promise<DetectedAdapter> {
  const base = {
    id: definition.id,
    displayName: definition.displayName,
    verified: definition.verified,
    capabilities: definition.capabilities,
    testedVersions: definition.testedVersions,
    versionWarning: null,
    permissions: permissionsInfo(definition.id),
  }
  const configDirFound = await stat(path.join(options.home, definition.configDir))
    .then((info) => info.isDirectory())
    .catch(() => false)
  const notInstalled: DetectedAdapter = {
    ...base,
    installed: false,
    path: null,
    executable: null,
    version: null,
    configDirFound,
    auth: { state: 'unknown' },
    problem: null,
  }
  const configured = options.paths?.[definition.id]?.path
  let found: string | null
  if (configured !== undefined) {
    const result = await configuredExecutable(definition.id, configured)
    if ('problem' in result) return { ...notInstalled, problem: result.problem }
    found = result.found
  } else {
    found = await findOnPath(definition.binaries, options.env.PATH)
  }
  if (!found) return { ...notInstalled, problem: notFoundProblem(definition, configDirFound) }

  let executable: ResolvedExecutable
  try {
    executable = definition.resolveExecutable
      ? await definition.resolveExecutable(found, options.env)
      : { path: found }
  } catch (error) {
    return { ...notInstalled, installed: true, path: found, problem: (error as Error).message }
  }
  const [version, auth] = await Promise.all([
    probeVersion(
      executable,
      definition.versionArgs,
      options.env,
      options.versionTimeoutMs ?? VERSION_TIMEOUT_MS,
    ),
    definition
      .probeAuth({
        env: options.env,
        home: options.home,
        exists: (file) =>
          stat(file)
            .then(() => true)
            .catch(() => false),
        readJson: readJsonFile,
        now: options.now ?? new Date(),
      })
      .catch((): AuthState => ({ state: 'unknown' })),
  ])
  const parsedVersion = 'output' in version ? definition.parseVersion(version.output) : null
  return {
    ...base,
    installed: true,
    path: found,
    executable,
    version: parsedVersion,
    configDirFound,
    auth,
    problem: 'error' in version ? version.error : null,
    versionWarning: versionWarning(definition, parsedVersion),
  }
}

/** Probes every adapter at once. */
export async function detectAll(
  definitions: readonly AdapterDef[],
  options: DetectionOptions,
): Promise<DetectedAdapter[]> {
  const detected = await Promise.all(definitions.map((definition) => detectOne(definition, options)))
  // Seven CLIs starting at once on a small machine can push a healthy one (Node-based, cold) past the
  // timeout: one that did not answer gets a second, longer chance alone before it is called broken.
  for (const [index, result] of detected.entries()) {
    if (!result.problem?.startsWith(NO_ANSWER)) continue
    const timeout = (options.versionTimeoutMs ?? VERSION_TIMEOUT_MS) * ALONE_TIMEOUT_FACTOR
    detected[index] = await detectOne(definitions[index]!, { ...options, versionTimeoutMs: timeout })
  }
  return detected
}

/** One adapter's detection; a probe that throws is reported, never propagated. */
function detectOne(definition: AdapterDef, options: DetectionOptions): Promise<DetectedAdapter> {
  return detectAdapter(definition, options).catch((error): DetectedAdapter => ({
    id: definition.id,
    displayName: definition.displayName,
    installed: false,
    path: null,
    executable: null,
    version: null,
    configDirFound: false,
    auth: { state: 'unknown' },
    verified: definition.verified,
    capabilities: definition.capabilities,
    problem: `detection failed: ${(error as Error).message}`,
    testedVersions: definition.testedVersions,
    versionWarning: null,
    permissions: permissionsInfo(definition.id),
  }))
}

/** True when the adapter can run now. */
export function isUsable(detected: DetectedAdapter): boolean {
  return detected.installed && detected.executable !== null && detected.problem === null
}

/** The one line `hangar up` and `hangar agents` print per adapter. */
export function describeDetection(detected: DetectedAdapter): string {
  const unverified = detected.verified ? '' : ', unverified against the real CLI'
  if (!detected.installed)
    return `✗ ${detected.id} (not installed${detected.problem ? `: ${detected.problem}` : unverified})`
  if (detected.problem) return `✗ ${detected.id} (installed, ${detected.problem})`
  const version = detected.version ?? 'unknown version'
  const warning = detected.versionWarning
    ? `; warning: untested version; tested with ${detected.testedVersions}`
    : ''
  if (detected.auth.state === 'missing' || detected.auth.state === 'expired') {
    const what = detected.auth.state === 'expired' ? 'sign-in expired' : 'not authenticated'
    return `✗ ${detected.id} ${version} (installed, ${what}${detected.auth.hint ? `: ${detected.auth.hint}` : ''}${warning})`
  }
  return `✓ ${detected.id} ${version} (auth: ${detected.auth.state}${unverified}${warning})`
}

interface DetectionCache {
  detectedAt: string
  /** PATH and HOME at detection time: a different environment means a different answer. */
  key: string
  adapters: DetectedAdapter[]
}

function cacheKey(options: DetectionOptions): string {
  const paths = Object.entries(options.paths ?? {})
    .map(([id, override]) => `${id}=${override?.path ?? ''}`)
    .join(',')
  return `${CACHE_FORMAT}|${options.env.PATH ?? ''}|${options.home}|${paths}`
}

/**
 * Detections under way, by cache file and key: callers that find no fresh cache while one runs (every run
 * submitted to a daemon that has just started) share it instead of each probing every CLI again.
 */
const detecting = new Map<
  string,
  Promise<{ adapters: DetectedAdapter[]; detectedAt: Date; fromCache: boolean }>
>()

/** Cached detection: fresh when `refresh` or older than the TTL or from another PATH/HOME. */
export async function loadDetection(
  definitions: readonly AdapterDef[],
  options: DetectionOptions & { dataDir: string; refresh?: boolean },
): Promise<{ adapters: DetectedAdapter[]; detectedAt: Date; fromCache: boolean }> {
  const file = path.join(options.dataDir, CACHE_FILE)
  const now = options.now ?? new Date()
  if (!options.refresh) {
    const cached = (await readJsonFile(file)) as DetectionCache | undefined
    const age = cached ? now.getTime() - Date.parse(cached.detectedAt) : Number.POSITIVE_INFINITY
    const ids = definitions.map((definition) => definition.id).join(',')
    if (
      cached &&
      cached.key === cacheKey(options) &&
      age >= 0 &&
      age < DETECTION_TTL_MS &&
      cached.adapters.map((adapter) => adapter.id).join(',') === ids
    ) {
      // The ranges, capabilities and permissions are the running release's, not the cached one's.
      const adapters = cached.adapters.map((adapter, index) => ({
        ...adapter,
        capabilities: definitions[index]!.capabilities,
        permissions: permissionsInfo(definitions[index]!.id),
        testedVersions: definitions[index]!.testedVersions,
        versionWarning: versionWarning(definitions[index]!, adapter.version),
      }))
      return { adapters, detectedAt: new Date(cached.detectedAt), fromCache: true }
    }
  }
  const running = `${file}|${cacheKey(options)}`
  const shared = options.refresh ? undefined : detecting.get(running)
  if (shared) return shared
  const detection = detectAndCache(definitions, options, file, now).finally(() => {
    if (detecting.get(running) === detection) detecting.delete(running)
  })
  detecting.set(running, detection)
  return detection
}

async function detectAndCache(
  definitions: readonly AdapterDef[],
  options: DetectionOptions,
  file: string,
  now: Date,
): Promise<{ adapters: DetectedAdapter[]; detectedAt: Date; fromCache: boolean }> {
  const adapters = await detectAll(definitions, options)
  const cache: DetectionCache = { detectedAt: now.toISOString(), key: cacheKey(options), adapters }
  const temporary = `${file}.${process.pid}.tmp`
  try {
    await writeFile(temporary, JSON.stringify(cache, null, 2), { mode: 0o600 })
    await rename(temporary, file)
  } catch {
    // A read-only data dir only costs the cache.
  }
  return { adapters, detectedAt: now, fromCache: false }
}
