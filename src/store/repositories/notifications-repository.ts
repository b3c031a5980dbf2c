// Notification channels and their delivery queue. Channels are per user (`forUser`-style: every read and
// delete names its user). Deliveries are claimed row by row: a claim moves a due row to `sending` with
// this node's name and a lease, in one conditional UPDATE (on PostgreSQL after FOR UPDATE SKIP LOCKED),
// so two daemons never send the same row at once; a lease that runs out (the node died mid-send) makes
// the row due again — at least once, never silently dropped.
import { sql } from 'kysely'
import { newId } from '../../core/ids.js'
import type { NotificationChannelsTable, NotificationDeliveriesTable } from '../schema.js'
import { fromJson, nowIso, type RepositoryContext, toJson } from './context.js'

export type ChannelType = NotificationChannelsTable['type']
export type ChannelFormat = NotificationChannelsTable['format']
export type DeliveryStatus = NotificationDeliveriesTable['status']

export interface NotificationChannelRow {
  id: string
  userId: string
  type: ChannelType
  format: ChannelFormat
  name: string
  url: string
  secretEnvelope: string
  events: string[]
  projectIds: string[] | null
  createdAt: string
}

export interface NotificationDelivery {
  id: string
  channelId: string
  userId: string
  event: string
  sourceKey: string
  payload: Record<string, unknown>
  status: DeliveryStatus
  attempts: number
  nextAttemptAt: string
  lastError: string | null
  lastStatusCode: number | null
  createdAt: string
  deliveredAt: string | null
}

function toChannel(row: NotificationChannelsTable): NotificationChannelRow {
  return {
    id: row.id,
    userId: row.user_id,
    type: row.type,
    format: row.format,
    name: row.name,
    url: row.url,
    secretEnvelope: row.secret_envelope,
    events: fromJson<string[]>(row.events) ?? [],
    projectIds: fromJson<string[]>(row.project_ids),
    createdAt: row.created_at,
  }
}

function toDelivery(row: NotificationDeliveriesTable): NotificationDelivery {
  return {
    id: row.id,
    channelId: row.channel_id,
    userId: row.user_id,
    event: row.event,
    sourceKey: row.source_key,
    payload: fromJson<Record<string, unknown>>(row.payload) ?? {},
    status: row.status,
    attempts: Number(row.attempts),
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
    lastStatusCode: row.last_status_code === null ? null : Number(row.last_status_code),
    createdAt: row.created_at,
    deliveredAt: row.delivered_at,
  }
}

export interface NewChannel {
  type: ChannelType
  format: ChannelFormat
  name: string
  url: string
  secretEnvelope: string
  events: string[]
  projectIds: string[] | null
}

export interface NewDelivery {
  channelId: string
  userId: string
  event: string
  sourceKey: string
  payload: Record<string, unknown>
}

