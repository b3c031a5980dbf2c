// Workspaces over HTTP: the caller's conversation worktrees (or copies) and one-off workspaces — list,
// show (with `git status` and whether it was changed outside Hangar), remove. Another user's ids are 404.
// The workspace lifecycle of the project (copy, setup, teardown, ports): anyone signed in may read it;
// approving the repository's .hangar/workspace.yaml is the owner's alone (checked in the service).
import type { Hono } from 'hono'
import { z } from 'zod'
import type { RuntimeServices } from '../app.js'
import type { AppVariables } from '../auth-middleware.js'
import { readJsonBody } from '../request-body.js'

export const approveWorkspaceConfigSchema = z.strictObject({
  contentHash: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'expected the SHA-256 hex digest GET /api/workspace-config shows')
    .describe('The hash of the file as reviewed: a file changed since is refused (409)'),
})

export function registerWorkspaceRoutes(
  app: Hono<{ Variables: AppVariables }>,
  deps: { runtime: Pick<RuntimeServices, 'workspaces' | 'workspaceLifecycle'> },
): void {
  const { workspaces, workspaceLifecycle } = deps.runtime

  app.get('/api/workspace-config', async (context) =>
    context.json(await workspaceLifecycle.show(context.get('principal').user.id)),
  )

  app.post('/api/workspace-config/approve', async (context) => {
    const body = await readJsonBody(context, approveWorkspaceConfigSchema)
    return context.json(await workspaceLifecycle.approve(context.get('principal').user.id, body.contentHash))
  })

  app.get('/api/workspaces', async (context) =>
    context.json(await workspaces.list(context.get('principal').user.id)),
  )

  app.get('/api/workspaces/:id', async (context) =>
    context.json(await workspaces.inspect(context.get('principal').user.id, context.req.param('id'))),
  )

  app.delete('/api/workspaces/:id', async (context) =>
    context.json(await workspaces.remove(context.get('principal').user.id, context.req.param('id'))),
  )
}
