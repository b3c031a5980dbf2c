// What `hangar agents` says of sandboxes: whether bubblewrap can confine runs here, each hangar.yaml
// profile's setting (its own, else its project's default, else off), and for a sandboxed profile on an SSH
// target what that host says (its runs go ahead unsandboxed where it cannot confine them).
import type { HangarConfig } from '../core/config.js'
import { isAppError } from '../core/errors.js'
import { checkBubblewrap, locateBubblewrap } from './bubblewrap.js'
import { sandboxSettingsFor } from './run-sandbox.js'

export interface SandboxStatus {
  available: boolean
  /** "bubblewrap 0.8.0", when available. */
  by?: string
  /** Why not, with the fix. */
  reason?: string
  profiles: { name: string; sandbox: 'off' | 'workspace'; target?: string }[]
  /** Per SSH target of a sandboxed profile: the bubblewrap there, why it cannot confine runs, or why unchecked. */
  targets: Record<string, { by?: string; reason?: string; unchecked?: string }>
}

export type TargetCheck = (name: string) => Promise<{ by: string } | { reason: string }>

function describeError(error: unknown): string {
  return isAppError(error) && error.hint ? `${error.message}; ${error.hint}` : String(error)
}

export async function sandboxStatus(
  config: HangarConfig,
  env: Readonly<Record<string, string | undefined>>,
  projectName: string,
  checkTarget?: TargetCheck,
): Promise<SandboxStatus> {
  const profiles = Object.entries(config.agents).map(([name, profile]) => ({
    name,
    sandbox: sandboxSettingsFor(profile, config, projectName).mode,
    ...(profile.target !== undefined && profile.target !== 'local' && { target: profile.target }),
  }))
  const targets: SandboxStatus['targets'] = {}
  const wanted = new Set(profiles.flatMap((p) => (p.sandbox === 'workspace' && p.target ? [p.target] : [])))
  await Promise.all(
    [...wanted].map(async (name) => {
      targets[name] = checkTarget
        ? await checkTarget(name).catch((error: unknown) => ({ unchecked: describeError(error) }))
        : { unchecked: 'not asked' }
    }),
  )
  try {
    const bubblewrap = await checkBubblewrap(await locateBubblewrap(env))
    return { available: true, by: bubblewrap.version, profiles, targets }
  } catch (error) {
    return { available: false, reason: describeError(error), profiles, targets }
  }
}

function describeProfile(profile: SandboxStatus['profiles'][number], status: SandboxStatus): string {
  if (profile.sandbox === 'off') return 'not sandboxed (sandbox: off)'
  if (profile.target === undefined)
    return `sandboxed${status.available ? '' : ' (its runs fail until bubblewrap works)'}`
  const host = status.targets[profile.target] ?? {}
  if (host.by) return `sandboxed on ${profile.target} (${host.by} there)`
  if (host.reason) return `not sandboxed: ${host.reason}`
  return `sandboxed on ${profile.target} if bubblewrap works there, else its runs go ahead unsandboxed and say why (not checked: ${host.unchecked})`
}

export function describeSandboxStatus(status: SandboxStatus): string[] {
  const lines = [
    status.available
      ? `sandbox: ${status.by} can confine runs here (profiles with sandbox: workspace)`
      : `sandbox: unavailable — ${status.reason}`,
  ]
  for (const profile of status.profiles)
    lines.push(`    ${profile.name}: ${describeProfile(profile, status)}`)
  return lines
}
