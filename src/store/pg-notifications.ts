// PostgreSQL LISTEN/NOTIFY for the daemons sharing one database: a payload sent on a channel reaches every
// listening connection, the sender's included, in commit order. Listening holds one dedicated connection;
// when it drops, it reconnects with backoff and reports a gap (what was sent meanwhile is lost to it).
import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import type pg from 'pg'
import { pgDriver } from './pg-driver.js'
import type { PostgresRunEventsAppender } from './postgres-run-events-appender.js'
import type { Database } from './schema.js'

export interface StoreNotifications {
  /** Sends `payload` (at most ~7900 bytes) on `channel`. */
  notify(channel: string, payload: string): Promise<void>
  /**
   * From now on every batch of run events the store appends also sends, in the statement that stores it,
   * `{origin, userId, conversationId, runId, fromSeq, toSeq}` on `channel` for each run in it; returns
   * what stops that.
   */
  announceRunEvents(channel: string, origin: string): () => void
  /** Resolves once the run-event statements sent so far have returned (announced or not). */
  runEventsSent(): Promise<void>
  /**
   * Calls `onPayload` for each payload on `channel`, in order; `onGap` after a lost connection came back.
   * Resolves once listening; returns the function that stops.
   */
  listen(
    channel: string,
    handlers: {
      onPayload: (payload: string) => void
      onGap?: () => void
      onError?: (error: unknown) => void
    },
  ): Promise<() => Promise<void>>
}

const MAX_BACKOFF_MS = 10_000

export function createPgNotifications(
  url: string,
  db: Kysely<Database>,
  schema: string,
  runEvents: Pick<PostgresRunEventsAppender, 'announce' | 'sent'>,
): StoreNotifications {
  // One namespace per schema; PostgreSQL keeps the first 63 bytes of a channel name.
  const scoped = (channel: string) => `${channel}.${schema}`.slice(0, 63)
  return {
    async notify(channel, payload) {
      await sql`select pg_notify(${scoped(channel)}, ${payload})`.execute(db)
    },

    announceRunEvents: (channel, origin) => runEvents.announce(scoped(channel), origin),
    runEventsSent: () => runEvents.sent(),

    async listen(unscoped, handlers) {
      const channel = scoped(unscoped)
      let client: pg.Client | undefined
      let stopped = false
      let backoffMs = 250
      let retry: NodeJS.Timeout | undefined

      const connect = async (): Promise<void> => {
        const next = new (pgDriver().Client)({ connectionString: url })
        next.on('notification', (message) => {
          if (message.channel === channel) handlers.onPayload(message.payload ?? '')
        })
        const lost = (error?: unknown) => {
          if (client !== next || stopped) return
          client = undefined
          // Told even of a quiet end: a listener may rely on hearing that it is missing payloads.
          handlers.onError?.(error ?? new Error('the notification connection ended'))
          next.end().catch(() => {})
          scheduleReconnect()
        }
        next.on('error', lost)
        next.on('end', () => lost())
        await next.connect()
        await next.query(`LISTEN ${pgDriver().escapeIdentifier(channel)}`)
        client = next
        backoffMs = 250
      }

      const scheduleReconnect = () => {
        retry = setTimeout(() => {
          connect().then(
            () => handlers.onGap?.(),
            (error: unknown) => {
              handlers.onError?.(error)
              backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS)
              if (!stopped) scheduleReconnect()
            },
          )
        }, backoffMs)
        retry.unref()
      }

      await connect()
      return async () => {
        stopped = true
        clearTimeout(retry)
        const current = client
        client = undefined
        await current?.end().catch(() => {})
      }
    },
  }
}
