// Compare attempts over HTTP: start one prompt with several agents, see them side by side, pick one. The
// rules (bad input, project access, what a pick removes) are the attempts service's, which MCP and the
// CLI share (src/runs/attempts-service.ts).
import type { Hono } from 'hono'
import { pickAttemptSchema, startAttemptsSchema } from '../../runs/attempts-service.js'
import type { RuntimeServices } from '../app.js'
import type { AppVariables } from '../auth-middleware.js'
import { readJsonBody } from '../request-body.js'

export function registerAttemptRoutes(
  app: Hono<{ Variables: AppVariables }>,
  deps: { runtime: Pick<RuntimeServices, 'attempts'> },
): void {
  const { attempts } = deps.runtime

  app.post('/api/attempts', async (context) => {
    const body = await readJsonBody(context, startAttemptsSchema)
    return context.json(await attempts.start(context.get('principal').user.id, body), 201)
  })

  app.get('/api/attempts', async (context) =>
    context.json({ attempts: await attempts.list(context.get('principal').user.id) }),
  )

  app.get('/api/attempts/:id', async (context) =>
    context.json(await attempts.get(context.get('principal').user.id, context.req.param('id'))),
  )

  app.post('/api/attempts/:id/pick', async (context) => {
    const body = await readJsonBody(context, pickAttemptSchema)
    return context.json(await attempts.pick(context.get('principal').user.id, context.req.param('id'), body))
  })
}
