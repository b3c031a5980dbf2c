// The hot write of the store: every line an agent prints ends up as run events appended here, a batch per
// run per tick. Each engine gets fixed statements, prepared once and reused, whatever the batch size
// (a multi-row VALUES list sized to the batch would be a new statement for each size, and hits the
// engines' bound-parameter limits on a burst): on SQLite, inside one transaction, an INSERT of
// SQLITE_ROWS_PER_INSERT rows per that many rows and one of a row for the rest; on PostgreSQL one
// INSERT … SELECT FROM unnest(arrays) as a named (server-side prepared) statement
// (postgres-run-events-appender.ts). The batches of all runs asked for in one turn share that transaction
// or statement. A batch lands whole or not at all, so the
// writer never shows an event that a failed batch did not store.
//
// On SQLite a commit costs far more than a row (~85 µs against ~2 µs), so while streams keep the store
// busy, commits are at least SQLITE_COMMIT_INTERVAL_MS apart: the batches asked for in between (of every
// run, over several turns) wait for the next commit together. After a quiet spell a batch commits at once
// (on the same turn), so a lone line is not delayed. The writers show a batch only once its commit returned,
// so the wait adds to the latency of a busy stream (at most the interval), never to what a crash can lose.
// Under a burst (a commit of SQLITE_BURST_ROWS or more: tens of thousands of rows a second) the interval
// is SQLITE_BURST_COMMIT_INTERVAL_MS instead: the rows of twenty runs land on twenty places of the
// (run_id, seq) index, so a commit of a few rows per run writes a page per run for them; longer commits
// raised twenty runs' parse + persist from about 50k to 60k events/s. Streams at a human pace
// (twenty runs printing 4,000 lines a second commit some ten rows at a time) keep the short interval.
import type SqliteDatabase from 'better-sqlite3'
import type { Kysely } from 'kysely'
import type { EventEnvelope } from '../core/events.js'
import type { Database } from './schema.js'
import { createChunkedInsert } from './sqlite-chunked-insert.js'

/**
 * Stores `envelopes` (with `data[i]`, the JSON of envelope i's event fields) in one transaction. `now`: the
 * last batch of a stream (AppendOptions).
 */
export type RunEventsAppender = (
  envelopes: readonly EventEnvelope[],
  data: readonly string[],
  options?: AppendOptions,
) => Promise<void>

export interface AppendOptions {
  /**
   * The batch ends its stream (a run's end, a flush): nothing comes after it to share its commit, so it
   * is stored at once, with whatever waits for the same commit, instead of after the commit interval.
   */
  now?: boolean
}

/**
 * The rows of a commit (of all its batches, in order) go this many to a statement (sqlite-chunked-insert).
 * Counted with callgrind once warm, the store's whole appendEvents took 4-15 % fewer instructions per row
 * than with a statement per row (one run: 15 %; twenty runs, a few rows each per commit: 4-8 %).
 */
export const SQLITE_ROWS_PER_INSERT = 16

/** The least time between two commits of run events on SQLite while batches keep coming. */
export const SQLITE_COMMIT_INTERVAL_MS = 2
/** A commit of this many rows or more makes the next wait SQLITE_BURST_COMMIT_INTERVAL_MS. */
export const SQLITE_BURST_ROWS = 64
export const SQLITE_BURST_COMMIT_INTERVAL_MS = 6
/** A batch waiting for its commit slot goes at once when this many rows are waiting. */
export const SQLITE_MAX_WAITING_ROWS = 4096

/** The SQLite appender, with what commits its waiting batches now (before the store closes). */
export interface SqliteRunEventsAppender extends RunEventsAppender {
  commitWaiting(): Promise<void>
}

/** One batch asked for, and what settles its promise once it is stored (or not). */
export interface AppendRequest {
  envelopes: readonly EventEnvelope[]
  data: readonly string[]
  resolve: () => void
  reject: (error: unknown) => void
}

