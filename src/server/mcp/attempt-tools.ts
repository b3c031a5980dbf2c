// Compare attempts over MCP: start one prompt with several agents and read them side by side, exactly as
// POST and GET /api/attempts do (the attempts service decides, project access included).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import { startAttemptsSchema } from '../../runs/attempts-service.js'
import type { McpToolDeps } from './mcp-server.js'
import { jsonResult } from './tool-results.js'

const startAttemptsInput = z.strictObject({
  prompt: startAttemptsSchema.shape.prompt.describe('What every agent should do.'),
  agents: startAttemptsSchema.shape.agents.describe(
    'One attempt per name (1–8): profiles of hangar.yaml, adapter ids (claude-code, codex, …) or builtin.',
  ),
  projectId: startAttemptsSchema.shape.projectId.describe(
    'The git project to work on (prj_…, one granted to you; see list_projects).',
  ),
  baseRef: startAttemptsSchema.shape.baseRef.describe(
    "The branch or commit the attempts' worktrees start from. Default: the project's HEAD.",
  ),
})

export function registerAttemptTools(server: McpServer, deps: McpToolDeps): void {
  const { runtime, guard } = deps
  const userId = deps.principal.user.id

  server.registerTool(
    'start_attempts',
    {
      description:
        'Start the same prompt with several agents at once, each in a worktree and conversation of its ' +
        'own, to compare them. Returns the attempt group (atg_…) at once; read it with get_attempts: each ' +
        "attempt's status, duration, tokens, cost, files changed, diff stats and the project's check result.",
      inputSchema: startAttemptsInput,
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    },
    (input) =>
      guard('start_attempts', async () => {
        const group = await runtime.attempts.start(userId, input)
        return jsonResult(
          { attempts: group },
          `Attempts ${group.id} started (${group.attempts.length}); read them with get_attempts.`,
        )
      }),
  )

  server.registerTool(
    'get_attempts',
    {
      description:
        'An attempt group side by side (finished: every run ended and its check ran), or, without id, ' +
        'your latest groups.',
      inputSchema: z.strictObject({
        id: z.string().min(1).optional().describe('The group id (atg_…), as start_attempts returned it.'),
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (input) =>
      guard('get_attempts', async () =>
        input.id
          ? jsonResult({ attempts: await runtime.attempts.get(userId, input.id) })
          : jsonResult({ groups: await runtime.attempts.list(userId) }),
      ),
  )
}
