// Projects over HTTP: the directories conversations and runs work on. Anyone lists the projects they may
// use (the owner all of them, with their members); only the owner adds, changes, removes and grants them.
// The rules are the project service's (src/projects/project-service.ts), which every path shares.
import type { Hono } from 'hono'
import { z } from 'zod'
import type { RuntimeServices } from '../app.js'
import { actorOf, type AppVariables } from '../auth-middleware.js'
import { readJsonBody } from '../request-body.js'

const agentName = z.string().trim().min(1).max(100)

export const projectCreateSchema = z.strictObject({
  path: z
    .string()
    .min(1, 'give the directory to register')
    .max(4096)
    .describe("An absolute path of an existing directory on the daemon's host, outside the data dir"),
  name: z.string().min(1).max(64).optional(),
  defaultAgent: agentName.optional(),
})

export const projectUpdateSchema = z.strictObject({
  name: z.string().min(1).max(64).optional(),
  defaultAgent: agentName.nullable().optional(),
  check: z
    .string()
    .trim()
    .min(1, 'expected a shell command, e.g. "npm test" (null clears it)')
    .max(4096)
    .nullable()
    .optional()
    .describe("The check command run in each attempt's workspace after its agent finished"),
})

export function registerProjectRoutes(
  app: Hono<{ Variables: AppVariables }>,
  deps: { runtime: Pick<RuntimeServices, 'projects'> },
): void {
  const { projects } = deps.runtime

  app.get('/api/projects', async (context) =>
    context.json({ projects: await projects.list(context.get('principal').user.id) }),
  )

  app.get('/api/projects/:id', async (context) =>
    context.json(await projects.get(context.get('principal').user.id, context.req.param('id'))),
  )

  app.post('/api/projects', async (context) => {
    const principal = context.get('principal')
    const body = await readJsonBody(context, projectCreateSchema)
    return context.json(await projects.add(principal.user.id, actorOf(principal), body), 201)
  })

  app.patch('/api/projects/:id', async (context) => {
    const principal = context.get('principal')
    const body = await readJsonBody(context, projectUpdateSchema)
    return context.json(
      await projects.update(principal.user.id, actorOf(principal), context.req.param('id'), body),
    )
  })

  app.delete('/api/projects/:id', async (context) => {
    const principal = context.get('principal')
    await projects.remove(principal.user.id, actorOf(principal), context.req.param('id'))
    return context.body(null, 204)
  })

  app.put('/api/projects/:id/members/:userId', async (context) => {
    const principal = context.get('principal')
    const { id, userId } = context.req.param()
    return context.json(await projects.grant(principal.user.id, actorOf(principal), id, userId))
  })

  app.delete('/api/projects/:id/members/:userId', async (context) => {
    const principal = context.get('principal')
    const { id, userId } = context.req.param()
    return context.json(await projects.revoke(principal.user.id, actorOf(principal), id, userId))
  })
}
