// How channels and deliveries are shown (REST, CLI, web UI): never a secret, and a target URL only by
// its origin and first path segment (incoming-webhook URLs and push endpoints are credentials).
import type {
  ChannelFormat,
  NotificationChannelRow,
  NotificationDelivery,
} from '../store/repositories/notifications-repository.js'

/** A channel as responses show it: never its secret, and a push endpoint only by its host. */
export interface ChannelView {
  id: string
  type: 'webpush' | 'webhook'
  format: ChannelFormat
  name: string
  url: string
  events: string[]
  projectIds: string[] | null
  createdAt: string
}

export interface DeliveryView {
  id: string
  event: string
  status: string
  attempts: number
  nextAttemptAt: string
  lastStatusCode: number | null
  lastError: string | null
  createdAt: string
  deliveredAt: string | null
  title: string
}

export function channelView(channel: NotificationChannelRow): ChannelView {
  return {
    id: channel.id,
    type: channel.type,
    format: channel.format,
    name: channel.name,
    url: maskedUrl(channel.url),
    events: channel.events,
    projectIds: channel.projectIds,
    createdAt: channel.createdAt,
  }
}

/**
 * A target URL as responses show it. Push endpoints and incoming-webhook URLs (Slack, Discord, an ntfy
 * topic) carry their capability in the path or query: only the origin and the first path segment are shown.
 */
export function maskedUrl(url: string): string {
  const parsed = new URL(url)
  const segments = parsed.pathname.split('/').filter(Boolean)
  const first = segments[0] ? `/${segments[0]}` : ''
  return `${parsed.origin}${first}${segments.length > 1 || parsed.search ? '/…' : ''}`
}

export function deliveryView(delivery: NotificationDelivery): DeliveryView {
  return {
    id: delivery.id,
    event: delivery.event,
    status: delivery.status,
    attempts: delivery.attempts,
    nextAttemptAt: delivery.nextAttemptAt,
    lastStatusCode: delivery.lastStatusCode,
    lastError: delivery.lastError,
    createdAt: delivery.createdAt,
    deliveredAt: delivery.deliveredAt,
    title: String(delivery.payload.title ?? ''),
  }
}
