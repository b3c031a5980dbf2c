// Personal access tokens over HTTP. A PAT cannot manage PATs: these routes need a person's session.
import type { Hono } from 'hono'
import { z } from 'zod'
import { parseDuration } from '../../core/duration.js'
import { AppError } from '../../core/errors.js'
import type { ServerDeps } from '../app.js'
import { type AppVariables, requireSession } from '../auth-middleware.js'
import { readJsonBody } from '../request-body.js'

const createTokenSchema = z.strictObject({
  name: z.string().trim().min(1).max(100),
  expiresIn: z.string().optional(),
  scopes: z.array(z.enum(['api', 'approve'])).optional(),
})

export function registerTokenRoutes(
  app: Hono<{ Variables: AppVariables }>,
  deps: Pick<ServerDeps, 'auth' | 'store'>,
): void {
  app.post('/api/tokens', async (context) => {
    const principal = requireSession(context)
    const body = await readJsonBody(context, createTokenSchema)
    const expiresInMs = body.expiresIn === undefined ? undefined : parseDurationField(body.expiresIn)
    const { record, token } = await deps.auth.createToken(principal, principal.user.id, {
      name: body.name,
      ...(expiresInMs !== undefined && { expiresInMs }),
      ...(body.scopes && { scopes: body.scopes }),
    })
    return context.json({ ...record, token }, 201)
  })

  app.get('/api/tokens', async (context) => {
    const principal = requireSession(context)
    return context.json(await deps.store.forUser(principal.user.id).tokens.list())
  })

  app.delete('/api/tokens/:id', async (context) => {
    const principal = requireSession(context)
    return context.json(await deps.auth.revokeToken(principal, principal.user.id, context.req.param('id')))
  })
}

function parseDurationField(value: string): number {
  try {
    return parseDuration(value, 'expiresIn')
  } catch (error) {
    if (error instanceof AppError)
      throw new AppError('invalid_request', error.message, { hint: error.hint ?? '' })
    throw error
  }
}