export function createSqliteRunEventsAppender(
  db: Kysely<Database>,
  sqlite: SqliteDatabase.Database,
  options: {
    commitIntervalMs?: number
    burstRows?: number
    burstCommitIntervalMs?: number
    maxWaitingRows?: number
    afterCommit?: () => void
  } = {},
): SqliteRunEventsAppender {
  const commitIntervalMs = options.commitIntervalMs ?? SQLITE_COMMIT_INTERVAL_MS
  const burstRows = options.burstRows ?? SQLITE_BURST_ROWS
  const burstCommitIntervalMs = options.burstCommitIntervalMs ?? SQLITE_BURST_COMMIT_INTERVAL_MS
  const maxWaitingRows = options.maxWaitingRows ?? SQLITE_MAX_WAITING_ROWS
  // Prepared on first use: the table exists only once the migrations have run.
  let statements:
    { all: (requests: readonly AppendRequest[]) => void; one: (request: AppendRequest) => void } | undefined
  const prepare = () => {
    const rows = createChunkedInsert(
      sqlite,
      'INSERT INTO run_events (run_id, seq, ts, type, data)',
      5,
      SQLITE_ROWS_PER_INSERT,
    )
    /** The rows of `requests` in order, chunks crossing batches. */
    const insertRows = (requests: readonly AppendRequest[]) => {
      const values = rows.values
      for (const { envelopes, data } of requests) {
        for (let index = 0; index < envelopes.length; index++) {
          const envelope = envelopes[index]!
          const at = rows.next()
          values[at] = envelope.runId
          values[at + 1] = envelope.seq
          values[at + 2] = envelope.ts
          values[at + 3] = envelope.type
          values[at + 4] = data[index]
        }
      }
      rows.end()
    }
    return {
      all: sqlite.transaction(insertRows),
      one: sqlite.transaction((request: AppendRequest) => insertRows([request])),
    }
  }
  // The batches of all runs that wait for the same commit share one transaction; should it fail, each
  // batch is retried alone, so that only its own fails.
  let pending: AppendRequest[] = []
  let pendingRows = 0
  let lastCommitAt = Number.NEGATIVE_INFINITY
  /** The least time from the last commit to the next: longer after a commit of a burst. */
  let interval = commitIntervalMs
  let timer: NodeJS.Timeout | undefined
  let draining: Promise<void> | undefined
  const take = () => {
    const requests = pending
    interval = pendingRows >= burstRows ? burstCommitIntervalMs : commitIntervalMs
    pending = []
    pendingRows = 0
    return requests
  }
  const store = (requests: readonly AppendRequest[]) => {
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
    lastCommitAt = performance.now()
    options.afterCommit?.()
  }
  const drain = async () => {
    clearTimeout(timer)
    timer = undefined
    // Through Kysely's one connection, so the batches wait for any transaction in progress on it instead
    // of landing inside it (and going with its rollback). The inserts are synchronous: nothing else runs
    // between their BEGIN and COMMIT, and what is taken is what was asked for up to that moment.
    let taken = false
    try {
      await db.connection().execute(async () => {
        taken = true
        const requests = take()
        if (requests.length > 0) store(requests)
      })
    } catch (error) {
      // The connection was not to be had (the store is closing): nothing was written.
      if (taken) return
      for (const request of take()) request.reject(error)
    }
  }
  const drainSoon = () => {
    clearTimeout(timer)
    timer = undefined
    const started = (draining = drain().finally(() => {
      if (draining === started) draining = undefined
    }))
  }
  // Twenty runs ending on one turn ask for twenty drains at once: one, queued, takes them all.
  let drainQueued = false
  const drainNow = () => {
    if (drainQueued) return
    drainQueued = true
    queueMicrotask(() => {
      drainQueued = false
      drainSoon()
    })
  }
  const append = ((envelopes, data, options) =>
    new Promise<void>((resolve, reject) => {
      pending.push({ envelopes, data, resolve, reject })
      pendingRows += envelopes.length
      if (pendingRows >= maxWaitingRows || options?.now) return drainNow()
      if (pending.length > 1) return
      const wait = lastCommitAt + interval - performance.now()
      if (wait <= 0) drainNow()
      else timer = setTimeout(drainSoon, wait)
    })) as SqliteRunEventsAppender
  append.commitWaiting = async () => {
    if (pending.length > 0) drainSoon()
    await draining
  }
  return append
}
