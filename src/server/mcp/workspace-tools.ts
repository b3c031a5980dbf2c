// The built-in agent's workspace tools over MCP, rooted at the caller's workspace: the daemon's project
// directory for the owner, a member's own workspace (a worktree of the project) otherwise. Read tools run
// at once. Write tools run only their `propose` half: the proposal is stored as a pending action (origin
// `mcp`, no run, no conversation) and returned; nothing changes until someone commits it.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js'
import type { Proposal, ToolDefinition, ToolOutput } from '../../agent/tools/types.js'
import type { McpToolDeps } from './mcp-server.js'
import { errorResult, jsonResult, outputResult, toProposalView } from './tool-results.js'

/**
 * Write tools whose proposals are never destructive: edit_file only replaces text it was shown
 * (safe_update). Any other write tool may overwrite, delete or run a command — and a new one counts as
 * destructive until it is listed here.
 */
const ONLY_SAFE_WRITES: ReadonlySet<string> = new Set(['edit_file'])

function annotationsOf(tool: ToolDefinition): ToolAnnotations {
  if (tool.kind === 'read') return { readOnlyHint: true, openWorldHint: false }
  return { readOnlyHint: false, destructiveHint: !ONLY_SAFE_WRITES.has(tool.name), openWorldHint: false }
}

function isProposal(value: Proposal | ToolOutput): value is Proposal {
  return 'classification' in value
}

export function registerWorkspaceTools(server: McpServer, deps: McpToolDeps): void {
  const { runtime, guard } = deps
  const userId = deps.principal.user.id
  const howToDecide = deps.canApprove
    ? 'commit_proposal or reject_proposal'
    : 'a person, in the web UI or with hangar actions confirm|reject'

  for (const tool of runtime.tools.list()) {
    const description =
      tool.kind === 'read'
        ? `${tool.description} Paths are relative to your workspace (the project directory, or your own worktree of it).`
        : `${tool.description} Over MCP this only returns the proposal (an action id, a summary and a ` +
          `diff); it is decided by ${howToDecide}.`
    server.registerTool(
      tool.name,
      { description, inputSchema: tool.inputSchema, annotations: annotationsOf(tool) },
      (input, extra) =>
        guard(tool.name, async () => {
          // The SDK parsed the input against the same schema; this gives the typed value the tool takes.
          const validated = runtime.tools.validateInput(tool, input)
          if (!validated.ok) return errorResult(validated.message)
          const context = { workspace: await runtime.toolWorkspace(userId), signal: extra.signal }
          if (tool.kind === 'read') return outputResult(await tool.run(validated.value, context))
          const proposed = await tool.propose(validated.value, context)
          if (!isProposal(proposed)) return outputResult(proposed)
          const action = await runtime.actions
            .createMcpDesk(userId)
            .park({ tool: tool.name, input: validated.value }, proposed)
          return jsonResult(
            { proposal: toProposalView(action) },
            `Proposed, not applied: ${action.summary}. Action ${action.id} waits for ${howToDecide} ` +
              `until ${action.expiresAt}.`,
          )
        }),
    )
  }
}
