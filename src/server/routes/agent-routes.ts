// GET /api/agents[?refresh=1]: every adapter with its detection (installed, version, sign-in) and capabilities, plus
// the built-in agent, and the profiles of hangar.yaml.
import type { Hono } from 'hono'
import type { RuntimeServices } from '../app.js'
import type { AppVariables } from '../auth-middleware.js'
import { ADAPTER_PERMISSIONS, permissionsInfo } from '../../core/permissions.js'

/** What GET /api/agents and the MCP tool list_agents answer. */
export async function describeAgents(
  runtime: Pick<RuntimeServices, 'detectAgents' | 'config'>,
  options: { refresh?: boolean } = {},
) {
  const { adapters } = await runtime.detectAgents(options)
  const profiles = Object.entries(runtime.config.agents).map(([name, profile]) => ({
    name,
    ...profile,
  }))
  return {
    adapters: [
      ...adapters,
      {
        id: 'builtin',
        displayName: "Hangar's built-in agent",
        installed: true,
        verified: true,
        // Our own code: nothing to have tested against.
        testedVersions: null,
        versionWarning: null,
        capabilities: {
          streaming: true,
          resume: true,
          surgicalEdit: true,
          nativeSkillLoading: false,
          // Every write and command is a proposal a person confirms (or autoApprove).
          permissionMode: ADAPTER_PERMISSIONS.builtin.enforces,
          contextWindowHint: null,
        },
        permissions: permissionsInfo('builtin'),
      },
    ],
    profiles,
  }
}

export function registerAgentRoutes(
  app: Hono<{ Variables: AppVariables }>,
  deps: { runtime: RuntimeServices },
): void {
  // `?refresh=1` detects again instead of answering from the day-long cache (`hangar agents --refresh`).
  app.get('/api/agents', async (context) => {
    const refresh = ['1', 'true'].includes(context.req.query('refresh') ?? '')
    return context.json(await describeAgents(deps.runtime, { refresh }))
  })
}
