// What `hangar agents` says of sandboxes: whether bubblewrap can confine runs here, and each hangar.yaml
// profile's setting (its own, else its project's default, else off).
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
  profiles: { name: string; sandbox: 'off' | 'workspace' }[]
}

export async function sandboxStatus(
  config: HangarConfig,
  env: Readonly<Record<string, string | undefined>>,
  projectName: string,
): Promise<SandboxStatus> {
  const profiles = Object.entries(config.agents).map(([name, profile]) => ({
    name,
    sandbox: sandboxSettingsFor(profile, config, projectName).mode,
  }))
  try {
    const bubblewrap = await checkBubblewrap(await locateBubblewrap(env))
    return { available: true, by: bubblewrap.version, profiles }
  } catch (error) {
    const reason = isAppError(error) && error.hint ? `${error.message}; ${error.hint}` : String(error)
    return { available: false, reason, profiles }
  }
}

export function describeSandboxStatus(status: SandboxStatus): string[] {
  const lines = [
    status.available
      ? `sandbox: ${status.by} can confine runs here (profiles with sandbox: workspace)`
      : `sandbox: unavailable — ${status.reason}`,
  ]
  for (const profile of status.profiles) {
    const note =
      profile.sandbox === 'workspace' && !status.available ? ' (its runs fail until bubblewrap works)' : ''
    lines.push(
      `    ${profile.name}: ${profile.sandbox === 'workspace' ? 'sandboxed' : 'not sandboxed (sandbox: off)'}${note}`,
    )
  }
  return lines
}
