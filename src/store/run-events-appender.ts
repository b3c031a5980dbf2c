// The hot write of the store: every line an agent prints ends up as run events appended here, a batch per
// run per tick. Each engine gets one fixed statement, prepared once and reused, whatever the batch size
// (a multi-row VALUES list would be a new statement for each size, and hits the engines' bound-parameter
// limits on a burst): on SQLite one prepared INSERT run per row inside one transaction, on PostgreSQL one
// INSERT … SELECT FROM unnest(arrays) as a named (server-side prepared) statement. The batches of all runs
// asked for in one turn share that transaction or statement. A batch lands whole or not at all, so the
// writer never shows an event that a failed batch did not store.
import type SqliteDatabase from 'better-sqlite3'
import type { Kysely } from 'kysely'
import type pg from 'pg'
import type { EventEnvelope } from '../core/events.js'
import type { Database } from './schema.js'

/** Stores `envelopes` (with `data[i]`, the JSON of envelope i's event fields) in one transaction. */
export type RunEventsAppender = (
  envelopes: readonly EventEnvelope[],
  data: readonly string[],
) => Promise<void>

const SQLITE_INSERT = 'INSERT INTO run_events (run_id, seq, ts, type, data) VALUES (?, ?, ?, ?, ?)'

interface AppendRequest {
  envelopes: readonly EventEnvelope[]
  data: readonly string[]
  resolve: () => void
  reject: (error: unknown) => void
}

export function createSqliteRunEventsAppender(
  db: Kysely<Database>,
  sqlite: SqliteDatabase.Database,
): RunEventsAppender {
  // Prepared on first use: the table exists only once the migrations have run.
  let statements:
    { all: (requests: readonly AppendRequest[]) => void; one: (request: AppendRequest) => void } | undefined
  const prepare = () => {
    const insert = sqlite.prepare(SQLITE_INSERT)
    const insertRows = ({ envelopes, data }: AppendRequest) => {
      for (let index = 0; index < envelopes.length; index++) {
        const envelope = envelopes[index]!
        insert.run(envelope.runId, envelope.seq, envelope.ts, envelope.type, data[index])
      }
    }
    return {
      all: sqlite.transaction((requests: readonly AppendRequest[]) => requests.forEach(insertRows)),
      one: sqlite.transaction(insertRows),
    }
  }
  // The batches of all runs that ask during one turn (the writers' batches of a turn are cut together)
  // share one transaction; should it fail, each batch is retried alone, so that only its own fails.
  let pending: AppendRequest[] = []
  const store = () => {
    const requests = pending
    pending = []
    try {
      statements ??= prepare()
      statements.all(requests)
      for (const request of requests) request.resolve()
    } catch (error) {
      for (const request of requests) {
        try {
          if (!statements) throw error
          statements.one(request)
          request.resolve()
        } catch (error) {
          request.reject(error)
        }
      }
    }
  }
  const drain = async () => {
    // Through Kysely's one connection, so the batches wait for any transaction in progress on it instead
    // of landing inside it (and going with its rollback). The inserts are synchronous: nothing else runs
    // between their BEGIN and COMMIT.
    let taken = false
    try {
      await db.connection().execute(async () => {
        taken = true
        store()
      })
    } catch (error) {
      // The connection was not to be had (the store is closing): nothing was written.
      if (taken) return
      const requests = pending
      pending = []
      for (const request of requests) request.reject(error)
    }
  }
  return (envelopes, data) =>
    new Promise<void>((resolve, reject) => {
      pending.push({ envelopes, data, resolve, reject })
      if (pending.length === 1) queueMicrotask(() => void drain())
    })
}

const POSTGRES_APPEND = {
  name: 'hangar_append_run_events',
  text:
    'INSERT INTO run_events (run_id, seq, ts, type, data) ' +
    'SELECT * FROM unnest($1::text[], $2::integer[], $3::text[], $4::text[], $5::text[])',
}

export function createPostgresRunEventsAppender(pool: pg.Pool): RunEventsAppender {
  // One statement is one implicit transaction: all its rows or none.
  const insert = async (requests: readonly AppendRequest[]) => {
    const runIds: string[] = []
    const seqs: number[] = []
    const timestamps: string[] = []
    const types: string[] = []
    const data: string[] = []
    for (const request of requests) {
      for (let index = 0; index < request.envelopes.length; index++) {
        const envelope = request.envelopes[index]!
        runIds.push(envelope.runId)
        seqs.push(envelope.seq)
        timestamps.push(envelope.ts)
        types.push(envelope.type)
        data.push(request.data[index]!)
      }
    }
    await pool.query({ ...POSTGRES_APPEND, values: [runIds, seqs, timestamps, types, data] })
  }
  // As on SQLite: the batches of one turn go in one statement; should it fail, each is retried alone.
  let pending: AppendRequest[] = []
  const drain = async () => {
    const requests = pending
    pending = []
    try {
      await insert(requests)
      for (const request of requests) request.resolve()
    } catch (error) {
      if (requests.length === 1) return requests[0]!.reject(error)
      await Promise.all(requests.map((request) => insert([request]).then(request.resolve, request.reject)))
    }
  }
  return (envelopes, data) =>
    new Promise<void>((resolve, reject) => {
      pending.push({ envelopes, data, resolve, reject })
      if (pending.length === 1) queueMicrotask(() => void drain())
    })
}
