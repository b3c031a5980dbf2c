// The sandbox around a built-in agent's approved commands: its run's profile decides (as for CLI runs).
import type { ToolContext } from '../agent/tools/types.js'
import type { HangarConfig } from '../core/config.js'
import { commandSandbox, sandboxSettingsFor } from '../sandbox/run-sandbox.js'
import type { Store } from '../store/store.js'
import { loadUserProfiles, profileNamed } from './resolve-agent.js'
import { sandboxContextOfRun } from './run-project.js'

export function createCommandSandboxes(options: {
  store: Store
  config: HangarConfig
  env: Readonly<Record<string, string | undefined>>
  dataDir: string
  projectDir: string
}) {
  return async (
    userId: string,
    runId: string,
    workspace: string,
  ): Promise<ToolContext['wrapCommand'] | undefined> => {
    const run = await options.store.forUser(userId).runs.get(runId)
    if (!run) return undefined
    const profile = profileNamed(run.agent, options.config, await loadUserProfiles(options.store, userId))
    const context = await sandboxContextOfRun(options.store, run, userId, options.projectDir)
    const settings = sandboxSettingsFor(profile, options.config, context.project, context.role)
    if (settings.mode === 'off') return undefined
    const sandbox = await commandSandbox({ dataDir: options.dataDir, env: options.env, settings }, workspace)
    return sandbox.wrap
  }
}