export function createNotificationsRepository(context: RepositoryContext) {
  const { db } = context
  return {
    async createChannel(userId: string, channel: NewChannel): Promise<NotificationChannelRow> {
      const row: NotificationChannelsTable = {
        id: newId('nch'),
        user_id: userId,
        type: channel.type,
        format: channel.format,
        name: channel.name,
        url: channel.url,
        secret_envelope: channel.secretEnvelope,
        events: toJson(channel.events),
        project_ids: channel.projectIds === null ? null : toJson(channel.projectIds),
        created_at: nowIso(context),
      }
      await db.insertInto('notification_channels').values(row).execute()
      return toChannel(row)
    },

    async listChannels(userId: string): Promise<NotificationChannelRow[]> {
      const rows = await db
        .selectFrom('notification_channels')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy('id')
        .execute()
      return rows.map(toChannel)
    },

    async getChannel(userId: string, id: string): Promise<NotificationChannelRow | undefined> {
      const row = await db
        .selectFrom('notification_channels')
        .selectAll()
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst()
      return row && toChannel(row)
    },

    /** A push subscription's channel by its endpoint (a browser subscribing again replaces it). */
    async findByUrl(userId: string, url: string): Promise<NotificationChannelRow | undefined> {
      const row = await db
        .selectFrom('notification_channels')
        .selectAll()
        .where('user_id', '=', userId)
        .where('url', '=', url)
        .executeTakeFirst()
      return row && toChannel(row)
    },

    async deleteChannel(userId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('notification_channels')
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },

    /** Queues one delivery; the same cause for the same channel again is a no-op (undefined). */
    async enqueue(delivery: NewDelivery): Promise<NotificationDelivery | undefined> {
      const now = nowIso(context)
      const row: NotificationDeliveriesTable = {
        id: newId('ndl'),
        channel_id: delivery.channelId,
        user_id: delivery.userId,
        event: delivery.event,
        source_key: delivery.sourceKey,
        payload: toJson(delivery.payload),
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        claimed_by: null,
        claimed_until: null,
        last_error: null,
        last_status_code: null,
        created_at: now,
        delivered_at: null,
      }
      const result = await db
        .insertInto('notification_deliveries')
        .values(row)
        .onConflict((conflict) => conflict.columns(['channel_id', 'source_key']).doNothing())
        .executeTakeFirst()
      return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0 ? toDelivery(row) : undefined
    },

    async listDeliveries(userId: string, channelId: string, limit = 50): Promise<NotificationDelivery[]> {
      const rows = await db
        .selectFrom('notification_deliveries')
        .selectAll()
        .where('channel_id', '=', channelId)
        .where('user_id', '=', userId)
        .orderBy('id', 'desc')
        .limit(limit)
        .execute()
      return rows.map(toDelivery)
    },

    async getDelivery(id: string): Promise<NotificationDelivery | undefined> {
      const row = await db
        .selectFrom('notification_deliveries')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst()
      return row && toDelivery(row)
    },

    /**
     * Takes up to `limit` due deliveries for `node` until `leaseUntil`: pending ones whose time has come,
     * and `sending` ones whose lease ran out. Each row goes to one claimer only.
     */
    async claimDue(node: string, leaseUntil: string, limit: number): Promise<NotificationDelivery[]> {
      const now = nowIso(context)
      const claim = async (tx: typeof db) => {
        let candidates = tx
          .selectFrom('notification_deliveries')
          .select('id')
          .where((eb) =>
            eb.or([
              eb.and([eb('status', '=', 'pending'), eb('next_attempt_at', '<=', now)]),
              eb.and([eb('status', '=', 'sending'), eb('claimed_until', '<', now)]),
            ]),
          )
          .orderBy('next_attempt_at')
          .limit(limit)
        if (context.engine === 'postgres') candidates = candidates.forUpdate().skipLocked()
        const ids = (await candidates.execute()).map((row) => row.id)
        if (ids.length === 0) return []
        const rows = await tx
          .updateTable('notification_deliveries')
          .set({
            status: 'sending',
            claimed_by: node,
            claimed_until: leaseUntil,
            attempts: sql<number>`attempts + 1`,
          })
          .where('id', 'in', ids)
          .where((eb) =>
            eb.or([
              eb('status', '=', 'pending'),
              eb.and([eb('status', '=', 'sending'), eb('claimed_until', '<', now)]),
            ]),
          )
          .returningAll()
          .execute()
        return rows.map(toDelivery)
      }
      // SQLite: no transaction (a read that upgrades to a write is refused as busy between processes);
      // the UPDATE's own condition picks one winner per row.
      if (db.isTransaction || context.engine === 'sqlite') return claim(db)
      return db.transaction().execute((tx) => claim(tx))
    },

    /** Records an attempt's outcome; only the node holding the claim may (a stale claimer changes nothing). */
    async finishAttempt(
      id: string,
      node: string,
      outcome:
        | { status: 'delivered'; statusCode: number | null }
        | { status: 'pending'; nextAttemptAt: string; error: string; statusCode: number | null }
        | { status: 'failed'; error: string; statusCode: number | null },
    ): Promise<boolean> {
      const now = nowIso(context)
      const result = await db
        .updateTable('notification_deliveries')
        .set({
          status: outcome.status,
          claimed_by: null,
          claimed_until: null,
          last_status_code: outcome.statusCode,
          ...(outcome.status === 'delivered'
            ? { delivered_at: now, last_error: null }
            : { last_error: outcome.error }),
          ...(outcome.status === 'pending' && { next_attempt_at: outcome.nextAttemptAt }),
        })
        .where('id', '=', id)
        .where('status', '=', 'sending')
        .where('claimed_by', '=', node)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },

    /** The instance's VAPID key pair; the first writer wins when several daemons start together. */
    async vapidKeys(
      create: () => { publicKey: string; privateEnvelope: string },
    ): Promise<{ publicKey: string; privateEnvelope: string }> {
      const read = () =>
        db.selectFrom('notification_vapid_keys').selectAll().where('id', '=', 'instance').executeTakeFirst()
      let row = await read()
      if (!row) {
        const made = create()
        await db
          .insertInto('notification_vapid_keys')
          .values({
            id: 'instance',
            public_key: made.publicKey,
            private_envelope: made.privateEnvelope,
            created_at: nowIso(context),
          })
          .onConflict((conflict) => conflict.column('id').doNothing())
          .execute()
        row = await read()
      }
      return { publicKey: row!.public_key, privateEnvelope: row!.private_envelope }
    },
  }
}

export type NotificationsRepository = ReturnType<typeof createNotificationsRepository>
