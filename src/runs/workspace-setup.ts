// The workspace lifecycle's setup as a step of a run: before the agent's first turn, the setup command
// runs where the run works (here, or on the SSH host after the ship) with its output as
// `workspace-setup-*` events. A failure fails the run with the command's exit code and last lines; the
// next run of the workspace (a retry) runs it again.
import type { Workspace } from '../store/repositories/workspaces-repository.js'
import type { SetupPlace, WorkspaceLifecycle } from '../workspaces/lifecycle/workspace-lifecycle.js'
import { commandEnvironment } from '../agent/tools/run-command-tool.js'
import type { ActiveRun, RunEnd } from './run-service.js'

/** Proxy settings a package manager needs to reach its registry: passed through to setup and teardown. */
const NETWORK_VARIABLES = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy']

/**
 * The environment of setup and teardown commands: what shells and toolchains need (the built-in agent's
 * command environment) and the network proxy settings — never the daemon's keys or database URL, which a
 * repository's committed commands have no business reading.
 */
export function setupEnvironment(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string | undefined> {
  const environment: Record<string, string | undefined> = commandEnvironment(env)
  for (const name of NETWORK_VARIABLES) if (env[name] !== undefined) environment[name] = env[name]
  return environment
}

export interface SetupStepOptions {
  env: Readonly<Record<string, string | undefined>>
  /** The run's signal: a cancel (or a tripped run limit) stops the setup command. */
  signal?: AbortSignal
  /** Marks the run busy while the command works (run limits: a setup at work is not an idle agent). */
  busy?: () => () => void
}

/** Runs the setup at `place` if it is due; resolves to the run's failed end, or undefined to go on. */
export type SetupStep = (place: SetupPlace) => Promise<RunEnd | undefined>

export function createSetupStep(
  lifecycle: Pick<WorkspaceLifecycle, 'setup'>,
  active: ActiveRun,
  workspace: Workspace,
  options: SetupStepOptions,
): SetupStep {
  return async (place) => {
    let started = false
    const done = options.busy?.()
    try {
      const result = await lifecycle.setup(workspace, place, {
        env: options.env,
        ...(options.signal && { signal: options.signal }),
        onStart: ({ command, target }) => {
          started = true
          active.emit({ type: 'workspace-setup-start', command, target })
        },
        onOutput: (stream, text) => active.emit({ type: 'workspace-setup-delta', stream, text }),
      })
      if (result.status === 'skipped') {
        if (result.unapproved) {
          active.emit({
            type: 'error',
            code: 'workspace_config_unapproved',
            message: `${result.unapproved} is not approved, so its copy, setup, teardown and ports do not apply; the owner can review and approve it with hangar workspaces approve`,
            retryable: false,
          })
        }
        return undefined
      }
      active.emit({ type: 'workspace-setup-end', status: result.status, exitCode: result.exitCode })
      if (result.status === 'succeeded') return undefined
      if (options.signal?.aborted) return { status: 'cancelled', reason: 'cancelled during workspace setup' }
      const where = result.target === 'local' ? '' : ` on ${result.target}`
      const message = `workspace setup "${result.command}" failed${where} with exit code ${result.exitCode}${result.tail ? `:\n${result.tail}` : ''}`
      active.emit({ type: 'error', code: 'workspace_setup_failed', message, retryable: true })
      return { status: 'failed', reason: message }
    } catch (error) {
      const message = `workspace setup could not run: ${error instanceof Error ? error.message : String(error)}`
      if (started) active.emit({ type: 'workspace-setup-end', status: 'failed', exitCode: -1 })
      active.emit({ type: 'error', code: 'workspace_setup_failed', message, retryable: true })
      return { status: 'failed', reason: message }
    } finally {
      done?.()
    }
  }
}

/**
 * A run's workspace lifecycle: the setup step to run before its agent, and the variables its agent gets
 * (HANGAR_PORT, HANGAR_PORT_COUNT). Nothing for a run outside a workspace (in place in the project).
 */
export async function runLifecycle(
  lifecycle: Pick<WorkspaceLifecycle, 'setup' | 'variablesForRun' | 'workspaceOfRun'> | undefined,
  userId: string,
  active: ActiveRun,
  options: SetupStepOptions,
): Promise<{ setup?: SetupStep; variables: Record<string, string> }> {
  const workspace = lifecycle && (await lifecycle.workspaceOfRun(userId, active.run))
  if (!lifecycle || !workspace) return { variables: {} }
  return {
    setup: createSetupStep(lifecycle, active, workspace, {
      ...options,
      env: setupEnvironment(options.env),
    }),
    variables: await lifecycle.variablesForRun(workspace),
  }
}
