// Proposals over HTTP. Confirm and reject are by id only (a body is ignored but for the reason); the
// decision answers at once — no request is held open — and when it was the run's last open proposal, a
// continuation run is queued and returned.
import type { Hono } from 'hono'
import { z } from 'zod'
import { AppError } from '../../core/errors.js'
import { queueContinuation } from '../../runs/actions-service.js'
import type { ActionStatus } from '../../store/repositories/actions-repository.js'
import type { RuntimeServices, ServerDeps } from '../app.js'
import type { AppVariables } from '../auth-middleware.js'
import { readJsonBody } from '../request-body.js'

const STATUSES = [
  'pending',
  'applying',
  'applied',
  'rejected',
  'expired',
  'conflict',
  'failed',
  'superseded',
] as const

export function registerActionRoutes(
  app: Hono<{ Variables: AppVariables }>,
  deps: { store: ServerDeps['store']; runtime: RuntimeServices },
): void {
  const { store, runtime } = deps

  app.get('/api/actions', async (context) => {
    const status = context.req.query('status')
    if (status && !(STATUSES as readonly string[]).includes(status)) {
      throw new AppError('invalid_request', `status must be one of ${STATUSES.join(', ')}`)
    }
    return context.json(
      await runtime.actions.list(
        context.get('principal').user.id,
        status ? { status: status as ActionStatus } : {},
      ),
    )
  })

  const decide = (kind: 'confirm' | 'reject') =>
    app.post(`/api/actions/:id/${kind}`, async (context) => {
      const principal = context.get('principal')
      const body =
        kind === 'reject'
          ? await readJsonBody(context, z.object({ reason: z.string().max(2000).optional() }))
          : {}
      // Whether this principal may decide (the approve scope, or a session) is the service's call.
      const result = await runtime.actions.decide(
        principal,
        context.req.param('id'),
        kind === 'confirm' ? { kind } : { kind, reason: (body as { reason?: string }).reason },
      )
      const continuation = await queueContinuation(
        { store, runs: runtime.runs, scheduler: runtime.scheduler },
        principal.user.id,
        result,
      )
      return context.json({ action: result.action, replayed: result.replayed, continuation })
    })
  decide('confirm')
  decide('reject')
}
