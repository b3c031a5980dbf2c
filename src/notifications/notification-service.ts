// Notifications, per user, through one service that REST, the CLI and the web UI all use: channels (a Web
// Push subscription or an outbound webhook), which events and projects each wants, the delivery log, a
// test send. The run writer hands every stored batch to `observe`, which never blocks nor throws: causes
// are turned into queued deliveries (one per channel and cause) in the background, and the delivery worker
// sends them. A user is told only about their own runs, in projects they may still use; a channel can
// name only projects its user may see. Secrets (webhook keys, push subscription keys, the VAPID private
// key) live in the vault and leave it only to sign or encrypt a request; the webhook secret is shown once.
import { randomBytes } from 'node:crypto'
import type { HangarConfig } from '../core/config.js'
import { AppError } from '../core/errors.js'
import type { EventEnvelope } from '../core/events.js'
import type { Logger } from '../core/logger.js'
import type { ProjectService } from '../projects/project-service.js'
import { checkProviderBaseUrl } from '../providers/base-url-policy.js'
import { createGuardedFetch } from '../providers/guarded-connection.js'
import type { NotificationDelivery } from '../store/repositories/notifications-repository.js'
import { type ChannelView, channelView, type DeliveryView, deliveryView } from './channel-views.js'
import type { Store } from '../store/store.js'
export type { ChannelView, DeliveryView } from './channel-views.js'
import type { Vault } from '../store/vault.js'
import { createDeliveryWorker, type DeliveryWorker } from './delivery-worker.js'
import {
  causesOf,
  mayCause,
  NOTIFICATION_EVENTS,
  type NotificationCause,
  type NotificationEvent,
  type NotificationPayload,
  TEST_EVENT,
  titleOf,
} from './notification-events.js'
import { generateVapidKeys, type PushSubscriptionKeys, webPushRequest } from './web-push-request.js'
import { webhookRequest } from './webhook-request.js'
import { REPORT_EVENT, reportPayload } from './report-payload.js'
import type { TriggerReport } from '../triggers/trigger-report.js'

const SECRET_PURPOSE = 'notification-channel'
const VAPID_PURPOSE = 'vapid-private-key'
/** The vault binds every envelope to a user; the instance's own key pair belongs to none. */
const INSTANCE = 'instance'

export interface NewChannelRequest {
  type: 'webpush' | 'webhook'
  url?: string | undefined
  format?: 'generic' | 'slack' | 'discord' | 'ntfy' | undefined
  name?: string | undefined
  events?: NotificationEvent[] | undefined
  projectIds?: string[] | undefined
  subscription?: { endpoint: string; keys: PushSubscriptionKeys } | undefined
}

export interface NotificationServiceOptions {
  store: Store
  vault: Vault | null
  projects: Pick<ProjectService, 'isOwner' | 'get'>
  config: HangarConfig
  log: Logger
  node: string
  /** Tests: a shorter backoff and poll. */
  delivery?: { baseDelayMs?: number; pollMs?: number; timeoutMs?: number; maxAttempts?: number }
  /** Tests: the connection (default: guarded by notifications.allowPrivateNetworks). */
  fetch?: typeof fetch
}

