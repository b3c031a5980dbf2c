// The hot write of the store: every line an agent prints ends up as run events appended here, a batch per
// run per tick. Each engine gets one fixed statement, prepared once and reused, whatever the batch size
// (a multi-row VALUES list would be a new statement for each size, and hits the engines' bound-parameter
// limits on a burst): on SQLite one prepared INSERT run per row inside one transaction, on PostgreSQL one
// INSERT … SELECT FROM unnest(arrays) as a named (server-side prepared) statement. A batch lands whole or
// not at all, so the writer never shows an event that a failed batch did not store.
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

export function createSqliteRunEventsAppender(
  db: Kysely<Database>,
  sqlite: SqliteDatabase.Database,
): RunEventsAppender {
  // Prepared on first use: the table exists only once the migrations have run.
  let insertAll: ((envelopes: readonly EventEnvelope[], data: readonly string[]) => void) | undefined
  const prepare = () => {
    const insert = sqlite.prepare(SQLITE_INSERT)
    return sqlite.transaction((envelopes: readonly EventEnvelope[], data: readonly string[]) => {
      for (let index = 0; index < envelopes.length; index++) {
        const envelope = envelopes[index]!
        insert.run(envelope.runId, envelope.seq, envelope.ts, envelope.type, data[index])
      }
    })
  }
  return async (envelopes, data) => {
    // Through Kysely's one connection, so the batch waits for any transaction in progress on it instead of
    // landing inside it (and going with its rollback). The insert itself is synchronous: nothing else
    // runs between its BEGIN and COMMIT.
    await db.connection().execute(async () => {
      insertAll ??= prepare()
      insertAll(envelopes, data)
    })
  }
}

const POSTGRES_APPEND = {
  name: 'hangar_append_run_events',
  text:
    'INSERT INTO run_events (run_id, seq, ts, type, data) ' +
    'SELECT * FROM unnest($1::text[], $2::integer[], $3::text[], $4::text[], $5::text[])',
}

export function createPostgresRunEventsAppender(pool: pg.Pool): RunEventsAppender {
  return async (envelopes, data) => {
    const count = envelopes.length
    const runIds = new Array<string>(count)
    const seqs = new Array<number>(count)
    const timestamps = new Array<string>(count)
    const types = new Array<string>(count)
    for (let index = 0; index < count; index++) {
      const envelope = envelopes[index]!
      runIds[index] = envelope.runId
      seqs[index] = envelope.seq
      timestamps[index] = envelope.ts
      types[index] = envelope.type
    }
    // One statement is one implicit transaction: all rows or none.
    await pool.query({ ...POSTGRES_APPEND, values: [runIds, seqs, timestamps, types, data] })
  }
}
