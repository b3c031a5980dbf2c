// GET /api/agents[?refresh=1]: every adapter with its detection (installed, version, sign-in) and capabilities, plus
// the built-in agent (ready only when it can reach a model; else "needs a provider" and the fix), the profiles
// of hangar.yaml, and the agent a request naming none gets (one that can run; null and why when none can).
import type { Hono } from 'hono'
import type { RuntimeServices } from '../app.js'
import type { AppVariables } from '../auth-middleware.js'
import { AppError, describeError } from '../../core/errors.js'
import { builtinAgentEntry } from '../../runs/builtin-readiness.js'
import { defaultAgentName } from '../../runs/resolve-agent.js'

/** What GET /api/agents and the MCP tool list_agents answer. */
export async function describeAgents(
  runtime: Pick<RuntimeServices, 'detectAgents' | 'config' | 'builtinReadiness' | 'sandboxStatus'>,
  userId: string,
  options: { refresh?: boolean } = {},
) {
  const { adapters } = await runtime.detectAgents(options)
  const builtin = await runtime.builtinReadiness(userId)
  let defaultAgent: string | null = null
  let noDefault: string | null = null
  try {
    defaultAgent = await defaultAgentName({
      config: runtime.config,
      detected: adapters,
      builtinReadiness: () => Promise.resolve(builtin),
    })
  } catch (error) {
    if (!(error instanceof AppError)) throw error
    noDefault = describeError(error)
  }
  const sandbox = await runtime.sandboxStatus?.()
  const modes = new Map(sandbox?.profiles.map((profile) => [profile.name, profile.sandbox]))
  const profiles = Object.entries(runtime.config.agents).map(([name, profile]) => ({
    name,
    ...profile,
    // What its runs get here: its own setting, else the project's default, else off.
    ...(modes.has(name) && { sandboxMode: modes.get(name) }),
  }))
  return {
    adapters: [...adapters, builtinAgentEntry(builtin)],
    profiles,
    /** Whether bubblewrap can confine runs on this host (`sandbox: workspace`), and why not. */
    ...(sandbox && {
      sandbox: {
        available: sandbox.available,
        ...(sandbox.by && { by: sandbox.by }),
        ...(sandbox.reason && { reason: sandbox.reason }),
      },
    }),
    defaultAgent,
    /** Why no agent can run, when none can. */
    noDefault,
  }
}

export function registerAgentRoutes(
  app: Hono<{ Variables: AppVariables }>,
  deps: { runtime: RuntimeServices },
): void {
  // `?refresh=1` detects again instead of answering from the day-long cache (`hangar agents --refresh`).
  app.get('/api/agents', async (context) => {
    const refresh = ['1', 'true'].includes(context.req.query('refresh') ?? '')
    const userId = context.get('principal').user.id
    return context.json(await describeAgents(deps.runtime, userId, { refresh }))
  })
}
