// Proposals over MCP: listing them for every token; committing and rejecting them only for a token with
// the `approve` scope, whose MCP client's own tool-approval prompt is then the person's confirmation. The
// built-in agent never gets these tools: an agent must not approve its own writes.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import { type Decision, queueContinuation } from '../../runs/actions-service.js'
import type { McpToolDeps } from './mcp-server.js'
import { jsonResult, toProposalView } from './tool-results.js'

const actionIdInput = z.string().min(1).describe('The action id (act_…) of the proposal.')

export function registerApprovalTools(server: McpServer, deps: McpToolDeps): void {
  const { runtime, store, guard, principal } = deps
  const userId = principal.user.id

  server.registerTool(
    'list_pending_actions',
    {
      description:
        'The proposals waiting for a decision: from write tools called over MCP and from runs of the ' +
        'built-in agent. Each has an action id, a summary, a diff, a classification and an expiry.',
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () =>
      guard('list_pending_actions', async () => {
        const pending = await runtime.actions.list(userId, { status: 'pending' })
        return jsonResult({ actions: pending.map(toProposalView) })
      }),
  )

  if (!deps.canApprove) return

  const decide = async (actionId: string, decision: Decision) => {
    // The service checks the scope again: hiding the tools is for the client, not the boundary.
    const result = await runtime.actions.decide(principal, actionId, decision)
    const continuation = await queueContinuation(
      { store, runs: runtime.runs, scheduler: runtime.scheduler },
      userId,
      result,
    )
    const { action } = result
    const note = `Action ${action.id} ${result.replayed ? 'was already' : 'is now'} ${action.status}: ${action.summary}`
    const answer = jsonResult(
      { action: toProposalView(action), replayed: result.replayed, continuation },
      continuation ? `${note}. Its run continues as ${continuation.id}.` : `${note}.`,
    )
    // A commit that could not be applied (the file changed since, the command failed) is a failure.
    return decision.kind === 'confirm' && action.status !== 'applied' ? { ...answer, isError: true } : answer
  }

  server.registerTool(
    'commit_proposal',
    {
      description:
        'Apply a pending proposal: the change is made now, in the place it was proposed for. Repeating ' +
        'it returns the stored outcome. If the target changed since the proposal, nothing is applied ' +
        '(status conflict): read it again and propose anew.',
      inputSchema: z.strictObject({ actionId: actionIdInput }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    (input) => guard('commit_proposal', () => decide(input.actionId, { kind: 'confirm' })),
  )

  server.registerTool(
    'reject_proposal',
    {
      description: 'Reject a pending proposal: nothing is changed, and the reason is kept for the record.',
      inputSchema: z.strictObject({
        actionId: actionIdInput,
        reason: z
          .string()
          .max(2000)
          .optional()
          .describe('Why, in a sentence; the agent that proposed it reads it.'),
      }),
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    (input) =>
      guard('reject_proposal', () => decide(input.actionId, { kind: 'reject', reason: input.reason })),
  )
}
