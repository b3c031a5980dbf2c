// Workspaces over HTTP: the caller's conversation worktrees (or copies) and one-off workspaces — list,
// show (with `git status` and whether it was changed outside Hangar), remove. Another user's ids are 404.
import type { Hono } from 'hono'
import type { RuntimeServices } from '../app.js'
import type { AppVariables } from '../auth-middleware.js'

export function registerWorkspaceRoutes(
  app: Hono<{ Variables: AppVariables }>,
  deps: { runtime: Pick<RuntimeServices, 'workspaces'> },
): void {
  const { workspaces } = deps.runtime

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
