// Which agent CLIs are installed, at what version, and whether they are signed in. Every adapter is
// probed in parallel and in isolation: a broken or hanging CLI costs at most its own timeout. `--version`
// runs in a temp HOME and cwd so probing never touches the user's state. Results are cached in the data
// dir for 24 hours.
import { spawn } from 'node:child_process'
import { constants as fsConstants } from 'node:fs'
import { access, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { AdapterCapabilities, AdapterDef, AuthState, ResolvedExecutable } from './types.js'

export const DETECTION_TTL_MS = 24 * 60 * 60 * 1000
export const VERSION_TIMEOUT_MS = 5000
/** A version probe that timed out among all the others is tried again alone, this many times as long. */
const ALONE_TIMEOUT_FACTOR = 4
const NO_ANSWER = '--version did not answer within'
const CACHE_FILE = 'agents.json'

export interface DetectedAdapter {
  id: string
  displayName: string
  installed: boolean
  /** The PATH hit. */
  path: string | null
  executable: ResolvedExecutable | null
  version: string | null
  configDirFound: boolean
  auth: AuthState
  verified: boolean
  capabilities: AdapterCapabilities
  /** Why an installed CLI cannot be used (version probe failed, no suitable Node…). */
  problem: string | null
}

export interface DetectionOptions {
  env: Readonly<Record<string, string | undefined>>
  home: string
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

export async function detectAdapter(
  definition: AdapterDef,
  options: DetectionOptions,
): Promise<DetectedAdapter> {
  const base = {
    id: definition.id,
    displayName: definition.displayName,
    verified: definition.verified,
    capabilities: definition.capabilities,
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
  const found = await findOnPath(definition.binaries, options.env.PATH)
  if (!found) return notInstalled

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
  return {
    ...base,
    installed: true,
    path: found,
    executable,
    version: 'output' in version ? definition.parseVersion(version.output) : null,
    configDirFound,
    auth,
    problem: 'error' in version ? version.error : null,
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
  }))
}

/** True when the adapter can run now. */
export function isUsable(detected: DetectedAdapter): boolean {
  return detected.installed && detected.executable !== null && detected.problem === null
}

/** The one line `hangar up` and `hangar agents` print per adapter. */
export function describeDetection(detected: DetectedAdapter): string {
  const unverified = detected.verified ? '' : ', unverified against the real CLI'
  if (!detected.installed) return `✗ ${detected.id} (not installed${unverified})`
  if (detected.problem) return `✗ ${detected.id} (installed, ${detected.problem})`
  const version = detected.version ?? 'unknown version'
  if (detected.auth.state === 'missing' || detected.auth.state === 'expired') {
    const what = detected.auth.state === 'expired' ? 'sign-in expired' : 'not authenticated'
    return `✗ ${detected.id} ${version} (installed, ${what}${detected.auth.hint ? `: ${detected.auth.hint}` : ''})`
  }
  return `✓ ${detected.id} ${version} (auth: ${detected.auth.state}${unverified})`
}

interface DetectionCache {
  detectedAt: string
  /** PATH and HOME at detection time: a different environment means a different answer. */
  key: string
  adapters: DetectedAdapter[]
}

function cacheKey(options: DetectionOptions): string {
  return `${options.env.PATH ?? ''}|${options.home}`
}

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
      return { adapters: cached.adapters, detectedAt: new Date(cached.detectedAt), fromCache: true }
    }
  }
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
