// The HTTP request of one webhook delivery: the body in the channel's shape (generic JSON, Slack, Discord,
// ntfy) and the headers every shape gets — the event, the delivery id (stable across retries, so a
// receiver can drop a repeat) and `sha256=<hex HMAC-SHA256 of the raw body>` with the channel's secret.
import { createHmac } from 'node:crypto'
import type { ChannelFormat } from '../store/repositories/notifications-repository.js'
import type { NotificationPayload } from './notification-events.js'

export interface OutgoingRequest {
  url: string
  method: 'POST'
  headers: Record<string, string>
  body: Buffer
}

export function signBody(secret: string, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
}

function text(payload: NotificationPayload, url: string): string {
  return `${payload.title}\n${payload.summary}\n${url}`
}

export function webhookRequest(options: {
  format: ChannelFormat
  url: string
  secret: string
  deliveryId: string
  payload: NotificationPayload
  /** The absolute link (the daemon's origin + the payload's path). */
  link: string
}): OutgoingRequest {
  const { payload, link } = options
  let body: Buffer
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  switch (options.format) {
    case 'slack':
      body = Buffer.from(JSON.stringify({ text: text(payload, link) }))
      break
    case 'discord':
      body = Buffer.from(JSON.stringify({ content: text(payload, link).slice(0, 2000) }))
      break
    case 'ntfy':
      body = Buffer.from(payload.summary || payload.title)
      headers['content-type'] = 'text/plain; charset=utf-8'
      // Header values must be Latin-1: non-ASCII titles are left to the body.
      headers.title = /^[\x20-\x7e]*$/.test(payload.title) ? payload.title : 'Hangar'
      headers.click = link
      headers.tags = payload.event
      break
    default: {
      const { link: _path, ...rest } = payload
      body = Buffer.from(JSON.stringify({ ...rest, delivery: options.deliveryId, url: link }))
    }
  }
  const signature = signBody(options.secret, body)
  Object.assign(headers, {
    'user-agent': 'Hangar-Notifications',
    'x-hangar-event': payload.event,
    'x-hangar-delivery': options.deliveryId,
    'x-hangar-signature-256': signature,
    'x-hangar-signature': signature,
  })
  return { url: options.url, method: 'POST', headers, body }
}
