// Triggers over HTTP: `/api/triggers` for signed-in users (their own triggers only; the rules are the
// trigger service's, src/triggers/trigger-service.ts), and `POST /api/hooks/:id` for senders of webhooks,
// whose credential is the HMAC of the raw body. A bad signature counts towards the client's failed-auth
// limit (auth-rate-limiter.ts, 429 once over it); accepted deliveries are limited per trigger; the body
// limit of every /api route (1 MiB, 413) applies before any of this.
import type { Hono } from 'hono'
import { z } from 'zod'
import { AppError } from '../../core/errors.js'
import { type Clock, systemClock } from '../../core/ids.js'
import type { RuntimeServices } from '../app.js'
import { actorOf, type AppVariables, httpGuardsOf } from '../auth-middleware.js'
import { checkCredential } from '../auth-rate-limiter.js'
import { readJsonBody } from '../request-body.js'
import { fireOutcomeJson } from '../../triggers/trigger-fire.js'
import {
  DELIVERY_HEADERS,
  EVENT_HEADERS,
  firstHeader,
  SIGNATURE_HEADERS,
} from '../../triggers/webhook-signature.js'

const short = z.string().trim().min(1).max(200)

export const triggerCreateSchema = z.strictObject({
  name: z.string().min(1).max(64),
  kind: z.enum(['schedule', 'webhook']),
  cron: z.string().min(1).max(200).optional(),
  timezone: z.string().min(1).max(64).optional(),
  missed: z.enum(['skip', 'once']).optional(),
  projectId: short.optional(),
  agent: short.optional(),
  prompt: z.string().min(1, 'the prompt must not be empty').max(100_000),
  conversationId: short.optional(),
  filter: z
    .strictObject({ event: short.optional(), action: short.optional(), label: short.optional() })
    .optional(),
  report: z
    .discriminatedUnion('type', [
      z.strictObject({
        type: z.literal('github'),
        repository: z
          .string()
          .regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'expected owner/name')
          .optional(),
        issue: z.int().positive().optional(),
      }),
      // One of the creator's notification channels (its id); another user's is not found.
      z.strictObject({ type: z.literal('channel'), channelId: short }),
    ])
    .optional(),
})

export function registerTriggerRoutes(
  app: Hono<{ Variables: AppVariables }>,
  deps: { runtime: Pick<RuntimeServices, 'triggers'> },
): void {
  const { triggers } = deps.runtime
  const userOf = (context: { get(key: 'principal'): AppVariables['principal'] }) =>
    context.get('principal').user.id

  app.get('/api/triggers', async (context) =>
    context.json({ triggers: await triggers.list(userOf(context)) }),
  )

  app.post('/api/triggers', async (context) => {
    const principal = context.get('principal')
    const body = await readJsonBody(context, triggerCreateSchema)
    return context.json(await triggers.create(principal.user.id, actorOf(principal), body), 201)
  })

  app.get('/api/triggers/:id', async (context) =>
    context.json(await triggers.get(userOf(context), context.req.param('id'))),
  )

  app.get('/api/triggers/:id/fires', async (context) =>
    context.json({ fires: await triggers.fires(userOf(context), context.req.param('id')) }),
  )

  app.post('/api/triggers/:id/run', async (context) => {
    const outcome = await triggers.runNow(userOf(context), context.req.param('id'))
    return context.json(fireOutcomeJson(outcome), 202)
  })

  app.delete('/api/triggers/:id', async (context) => {
    const principal = context.get('principal')
    await triggers.remove(principal.user.id, actorOf(principal), context.req.param('id'))
    return context.body(null, 204)
  })
}

/** Accepted deliveries per trigger: at most `max` in `windowMs` (a sender looping on one hook). */
export function createDeliveryLimiter(options: { max?: number; windowMs?: number; clock?: Clock } = {}) {
  const max = options.max ?? 60
  const windowMs = options.windowMs ?? 60_000
  const clock = options.clock ?? systemClock
  const recent = new Map<string, number[]>()
  return {
    take(key: string): void {
      const now = clock().getTime()
      const times = (recent.get(key) ?? []).filter((time) => time > now - windowMs)
      if (times.length >= max) {
        const retryAfterSeconds = Math.max(1, Math.ceil((times[0]! + windowMs - now) / 1000))
        throw new AppError('rate_limited', `too many deliveries to this trigger`, {
          hint: `wait ${retryAfterSeconds} s`,
          details: { retryAfterSeconds },
        })
      }
      times.push(now)
      recent.delete(key)
      recent.set(key, times)
      if (recent.size > 10_000) recent.delete(recent.keys().next().value!)
    },
  }
}

export function registerHookRoutes(
  app: Hono<{ Variables: AppVariables }>,
  deps: { runtime: Pick<RuntimeServices, 'triggers'> },
): void {
  const { triggers } = deps.runtime
  const deliveries = createDeliveryLimiter()

  app.post('/api/hooks/:id', async (context) => {
    const id = context.req.param('id')
    const body = new Uint8Array(await context.req.arrayBuffer())
    const headers = context.req.raw.headers
    const answer = await checkCredential(context, httpGuardsOf(context), async () => {
      const result = await triggers.receiveWebhook(id, {
        body,
        signature: firstHeader(headers, SIGNATURE_HEADERS),
        deliveryId: firstHeader(headers, DELIVERY_HEADERS),
        event: firstHeader(headers, EVENT_HEADERS),
        beforeFire: () => deliveries.take(id),
      })
      if (result.status === 401)
        throw new AppError('unauthorized', 'bad signature', {
          hint: 'sign the raw body with the trigger secret: X-Hub-Signature-256: sha256=<hex HMAC-SHA256>',
        })
      return result
    })
    if (answer.status === 400) throw new AppError('invalid_request', answer.reason)
    if (answer.status === 200) return context.json({ fired: false, duplicate: true }, 200)
    if (answer.status === 202) return context.json(fireOutcomeJson(answer.outcome), 202)
    throw new AppError('internal', 'unexpected webhook answer')
  })
}
