import type { Kysely, Transaction } from 'kysely'
import type { Clock } from '../../core/ids.js'
import type { Redactor } from '../../core/redact.js'
import type { ProxyRequestsAppender } from '../proxy-requests-appender.js'
import type { RunEventsAppender } from '../run-events-appender.js'
import type { Database } from '../schema.js'

/** What every repository gets: a connection (or the current transaction) and the clock. */
export interface RepositoryContext {
  db: Kysely<Database> | Transaction<Database>
  clock: Clock
  /** For the few statements the engines spell differently (row locks, advisory locks). */
  engine: 'sqlite' | 'postgres'
  /** The runtime's one redactor: messages, audit details and action results are stored through it. */
  redactor: Redactor
  /** The fast run-event insert, outside a transaction only (inside one, events go with it through `db`). */
  appendRunEvents?: RunEventsAppender
  /** The request log's batch insert, outside a transaction only (inside one, rows go through `db`). */
  appendProxyRequests?: ProxyRequestsAppender
}

export function nowIso(context: RepositoryContext): string {
  return context.clock().toISOString()
}

export function toJson(value: unknown): string {
  return JSON.stringify(value ?? null)
}

export function fromJson<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T)
}

/** PostgreSQL returns count(*) as a string (bigint); SQLite as a number. */
export function toCount(value: string | number | bigint | null | undefined): number {
  return value === null || value === undefined ? 0 : Number(value)
}
