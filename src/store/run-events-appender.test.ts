// The pace of SQLite commits of run events: while batches keep coming, those of several turns share one
// commit (a commit costs far more than a row); after a quiet spell a batch commits at once; a pile of
// waiting rows, the last batch of a stream, or a store closing, commits without waiting for the slot;
// after a burst the slots are further apart. A long batch goes in chunks of rows per statement: every row lands with its own fields,
// and a batch that fails in any chunk fails whole, without the others of its commit.
import type SqliteDatabase from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runEventBatch as batch } from '../../test/helpers/run-event-batch.js'
import { createSqliteRunEventsAppender, SQLITE_ROWS_PER_INSERT } from './run-events-appender.js'
import type { Database } from './schema.js'
import { openSqliteFile } from './sqlite-driver.js'

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

describe('SQLite run event commits', () => {
  let sqlite: SqliteDatabase.Database
  let db: Kysely<Database>
  const storedSeqs = (runId: string) =>
    sqlite.prepare('SELECT seq FROM run_events WHERE run_id = ? ORDER BY seq').pluck().all(runId) as number[]

  beforeEach(() => {
    sqlite = openSqliteFile(':memory:')
    sqlite.exec(
      'CREATE TABLE run_events (run_id TEXT NOT NULL, seq INTEGER NOT NULL, ts TEXT NOT NULL, ' +
        'type TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (run_id, seq))',
    )
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) })
  })
  afterEach(async () => {
    await db.destroy()
  })

  it('commits the batches of several turns together while batches keep coming', async () => {
    const append = createSqliteRunEventsAppender(db, sqlite, { commitIntervalMs: 300 })
    await append(...batch('run_a', 1, 1))
    // Turn by turn, as a busy stream asks: each waits for the slot after the last commit, together.
    let turn = 0
    const storedOnTurn: number[] = []
    const asked: Promise<void>[] = []
    for (let seq = 2; seq <= 4; seq++) {
      asked.push(append(...batch('run_a', seq, 1)).then(() => void storedOnTurn.push(turn)))
      asked.push(append(...batch('run_b', seq, 1)).then(() => void storedOnTurn.push(turn)))
      await nextTurn()
      turn++
    }
    expect(storedSeqs('run_a')).toEqual([1])
    await Promise.all(asked)
    expect(storedSeqs('run_a')).toEqual([1, 2, 3, 4])
    expect(storedSeqs('run_b')).toEqual([2, 3, 4])
    expect(new Set(storedOnTurn).size).toBe(1)
    expect(storedOnTurn[0]).toBeGreaterThanOrEqual(3)
  })

  it('commits a batch at once after a quiet spell, and when too many rows wait', async () => {
    const append = createSqliteRunEventsAppender(db, sqlite, { commitIntervalMs: 200, maxWaitingRows: 10 })
    const beforeNextTurn = (stored: Promise<void>) =>
      Promise.race([stored.then(() => 'stored'), nextTurn().then(() => 'next turn')])
    expect(await beforeNextTurn(append(...batch('run_a', 1, 1)))).toBe('stored')
    await new Promise((resolve) => setTimeout(resolve, 250))
    expect(await beforeNextTurn(append(...batch('run_a', 2, 1)))).toBe('stored')
    // Within the interval, but the waiting rows reach the cap.
    const small = append(...batch('run_a', 3, 1))
    expect(await beforeNextTurn(append(...batch('run_a', 4, 10)))).toBe('stored')
    await small
    expect(storedSeqs('run_a')).toEqual(Array.from({ length: 13 }, (_, index) => index + 1))
  })

  it('commits the last batch of a stream at once, with the batches waiting for the same commit', async () => {
    const append = createSqliteRunEventsAppender(db, sqlite, { commitIntervalMs: 60_000 })
    await append(...batch('run_a', 1, 1))
    // Within the interval: these wait for the slot, a minute away.
    const waitingA = append(...batch('run_a', 2, 1))
    const waitingB = append(...batch('run_b', 1, 1))
    await nextTurn()
    expect(storedSeqs('run_a')).toEqual([1])
    const [envelopes, data] = batch('run_a', 3, 2)
    await append(envelopes, data, { now: true })
    await Promise.all([waitingA, waitingB])
    expect(storedSeqs('run_a')).toEqual([1, 2, 3, 4])
    expect(storedSeqs('run_b')).toEqual([1])
  })

  it('spaces the commits after a burst further apart, and goes back to the short interval after it', async () => {
    const append = createSqliteRunEventsAppender(db, sqlite, {
      commitIntervalMs: 1,
      burstRows: 5,
      burstCommitIntervalMs: 60_000,
    })
    // Five rows at once: a burst, stored at once (after a quiet spell).
    await append(...batch('run_a', 1, 5))
    const afterBurst = append(...batch('run_a', 6, 1))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(storedSeqs('run_a')).toHaveLength(5)
    await append.commitWaiting()
    await afterBurst
    // That commit stored one row: the next batch waits 1 ms, not a minute.
    await append(...batch('run_a', 7, 1))
    expect(storedSeqs('run_a')).toHaveLength(7)
  })

  it('stores every row of the batches of a commit, each with its own fields, chunks crossing batches', async () => {
    const append = createSqliteRunEventsAppender(db, sqlite, { commitIntervalMs: 60_000 })
    await append(...batch('run_a', 1, 1))
    // One commit: a batch of two whole chunks and a remainder, then batches of other runs that share a chunk.
    const long = SQLITE_ROWS_PER_INSERT * 2 + 5
    const waiting = [
      append(...batch('run_a', 2, long)),
      append(...batch('run_b', 1, 7)),
      append(...batch('run_c', 1, SQLITE_ROWS_PER_INSERT - 1)),
    ]
    await append.commitWaiting()
    await Promise.all(waiting)
    const rows = sqlite.prepare('SELECT run_id, seq, data FROM run_events ORDER BY run_id, seq').all()
    const expected = (runId: string, count: number) =>
      Array.from({ length: count }, (_, index) => ({
        run_id: runId,
        seq: index + 1,
        data: JSON.stringify({ text: `#${index + 1}` }),
      }))
    expect(rows).toEqual([
      ...expected('run_a', long + 1),
      ...expected('run_b', 7),
      ...expected('run_c', SQLITE_ROWS_PER_INSERT - 1),
    ])
  })

  it('fails a batch whose row clashes inside a chunk, and stores the other batches of its commit', async () => {
    const append = createSqliteRunEventsAppender(db, sqlite, { commitIntervalMs: 60_000 })
    await append(...batch('run_a', 20, 1))
    // run_a's second batch holds seq 20 again, in its second chunk; run_b's shares the commit.
    const clashing = append(...batch('run_a', 1, SQLITE_ROWS_PER_INSERT * 2))
    const other = append(...batch('run_b', 1, SQLITE_ROWS_PER_INSERT + 1))
    await append.commitWaiting()
    await expect(clashing).rejects.toThrow(/UNIQUE/)
    await other
    expect(storedSeqs('run_a')).toEqual([20])
    expect(storedSeqs('run_b')).toHaveLength(SQLITE_ROWS_PER_INSERT + 1)
  })

  it('commits what waits for its slot when asked to (before the store closes)', async () => {
    const append = createSqliteRunEventsAppender(db, sqlite, { commitIntervalMs: 60_000 })
    await append(...batch('run_a', 1, 1))
    const waiting = append(...batch('run_a', 2, 2))
    await nextTurn()
    expect(storedSeqs('run_a')).toEqual([1])
    await append.commitWaiting()
    await waiting
    expect(storedSeqs('run_a')).toEqual([1, 2, 3])
  })
})
