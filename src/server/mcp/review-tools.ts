// Review and land over MCP, through the same review service as REST and the CLI: diff_workspace and
// review_workspace for every token; land_workspace only for a token with the `approve` scope (landing
// changes the user's repository) — the service checks the scope again.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import { reviewCallerOf, reviewCommentSchema, strategySchema } from '../routes/review-routes.js'
import type { McpToolDeps } from './mcp-server.js'
import { jsonResult } from './tool-results.js'

const workspaceIdInput = z
  .string()
  .min(1)
  .describe('The workspace id (ws_…), as GET /api/workspaces lists it.')

export function registerReviewTools(server: McpServer, deps: McpToolDeps): void {
  const review = deps.runtime.review
  if (!review) return
  const { guard } = deps
  const caller = reviewCallerOf(deps.principal)

  server.registerTool(
    'diff_workspace',
    {
      description:
        "A workspace's change set against the commit it started from (or a branch's merge-base): files " +
        'with status and +/- counts, unified diffs, the commits its agents made, and which changes are ' +
        'not committed yet.',
      inputSchema: z.strictObject({
        workspaceId: workspaceIdInput,
        base: z.string().min(1).max(255).optional().describe('Compare with this local branch instead'),
        stat: z.boolean().optional().describe('Only the files and counts, no diffs'),
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (input) =>
      guard('diff_workspace', async () =>
        jsonResult({
          ...(await review.diff(caller, input.workspaceId, {
            ...(input.base && { base: input.base }),
            stat: input.stat ?? false,
          })),
        }),
      ),
  )

  server.registerTool(
    'review_workspace',
    {
      description:
        "Comments on lines of a workspace's files, sent to its conversation's agent as one message (which " +
        'starts its next run); they stay attached to the lines.',
      inputSchema: z.strictObject({
        workspaceId: workspaceIdInput,
        comments: z.array(reviewCommentSchema).min(1).max(100),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    (input) =>
      guard('review_workspace', async () => {
        const result = await review.review(caller, input.workspaceId, input.comments)
        return jsonResult({ ...result }, `Sent; the agent answers in run ${result.run.id}.`)
      }),
  )

  if (!deps.canApprove) return

  server.registerTool(
    'land_workspace',
    {
      description:
        "Land a workspace into a branch of the user's repository (default: the branch it was made from): " +
        'its uncommitted work is committed, then merged, squashed or rebased onto the branch, tried in a ' +
        'temporary worktree first. A conflict or a dirty checkout changes nothing and says why. Never pushes.',
      inputSchema: z.strictObject({
        workspaceId: workspaceIdInput,
        into: z.string().min(1).max(255).optional(),
        strategy: strategySchema.optional(),
        message: z.string().min(1).max(20_000).optional(),
        removeWorkspace: z.boolean().optional(),
      }),
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
    },
    (input) =>
      guard('land_workspace', async () => {
        const result = await review.land(caller, input.workspaceId, input)
        return jsonResult(
          { ...result },
          `Landed into ${result.into} (${result.strategy}): ${result.previous.slice(0, 12)} → ${result.commit.slice(0, 12)}.`,
        )
      }),
  )
}
