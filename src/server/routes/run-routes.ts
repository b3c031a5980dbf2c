// Runs over HTTP: submit (queued, then scheduled), list, show, cancel. Everything is scoped to the caller;
// another user's ids answer 404.
import type { Hono } from 'hono'
import { z } from 'zod'
import { AppError } from '../../core/errors.js'
import { RUN_STATUSES } from '../../core/events.js'
import { DEFAULT_RESUME_PROMPT, resumeRunSchema } from '../../runs/resume-run.js'
import { submitRunSchema } from '../../runs/submit-run.js'
import type { RuntimeServices, ServerDeps } from '../app.js'
import { actorOf, type AppVariables } from '../auth-middleware.js'
import { readJsonBody } from '../request-body.js'

const listQuery = z.object({
  status: z.enum(RUN_STATUSES).optional(),
  conversationId: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(500).optional(),
})

export type RunRouteDeps = { store: ServerDeps['store']; runtime: RuntimeServices }

export function registerRunRoutes(app: Hono<{ Variables: AppVariables }>, deps: RunRouteDeps): void {
  const { store, runtime } = deps

  app.post('/api/runs', async (context) => {
    const userId = context.get('principal').user.id
    const body = await readJsonBody(context, submitRunSchema)
    const run = await runtime.submitRun(userId, body)
    return context.json(run, 201)
  })

  app.get('/api/runs', async (context) => {
    const query = listQuery.safeParse(context.req.query())
    if (!query.success)
      throw new AppError('invalid_request', `bad query: ${query.error.issues[0]?.message ?? ''}`)
    return context.json(await store.forUser(context.get('principal').user.id).runs.list(query.data))
  })

  app.get('/api/runs/:id', async (context) => {
    const run = await store.forUser(context.get('principal').user.id).runs.get(context.req.param('id'))
    if (!run) throw new AppError('not_found', `no run ${context.req.param('id')}`)
    return context.json(run)
  })

  // The run's request log: each model request that went through the proxy, with the feeds it carried.
  app.get('/api/runs/:id/requests', async (context) => {
    const scope = store.forUser(context.get('principal').user.id)
    const id = context.req.param('id')
    if (!(await scope.runs.get(id))) throw new AppError('not_found', `no run ${id}`)
    return context.json(await scope.proxyRequests.listForRun(id))
  })

  app.post('/api/runs/:id/cancel', async (context) => {
    return context.json(
      await runtime.scheduler.cancel(context.get('principal').user.id, context.req.param('id')),
    )
  })

  // The UI's Resume control: POST /api/runs { resumeRunId } with a default prompt (the same rules and checks).
  app.post('/api/runs/:id/resume', async (context) => {
    const userId = context.get('principal').user.id
    const body = await readJsonBody(context, resumeRunSchema)
    const run = await runtime.submitRun(userId, {
      resumeRunId: context.req.param('id'),
      prompt: body.prompt ?? DEFAULT_RESUME_PROMPT,
      ...(body.agent && { agent: body.agent }),
    })
    return context.json(run, 201)
  })

  app.post('/api/runs/:id/finalize', async (context) => {
    const principal = context.get('principal')
    return context.json(
      await runtime.finalizeRun(principal.user.id, context.req.param('id'), actorOf(principal)),
    )
  })
}