export function createNotificationService(options: NotificationServiceOptions) {
  const { store, config, log } = options
  const repository = store.notificationChannels
  const allowPrivate = config.notifications.allowPrivateNetworks
  const guardedFetch = options.fetch ?? createGuardedFetch({ allowPrivate })
  let origin = config.notifications.publicUrl?.replace(/\/+$/, '')
  let worker: DeliveryWorker | undefined
  const pending = new Set<Promise<void>>()

  function vault(): Vault {
    if (options.vault) return options.vault
    throw new AppError(
      'vault_unavailable',
      'notification channels need the key vault, which is not available',
      {
        hint: 'see hangar doctor',
      },
    )
  }

  function checkTarget(url: string, field: string): void {
    try {
      checkProviderBaseUrl(url, { allowLocal: allowPrivate })
    } catch (error) {
      if (!(error instanceof AppError)) throw error
      throw new AppError('invalid_request', error.message.replace('provider base URL', `${field}`), {
        hint:
          error.hint?.replace('providers.allowPrivateNetworks', 'notifications.allowPrivateNetworks') ?? '',
        details: { field },
      })
    }
  }

  async function vapid() {
    const stored = await repository.vapidKeys(() => {
      const pair = generateVapidKeys()
      return {
        publicKey: pair.publicKey,
        privateEnvelope: vault().encrypt(pair.privateKey, { purpose: VAPID_PURPOSE, userId: INSTANCE }),
      }
    })
    return stored
  }

  async function assertProjects(userId: string, projectIds: string[]): Promise<void> {
    // Not found for anything the user may not see: another user's project is indistinguishable from none.
    for (const projectId of projectIds) await options.projects.get(userId, projectId)
  }

  async function mayUse(userId: string, projectId: string | null): Promise<boolean> {
    if (projectId === null) return true
    try {
      await options.projects.get(userId, projectId)
      return true
    } catch {
      return false
    }
  }

  async function payloadFor(
    userId: string,
    cause: Omit<NotificationCause, 'event'> & { event: string },
    at: string,
  ): Promise<NotificationPayload> {
    const scope = store.forUser(userId)
    const run = await scope.runs.get(cause.runId)
    const conversation = run?.conversationId ? await scope.conversations.get(run.conversationId) : undefined
    const project = run?.projectId ? await store.projects.get(run.projectId) : undefined
    const agent = run?.agent ?? null
    const projectName = project?.name ?? null
    const summaryParts = [
      cause.detail,
      cause.reason,
      conversation ? `conversation “${conversation.title}”` : undefined,
    ].filter(Boolean)
    const link = conversation
      ? `/conversations/${encodeURIComponent(conversation.id)}${cause.actionId ? `?action=${encodeURIComponent(cause.actionId)}` : ''}`
      : cause.actionId
        ? `/approvals?action=${encodeURIComponent(cause.actionId)}`
        : `/runs/${encodeURIComponent(cause.runId)}`
    return {
      event: cause.event,
      at,
      projectId: run?.projectId ?? null,
      project: projectName,
      conversationId: conversation?.id ?? null,
      conversation: conversation?.title ?? null,
      runId: cause.runId,
      agent,
      ...(cause.actionId && { actionId: cause.actionId }),
      title: titleOf(cause.event, agent, projectName),
      summary: summaryParts.join(' · '),
      link,
    }
  }

  async function enqueueCauses(userId: string, causes: NotificationCause[], at: string): Promise<void> {
    const channels = await repository.listChannels(userId)
    if (channels.length === 0) return
    let queued = false
    for (const cause of causes) {
      const wanting = channels.filter((channel) => channel.events.includes(cause.event))
      if (wanting.length === 0) continue
      const payload = await payloadFor(userId, cause, at)
      // Only what the user may still see: a project taken away since the channel was made tells nothing.
      if (!(await mayUse(userId, payload.projectId))) continue
      for (const channel of wanting) {
        if (channel.projectIds && (!payload.projectId || !channel.projectIds.includes(payload.projectId)))
          continue
        const made = await repository.enqueue({
          channelId: channel.id,
          userId,
          event: cause.event,
          sourceKey: cause.sourceKey,
          payload: payload as unknown as Record<string, unknown>,
        })
        queued ||= made !== undefined
      }
    }
    if (queued) worker?.kick()
  }

  function track(work: Promise<void>): void {
    const tracked = work
      .catch((error: unknown) => log.warn('notifications not queued', { error }))
      .finally(() => pending.delete(tracked))
    pending.add(tracked)
  }

  async function requestOf(delivery: NotificationDelivery) {
    const channel = await repository.getChannel(delivery.userId, delivery.channelId)
    if (!channel) return undefined
    const payload = delivery.payload as unknown as NotificationPayload
    const link = `${origin ?? 'http://127.0.0.1:7456'}${payload.link}`
    const secret = vault().decrypt(channel.secretEnvelope, {
      purpose: SECRET_PURPOSE,
      userId: channel.userId,
    })
    if (channel.type === 'webhook')
      return webhookRequest({
        format: channel.format,
        url: channel.url,
        secret,
        deliveryId: delivery.id,
        payload,
        link,
      })
    const keys = vapidKeysCache ?? (vapidKeysCache = await vapid())
    return webPushRequest({
      endpoint: channel.url,
      keys: JSON.parse(secret) as PushSubscriptionKeys,
      vapid: {
        publicKey: keys.publicKey,
        privateKey: vault().decrypt(keys.privateEnvelope, { purpose: VAPID_PURPOSE, userId: INSTANCE }),
      },
      subject: config.notifications.vapidSubject ?? 'mailto:hangar@localhost',
      deliveryId: delivery.id,
      payload,
      link,
    })
  }
  let vapidKeysCache: { publicKey: string; privateEnvelope: string } | undefined

  /** The guarded lookup words its refusal for provider URLs; say what applies here. */
  const deliveryFetch: typeof fetch = async (input, init) => {
    try {
      return await guardedFetch(input, init)
    } catch (error) {
      if (error instanceof Error && /base URL/.test(error.message))
        throw new Error(
          error.message
            .replace(/the (provider )?base URL( set for this provider)?/i, 'the channel URL')
            .replace('providers.allowPrivateNetworks', 'notifications.allowPrivateNetworks'),
          { cause: error },
        )
      throw error
    }
  }

  return {
    /** A stored batch of run events (called by the run writer; returns at once). */
    observe(envelopes: readonly EventEnvelope[], meta: { userId: string }): void {
      if (!mayCause(envelopes)) return
      const causes = causesOf(envelopes)
      const at = envelopes[envelopes.length - 1]?.ts ?? new Date().toISOString()
      if (causes.length > 0) track(enqueueCauses(meta.userId, causes, at))
    },

    /** Another feature's event for a user (e.g. a workspace landed), addressed like run events. */
    notify(userId: string, cause: NotificationCause, at = new Date().toISOString()): void {
      track(enqueueCauses(userId, [cause], at))
    },

    /** Starts sending (the daemon; a CLI process only queues). `baseUrl`: where links point. */
    start(baseUrl?: string): void {
      origin ??= baseUrl?.replace(/\/+$/, '')
      worker ??= createDeliveryWorker({
        store,
        node: options.node,
        requestOf,
        fetch: deliveryFetch,
        // An expired or revoked push subscription never comes back: its channel goes (webhooks stay).
        onGone: async (delivery) => {
          const channel = await repository.getChannel(delivery.userId, delivery.channelId)
          if (channel?.type !== 'webpush') return
          log.info('push subscription gone; channel removed', { channel: channel.id })
          await repository.deleteChannel(delivery.userId, channel.id)
        },
        log,
        ...options.delivery,
      })
    },

    async stop(): Promise<void> {
      await Promise.all(pending)
      await worker?.stop()
      worker = undefined
    },

    /** Waits until what was observed is queued and nothing is being sent (tests). */
    async settled(): Promise<void> {
      while (pending.size > 0) await Promise.all(pending)
      await worker?.idle()
    },

    async vapidPublicKey(): Promise<string> {
      vault()
      return (await vapid()).publicKey
    },

    async list(userId: string): Promise<ChannelView[]> {
      return (await repository.listChannels(userId)).map(channelView)
    },

    async create(userId: string, request: NewChannelRequest): Promise<ChannelView & { secret?: string }> {
      const events = [...new Set(request.events ?? NOTIFICATION_EVENTS)]
      const projectIds = request.projectIds ? [...new Set(request.projectIds)] : null
      if (projectIds) await assertProjects(userId, projectIds)
      if (request.type === 'webhook') {
        if (!request.url)
          throw new AppError('invalid_request', 'url: a webhook channel needs the URL to post to', {
            details: { field: 'url' },
          })
        checkTarget(request.url, 'url')
        const secret = `hns_${randomBytes(32).toString('base64url')}`
        const channel = await repository.createChannel(userId, {
          type: 'webhook',
          format: request.format ?? 'generic',
          name: request.name ?? new URL(request.url).host,
          url: request.url,
          secretEnvelope: vault().encrypt(secret, { purpose: SECRET_PURPOSE, userId }),
          events,
          projectIds,
        })
        return { ...channelView(channel), secret }
      }
      const subscription = request.subscription
      if (!subscription)
        throw new AppError(
          'invalid_request',
          'subscription: a webpush channel needs the browser’s push subscription',
          {
            hint: 'send PushSubscription.toJSON() as subscription',
            details: { field: 'subscription' },
          },
        )
      checkTarget(subscription.endpoint, 'subscription.endpoint')
      const envelope = vault().encrypt(JSON.stringify(subscription.keys), { purpose: SECRET_PURPOSE, userId })
      // The same browser subscribing again replaces its channel (new keys, new choices).
      const existing = await repository.findByUrl(userId, subscription.endpoint)
      if (existing) await repository.deleteChannel(userId, existing.id)
      const channel = await repository.createChannel(userId, {
        type: 'webpush',
        format: 'webpush',
        name: request.name ?? `push ${new URL(subscription.endpoint).host}`,
        url: subscription.endpoint,
        secretEnvelope: envelope,
        events,
        projectIds,
      })
      return channelView(channel)
    },

    async remove(userId: string, channelId: string): Promise<void> {
      if (!(await repository.deleteChannel(userId, channelId))) throw notFound(channelId)
    },

    async deliveries(userId: string, channelId: string, limit?: number): Promise<DeliveryView[]> {
      if (!(await repository.getChannel(userId, channelId))) throw notFound(channelId)
      return (await repository.listDeliveries(userId, channelId, limit)).map(deliveryView)
    },

    /** Queues a test notification to one channel; it shows in the delivery log like any other. */
    async test(userId: string, channelId: string): Promise<DeliveryView> {
      const channel = await repository.getChannel(userId, channelId)
      if (!channel) throw notFound(channelId)
      const at = new Date().toISOString()
      const payload: NotificationPayload = {
        event: TEST_EVENT,
        at,
        projectId: null,
        project: null,
        conversationId: null,
        conversation: null,
        runId: null,
        agent: null,
        title: titleOf(TEST_EVENT, null, null),
        summary: `a test of channel ${channel.name}`,
        link: '/settings',
      }
      const made = await repository.enqueue({
        channelId,
        userId,
        event: TEST_EVENT,
        sourceKey: `test:${at}:${randomBytes(4).toString('hex')}`,
        payload: payload as unknown as Record<string, unknown>,
      })
      worker?.kick()
      return deliveryView(made!)
    },

    /** The user's channel, or not found (another user's channel is indistinguishable from none). */
    async channel(userId: string, channelId: string): Promise<ChannelView> {
      const channel = await repository.getChannel(userId, channelId)
      if (!channel) throw notFound(channelId)
      return channelView(channel)
    },

    /**
     * A triggered run's report to one of the trigger creator's channels, as event `trigger.report`. Naming
     * the channel in the trigger is the choice: the channel's events and projects do not filter it. Queued
     * once per fire (retries keep the delivery id); refused when the run's project is no longer the user's.
     */
    async report(userId: string, channelId: string, report: TriggerReport): Promise<void> {
      const channel = await repository.getChannel(userId, channelId)
      if (!channel) throw notFound(channelId)
      const at = new Date().toISOString()
      const base = await payloadFor(userId, { event: REPORT_EVENT, sourceKey: '', runId: report.runId }, at)
      if (!(await mayUse(userId, base.projectId)))
        throw new AppError('not_found', `no project ${base.projectId}`, {
          hint: 'the run’s project is no longer yours to use',
        })
      const payload = reportPayload(base, report)
      await repository.enqueue({
        channelId,
        userId,
        event: REPORT_EVENT,
        sourceKey: `trigger-report:${report.fireId}`,
        payload: payload as unknown as Record<string, unknown>,
      })
      worker?.kick()
    },
  }
}

function notFound(channelId: string): AppError {
  return new AppError('not_found', `no notification channel ${channelId}`, {
    hint: 'see hangar notify list',
  })
}

export type NotificationService = ReturnType<typeof createNotificationService>
