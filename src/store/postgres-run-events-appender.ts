// The run-event insert on PostgreSQL: one INSERT … SELECT FROM unnest(arrays), a named (server-side
// prepared) statement, for the batches of every run that asked (see run-events-appender.ts).
//
// Each statement is a round trip and a commit, and the writers ask for a batch per run per turn: twenty
// streaming runs asked for about one statement per three events, each paying the daemon's socket write and
// a backend's parse, execute and commit on the same cores as the agents. So at most one statement of
// this appender is in flight: the batches asked for meanwhile (of every run) wait for it to return and
// then go together in the next one (group commit). A lone batch still goes at once, and a waiting one waits
// at most one round trip; a writer is shown its batch only once the statement that stored it returned.
//
// When the daemons sharing the database listen for each other's events (announce), the same statement
// also NOTIFYs, per run it stored, the seq range it stored: the notice is committed with the rows, in
// commit order, and never sent for rows that did not land nor lost to a crash between the commit and a
// NOTIFY of its own (which was also a second round trip and commit per batch).
import type pg from 'pg'
import type { AppendRequest, RunEventsAppender } from './run-events-appender.js'

// run_events has no foreign key here (migration 0019): a run's events arriving after the run was deleted
// are skipped, as its stored events were deleted with it.
//
// Each column goes as one text, its values joined by newlines, and is split again by string_to_array. As
// text[] parameters, node-postgres quoted every value and escaped each of its quotes and backslashes (a
// regex replace per value, in JavaScript: the JSON of an event is full of quotes), and the server undid
// that in array_in: a split on a character no value holds costs neither. None does: ids, timestamps and
// event types are Hangar's own; `data` is JSON text, in which a newline is whitespace between tokens
// (inside a string it is escaped), so one would be replaced by a space (dataColumn).
const rowsOf = (noWait: boolean) =>
  "SELECT * FROM unnest(string_to_array($1, E'\\n'), string_to_array($2, ',')::integer[], " +
  "string_to_array($3, E'\\n'), string_to_array($4, E'\\n'), string_to_array($5, E'\\n')) " +
  `AS row(run_id, seq, ts, type, data) WHERE ${noWait ? NO_WAIT_FOR_WAL_FLUSH : ''}` +
  'EXISTS (SELECT 1 FROM runs WHERE runs.id = row.run_id)'

/**
 * The events whose commit need not wait for the WAL to reach the disk: the pieces of a stream (text and
 * reasoning as it is typed, a workspace set-up's output) and a proxied request's usage (its request-log row
 * is written behind already). PostgreSQL then keeps them as SQLite's `synchronous = NORMAL` keeps every
 * commit: through a crash of the daemon and of PostgreSQL's process; a crash of its machine may lose what
 * the WAL writer had not flushed yet (600 ms at most, by default). Everything else (a run's start and end,
 * tool calls, approvals, errors) waits for the flush before it is shown, and that flush takes every commit
 * before it to the disk too: a run's stored stream is durable once its end is. With twenty runs streaming,
 * the flush of each statement was most of an event's way from stdout to an SSE client (p99 11-18 ms against
 * ~7 ms without it; scripts/bench-events.mjs, issue 19).
 */
export const STREAMED_EVENT_TYPES: ReadonlySet<string> = new Set([
  'text-delta',
  'reasoning-delta',
  'workspace-setup-delta',
  'usage',
])
// An uncorrelated subquery is an InitPlan: the setting is made once, before any row is read (a one-time
// filter), and holds to the end of the statement's own (implicit) transaction: its commit.
const NO_WAIT_FOR_WAL_FLUSH = "(SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL AND "

/** The `data` values of a statement as one text (see rowsOf): one newline between each two, and no other. */
function dataColumn(data: readonly string[]): string {
  const flat = data.some((json) => json.includes('\n'))
    ? data.map((json) => json.replaceAll('\n', ' '))
    : data
  return flat.join('\n')
}

/** The statement that inserts the rows; `noWait`: its commit does not wait for the WAL flush. */
export function appendStatement(noWait: boolean): { name: string; text: string } {
  return {
    name: `hangar_append_run_events${noWait ? '_no_wait' : ''}`,
    text: `INSERT INTO run_events (run_id, seq, ts, type, data) ${rowsOf(noWait)}`,
  }
}

// The notice is the cluster live source's: {origin, userId, conversationId, runId, fromSeq, toSeq}, the
// owner and conversation read from the run's row.
function appendAndAnnounceStatement(noWait: boolean): { name: string; text: string } {
  return {
    name: `hangar_append_announce_run_events${noWait ? '_no_wait' : ''}`,
    text:
      `WITH stored AS (INSERT INTO run_events (run_id, seq, ts, type, data) ${rowsOf(noWait)} ` +
      'RETURNING run_id, seq), ' +
      'ranges AS (SELECT run_id, min(seq) AS from_seq, max(seq) AS to_seq FROM stored GROUP BY run_id) ' +
      "SELECT pg_notify($6, json_build_object('origin', $7::text, 'userId', runs.user_id, " +
      "'conversationId', runs.conversation_id, 'runId', runs.id, 'fromSeq', ranges.from_seq, " +
      "'toSeq', ranges.to_seq)::text) FROM ranges JOIN runs ON runs.id = ranges.run_id",
  }
}
const APPEND = { wait: appendStatement(false), noWait: appendStatement(true) }
const APPEND_AND_ANNOUNCE = {
  wait: appendAndAnnounceStatement(false),
  noWait: appendAndAnnounceStatement(true),
}

