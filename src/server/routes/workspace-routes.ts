// Workspaces over HTTP: the caller's conversation worktrees (or copies) and one-off workspaces — list,
// show (with `git status` and whether it was changed outside Hangar), remove. Another user's ids are 404.
// The workspace lifecycle of the project (copy, setup, teardown, ports): anyone signed in may read it;
// approving the repository's .hangar/workspace.yaml is the owner's alone (checked in the service).
import type { Hono } from 'hono'
import { z } from 'zod'
import type { RuntimeServices } from '../app.js'
import type { AppVariables } from '../auth-middleware.js'
import { projectFromDirectory } from '../../workspaces/lifecycle/lifecycle-config.js'
import { readJsonBody } from '../request-body.js'

export const approveWorkspaceConfigSchema = z.strictObject({
  contentHash: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'expected the SHA-256 hex digest GET /api/workspace-config shows')
    .describe('The hash of the file as reviewed: a file changed since is refused (409)'),
  projectId: z.string().optional().describe("The project whose file it is (default: the daemon's)"),
})

export function registerWorkspaceRoutes(
  app: Hono<{ Variables: AppVariables }>,
  deps: { runtime: Pick<RuntimeServices, 'workspaces' | 'workspaceLifecycle' | 'projects'> },
): void {
  const { workspaces, workspaceLifecycle, projects } = deps.runtime
  // A project the caller may use (another's, or an ungranted one, is a 404), as the lifecycle names it.
  const lifecycleProject = async (userId: string, projectId: string | undefined) => {
    if (!projectId) return undefined
    const project = await projects.get(userId, projectId)
    return projectFromDirectory(project.path, project.name)
  }

  app.get('/api/workspace-config', async (context) => {
    const userId = context.get('principal').user.id
    const project = await lifecycleProject(userId, context.req.query('projectId'))
    return context.json(await workspaceLifecycle.show(userId, project))
  })

  app.post('/api/workspace-config/approve', async (context) => {
    const userId = context.get('principal').user.id
    const body = await readJsonBody(context, approveWorkspaceConfigSchema)
    const project = await lifecycleProject(userId, body.projectId)
    return context.json(await workspaceLifecycle.approve(userId, body.contentHash, project))
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
