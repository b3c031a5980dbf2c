// The MCP server of one request, for one token: its tools act as the token's user (no tool takes a user
// id), and the tools that decide proposals exist only when the token has the `approve` scope.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { Logger } from '../../core/logger.js'
import type { Store } from '../../store/store.js'
import type { RuntimeServices } from '../app.js'
import { registerApprovalTools } from './approval-tools.js'
import { registerAttemptTools } from './attempt-tools.js'
import type { PatPrincipal } from './mcp-auth.js'
import { registerReviewTools } from './review-tools.js'
import { registerRunTools } from './run-tools.js'
import { createToolGuard, type ToolGuard } from './tool-results.js'
import { registerWorkspaceTools } from './workspace-tools.js'

export interface McpServerDeps {
  principal: PatPrincipal
  store: Store
  runtime: RuntimeServices
  log: Logger
  version: string
}

/** What every group of tools receives. */
export interface McpToolDeps {
  principal: PatPrincipal
  store: Store
  runtime: RuntimeServices
  guard: ToolGuard
  /** True when this token may commit and reject proposals. */
  canApprove: boolean
}

function instructionsFor(canApprove: boolean): string {
  const deciding = canApprove
    ? 'Decide one with commit_proposal or reject_proposal (your tool-approval prompt is the confirmation),'
    : 'This token cannot decide them: a person commits or rejects them'
  return [
    'Hangar runs coding agents (start_run, get_run, cancel_run) and offers its workspace tools on your',
    'workspace (the project directory, or your own worktree of it). Read tools run at once. Write tools (write_file, edit_file, delete_file,',
    'run_command) change nothing: they return a proposal with an action id, a summary and a diff.',
    `${deciding} in the Hangar web UI or with hangar actions confirm|reject ID.`,
  ].join(' ')
}

export function createHangarMcpServer(deps: McpServerDeps): McpServer {
  const canApprove = deps.principal.scopes.includes('approve')
  const server = new McpServer(
    { name: 'hangar', version: deps.version },
    { capabilities: { tools: {} }, instructions: instructionsFor(canApprove) },
  )
  const toolDeps: McpToolDeps = {
    principal: deps.principal,
    store: deps.store,
    runtime: deps.runtime,
    guard: createToolGuard(deps.log),
    canApprove,
  }
  registerRunTools(server, toolDeps)
  registerAttemptTools(server, toolDeps)
  registerWorkspaceTools(server, toolDeps)
  registerApprovalTools(server, toolDeps)
  registerReviewTools(server, toolDeps)
  return server
}
