// The HTTP request of one Web Push delivery, built by the `web-push` library: the payload encrypted for
// the subscription (aes128gcm, RFC 8291) and a VAPID JWT signed with the instance's key pair (RFC 8292).
// It is sent by the same guarded connection as webhooks, so a push endpoint follows the same address rule.
import { createRequire } from 'node:module'
import type WebPush from 'web-push'
import type { NotificationPayload } from './notification-events.js'
import type { OutgoingRequest } from './webhook-request.js'

const require = createRequire(import.meta.url)
let loaded: typeof WebPush | undefined

/** web-push and its JWT and ASN.1 dependencies (some thirty modules) load on first use, not at start-up. */
function webpush(): typeof WebPush {
  loaded ??= require('web-push') as typeof WebPush
  return loaded
}

export interface VapidKeyPair {
  publicKey: string
  privateKey: string
}

/** What a browser's PushSubscription.toJSON() gives: the endpoint and its keys (base64url). */
export interface PushSubscriptionKeys {
  p256dh: string
  auth: string
}

export function generateVapidKeys(): VapidKeyPair {
  return webpush().generateVAPIDKeys()
}

/** How long a push service keeps an undelivered message (the device is offline). */
const PUSH_TTL_SECONDS = 24 * 60 * 60

export function webPushRequest(options: {
  endpoint: string
  keys: PushSubscriptionKeys
  vapid: VapidKeyPair
  subject: string
  deliveryId: string
  payload: NotificationPayload
  link: string
}): OutgoingRequest {
  const message = JSON.stringify({
    title: options.payload.title,
    body: options.payload.summary,
    url: options.link,
    tag: options.payload.actionId ?? options.payload.runId ?? options.deliveryId,
    event: options.payload.event,
    delivery: options.deliveryId,
  })
  const details = webpush().generateRequestDetails(
    { endpoint: options.endpoint, keys: options.keys },
    message,
    {
      vapidDetails: {
        subject: options.subject,
        publicKey: options.vapid.publicKey,
        privateKey: options.vapid.privateKey,
      },
      TTL: PUSH_TTL_SECONDS,
      urgency: options.payload.event === 'approval.requested' ? 'high' : 'normal',
      contentEncoding: 'aes128gcm',
    },
  )
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(details.headers)) headers[name.toLowerCase()] = String(value)
  headers['x-hangar-delivery'] = options.deliveryId
  return {
    url: details.endpoint,
    method: 'POST',
    headers,
    body: Buffer.from(details.body ?? Buffer.alloc(0)),
  }
}