/**
 * How many statements of one appender may be in flight at once. More than one gained nothing measurable
 * and, with notices, is worse: a transaction that NOTIFYs holds a database-wide lock through its commit,
 * so concurrent ones queue there (20 runs on two shared, busy cores: stdout → SSE p50 ~31 ms against
 * ~8 ms with one).
 */
export const MAX_STATEMENTS_IN_FLIGHT = 1

/** The PostgreSQL appender, and how it also tells the other daemons of what it stored. */
export interface PostgresRunEventsAppender extends RunEventsAppender {
  /**
   * From now on each statement also NOTIFYs `channel` (already scoped to the schema) of every run it
   * stored, from `origin`; returns what stops that.
   */
  announce(channel: string, origin: string): () => void
  /** Resolves once every batch asked for so far is stored (or failed): before the pool ends. */
  settled(): Promise<void>
  /**
   * Resolves once the statements sent so far have returned (not those sent later, unlike settled(), which a
   * steady stream of batches keeps waiting): after announce(), what was stored unannounced has landed.
   */
  sent(): Promise<void>
}

export function createPostgresRunEventsAppender(pool: pg.Pool): PostgresRunEventsAppender {
  let announcing: { channel: string; origin: string } | undefined
  const statements = new Set<Promise<unknown>>()
  // One statement is one implicit transaction: all its rows (and notices) or none.
  const insert = async (requests: readonly AppendRequest[]) => {
    const runIds: string[] = []
    const seqs: number[] = []
    const timestamps: string[] = []
    const types: string[] = []
    const data: string[] = []
    let noWait = true
    for (const request of requests) {
      for (let index = 0; index < request.envelopes.length; index++) {
        const envelope = request.envelopes[index]!
        runIds.push(envelope.runId)
        seqs.push(envelope.seq)
        timestamps.push(envelope.ts)
        types.push(envelope.type)
        data.push(request.data[index]!)
        if (noWait && !STREAMED_EVENT_TYPES.has(envelope.type)) noWait = false
      }
    }
    const rows = [
      runIds.join('\n'),
      seqs.join(','),
      timestamps.join('\n'),
      types.join('\n'),
      dataColumn(data),
    ]
    const statement = pool.query(
      announcing
        ? {
            ...(noWait ? APPEND_AND_ANNOUNCE.noWait : APPEND_AND_ANNOUNCE.wait),
            values: [...rows, announcing.channel, announcing.origin],
          }
        : { ...(noWait ? APPEND.noWait : APPEND.wait), values: rows },
    )
    statements.add(statement)
    try {
      await statement
    } finally {
      statements.delete(statement)
    }
  }

  let waiting: AppendRequest[] = []
  let inFlight = 0
  /** The sending loops going on: each ends when it finds nothing waiting. */
  const sending = new Set<Promise<void>>()
  // The batches that waited go in one statement; should it fail, each is retried alone, so that only its
  // own fails. Then whatever was asked for meanwhile goes next.
  const sendWaiting = async (): Promise<void> => {
    const requests = waiting
    waiting = []
    if (requests.length === 0) {
      inFlight--
      return
    }
    try {
      await insert(requests)
      for (const request of requests) request.resolve()
    } catch (error) {
      if (requests.length === 1) requests[0]!.reject(error)
      else
        await Promise.all(requests.map((request) => insert([request]).then(request.resolve, request.reject)))
    }
    return sendWaiting()
  }

  const append = ((envelopes, data) =>
    new Promise<void>((resolve, reject) => {
      waiting.push({ envelopes, data, resolve, reject })
      if (waiting.length > 1 || inFlight >= MAX_STATEMENTS_IN_FLIGHT) return
      inFlight++
      // After this turn's other batches have been asked for: they go in the same statement.
      const loop = new Promise<void>((done) => queueMicrotask(() => void sendWaiting().then(done)))
      sending.add(loop)
      void loop.then(() => sending.delete(loop))
    })) as PostgresRunEventsAppender
  append.settled = async () => {
    while (sending.size > 0) await Promise.all(sending)
  }
  append.sent = async () => {
    await Promise.allSettled([...statements])
  }
  append.announce = (channel, origin) => {
    const current = { channel, origin }
    announcing = current
    return () => {
      if (announcing === current) announcing = undefined
    }
  }
  return append
}
