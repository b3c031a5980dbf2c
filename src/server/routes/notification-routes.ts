// Notification channels over HTTP (session or PAT): add (a webhook's secret is in this answer only),
// list, remove, test, the delivery log, and the instance's VAPID public key for the browser to subscribe.
import type { Hono } from 'hono'
import { z } from 'zod'
import type { NotificationService } from '../../notifications/notification-service.js'
import { NOTIFICATION_EVENTS } from '../../notifications/notification-events.js'
import type { AppVariables } from '../auth-middleware.js'
import { readJsonBody } from '../request-body.js'

const base64url = z
  .string()
  .regex(/^[A-Za-z0-9_-]+=*$/)
  .max(512)

export const createChannelSchema = z.strictObject({
  type: z.enum(['webpush', 'webhook']),
  url: z.string().max(2048).optional(),
  format: z.enum(['generic', 'slack', 'discord', 'ntfy']).optional(),
  name: z.string().trim().min(1).max(100).optional(),
  events: z.array(z.enum(NOTIFICATION_EVENTS)).min(1).optional(),
  projectIds: z.array(z.string().min(1).max(100)).max(100).optional(),
  subscription: z
    .object({
      endpoint: z.string().max(2048),
      expirationTime: z.number().nullable().optional(),
      keys: z.object({ p256dh: base64url, auth: base64url }),
    })
    .optional(),
})

export function registerNotificationRoutes(
  app: Hono<{ Variables: AppVariables }>,
  notifications: NotificationService,
): void {
  const userOf = (context: { get(key: 'principal'): AppVariables['principal'] }) =>
    context.get('principal').user.id

  // `vapid-public-key` is the same answer under the name the issue used.
  app.get('/api/notifications/vapid-key', async (context) =>
    context.json({ publicKey: await notifications.vapidPublicKey() }),
  )
  app.get('/api/notifications/vapid-public-key', async (context) =>
    context.json({ publicKey: await notifications.vapidPublicKey() }),
  )

  app.get('/api/notifications/channels', async (context) =>
    context.json(await notifications.list(userOf(context))),
  )

  app.post('/api/notifications/channels', async (context) => {
    const body = await readJsonBody(context, createChannelSchema)
    const channel = await notifications.create(userOf(context), {
      type: body.type,
      url: body.url,
      format: body.format,
      name: body.name,
      events: body.events,
      projectIds: body.projectIds,
      subscription: body.subscription && {
        endpoint: body.subscription.endpoint,
        keys: body.subscription.keys,
      },
    })
    return context.json(channel, 201)
  })

  app.delete('/api/notifications/channels/:id', async (context) => {
    await notifications.remove(userOf(context), context.req.param('id'))
    return context.json({ removed: true })
  })

  app.post('/api/notifications/channels/:id/test', async (context) =>
    context.json(await notifications.test(userOf(context), context.req.param('id')), 202),
  )

  app.get('/api/notifications/channels/:id/deliveries', async (context) => {
    const limit = Number(context.req.query('limit') ?? 50)
    return context.json(
      await notifications.deliveries(
        userOf(context),
        context.req.param('id'),
        Number.isInteger(limit) && limit > 0 ? Math.min(limit, 500) : 50,
      ),
    )
  })
}
