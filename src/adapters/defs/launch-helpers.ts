// Small pure pieces the adapter definitions share: the child environment, the spawn command for a
// resolved executable, version parsing, URL joining and presence checks for auth probes.
import { createHash } from 'node:crypto'
import { realpath } from 'node:fs/promises'
import path from 'node:path'
import type { AuthProbeInput, LaunchInput, ResolvedExecutable } from '../types.js'

type Environment = Readonly<Record<string, string | undefined>>

/** The base environment without unset entries, with HOME pointing at the run's home. */
export function childEnvironment(input: Pick<LaunchInput, 'env' | 'home'>): Record<string, string> {
  const environment: Record<string, string> = {}
  for (const [name, value] of Object.entries(input.env)) {
    if (value !== undefined) environment[name] = value
  }
  environment.HOME = input.home
  return environment
}

/** `interpreter script args…` when the executable needs one, else `path args…`. */
export function spawnCommand(
  executable: ResolvedExecutable,
  args: string[],
): { command: string; args: string[] } {
  if (executable.interpreter === undefined) return { command: executable.path, args }
  return { command: executable.interpreter, args: [executable.path, ...args] }
}

/** The first version-looking token: `2.1.330`, `0.169.0`, `2026.9.6`, `2026.02.13-41ac335`. */
export function firstVersion(output: string): string | null {
  const match = /\b(\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z.]+)?)\b/.exec(output)
  return match?.[1] ?? null
}

export function trimTrailingSlash(url: string): string {
  return url.replace(/\/+$/, '')
}

/** The base URL with exactly one `/v1` at the end (OpenAI-style SDKs expect it there). */
export function withVersionSuffix(url: string): string {
  const base = trimTrailingSlash(url)
  return base.endsWith('/v1') ? base : `${base}/v1`
}

/** The base URL without a trailing `/v1` (Anthropic-style clients add it themselves). */
export function withoutVersionSuffix(url: string): string {
  return trimTrailingSlash(url).replace(/\/v1$/, '')
}

/** A UUID (v4 layout) derived from a seed: the same seed always gives the same id, so buildLaunch stays pure. */
export function uuidFromSeed(seed: string): string {
  const hex = createHash('sha256').update(seed).digest('hex')
  const variant = ((Number.parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16)
  return [
    hex.slice(0, 8),
    hex.slice(8, 12),
    `4${hex.slice(13, 16)}`,
    `${variant}${hex.slice(17, 20)}`,
    hex.slice(20, 32),
  ].join('-')
}

/** The first of `names` set to a non-empty value, or undefined. Only presence is checked. */
export function firstSetVariable(env: Environment, names: readonly string[]): string | undefined {
  return names.find((name) => (env[name] ?? '').trim() !== '')
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A config dir from an override variable, else `<home>/<relative>`. */
export function configDirectory(
  input: Pick<AuthProbeInput, 'env' | 'home'>,
  overrideVariable: string | undefined,
  relative: string,
): string {
  const override = overrideVariable === undefined ? undefined : input.env[overrideVariable]
  return override !== undefined && override.trim() !== '' ? override : path.join(input.home, relative)
}

/** Follows symlinks (npm's `.bin` entries) to the real file; the hit itself when that fails. */
export async function realFile(found: string): Promise<string> {
  try {
    return await realpath(found)
  } catch {
    return found
  }
}

/** `[flag, value]` when the value is set, else nothing: for spreading optional flags into argv. */
export function optionalFlag(flag: string, value: string | undefined): string[] {
  return value === undefined ? [] : [flag, value]
}
