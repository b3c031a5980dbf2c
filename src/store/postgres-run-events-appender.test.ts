// The PostgreSQL run-event insert: one statement in flight; the batches asked for meanwhile (of every run)
// go together in the next one, each settled only once the statement that stored it returned, and a failing
// one fails alone. When announcing, the statement also notifies each run it stored, with its range.
import pg from 'pg'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runEventBatch as batch } from '../../test/helpers/run-event-batch.js'
import { freshPostgresUrl, makeTempDir } from '../../test/helpers/store-engines.js'
import type { EventEnvelope } from '../core/events.js'
import { appendStatement, createPostgresRunEventsAppender } from './postgres-run-events-appender.js'
import { openStore } from './store.js'

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/** Whether `promise` has settled by now (after a few turns), without waiting for it. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false
  promise.then(
    () => (done = true),
    () => (done = true),
  )
  for (let turn = 0; turn < 5; turn++) await nextTurn()
  return done
}

describe('PostgreSQL run event statements', () => {
  let pool: pg.Pool
  /** The [run, seq] rows of each statement sent, in order. */
  let statements: [string, number][][]
  /** The name of each statement sent, in order. */
  let names: string[]
  let releaseFirst: () => void
  /** A pool whose first statement waits for releaseFirst(), recording what each statement stores. */
  let recordingPool: pg.Pool

  beforeEach(async () => {
    pool = new pg.Pool({ connectionString: await freshPostgresUrl(), max: 4 })
    await pool.query(
      'CREATE TABLE run_events (run_id TEXT NOT NULL, seq INTEGER NOT NULL, ts TEXT NOT NULL, ' +
        'type TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (run_id, seq))',
    )
    // The statement stores only the events of runs that exist.
    await pool.query('CREATE TABLE runs (id TEXT PRIMARY KEY)')
    await pool.query("INSERT INTO runs (id) VALUES ('run_a'), ('run_b'), ('run_c')")
    statements = []
    names = []
    const first = new Promise<void>((resolve) => (releaseFirst = resolve))
    recordingPool = {
      query: async (config: pg.QueryConfig<[string, string]>) => {
        // Each column goes as one text, its values joined (newlines, and commas for seq).
        const [runIds, seqs] = config.values!
        const seqList = seqs.split(',').map(Number)
        statements.push(runIds.split('\n').map((runId, index) => [runId, seqList[index]!]))
        names.push(config.name!)
        if (statements.length === 1) await first
        return pool.query(config)
      },
    } as unknown as pg.Pool
  })
  afterEach(async () => {
    await pool.end()
  })

  const storedRows = async () =>
    (
      await pool.query<{ run_id: string; seq: number }>(
        'SELECT run_id, seq FROM run_events ORDER BY run_id, seq',
      )
    ).rows.map((row) => [row.run_id, row.seq])

  it('sends the batches asked for while a statement is in flight together in the next one', async () => {
    const append = createPostgresRunEventsAppender(recordingPool)
    const first = append(...batch('run_a', 1, 1))
    await nextTurn()
    // Turn by turn, several runs, while the first statement has not returned.
    const waiting = [append(...batch('run_b', 1, 2))]
    await nextTurn()
    waiting.push(append(...batch('run_c', 1, 1)))
    await nextTurn()
    expect(statements).toEqual([[['run_a', 1]]])
    expect(await settled(first)).toBe(false)
    releaseFirst()
    await Promise.all([first, ...waiting])
    expect(statements).toEqual([
      [['run_a', 1]],
      [
        ['run_b', 1],
        ['run_b', 2],
        ['run_c', 1],
      ],
    ])
    expect(await storedRows()).toEqual([
      ['run_a', 1],
      ['run_b', 1],
      ['run_b', 2],
      ['run_c', 1],
    ])
    // Nothing in flight any more: the next batch goes at once, alone.
    await append(...batch('run_a', 2, 1))
    expect(statements.at(-1)).toEqual([['run_a', 2]])
  })

  it('settles a waiting batch only once the statement that stores it has returned', async () => {
    const append = createPostgresRunEventsAppender(recordingPool)
    const first = append(...batch('run_a', 1, 1))
    await nextTurn()
    const second = append(...batch('run_b', 1, 1))
    expect(await settled(second)).toBe(false)
    expect(await storedRows()).toEqual([])
    releaseFirst()
    await Promise.all([first, second])
    expect(await storedRows()).toEqual([
      ['run_a', 1],
      ['run_b', 1],
    ])
  })

  it('stores what waits for the statement in flight before the pool may end', async () => {
    const append = createPostgresRunEventsAppender(recordingPool)
    const first = append(...batch('run_a', 1, 1))
    await nextTurn()
    const second = append(...batch('run_b', 1, 1))
    const allSettled = append.settled()
    expect(await settled(allSettled)).toBe(false)
    releaseFirst()
    await allSettled
    expect(await settled(Promise.all([first, second]))).toBe(true)
    expect(await storedRows()).toEqual([
      ['run_a', 1],
      ['run_b', 1],
    ])
  })

  // What announcing needs: once sent() resolves, what was stored unannounced has landed, however many
  // statements a steady stream sends after it.
  it('tells when the statements already sent have returned', async () => {
    const append = createPostgresRunEventsAppender(recordingPool)
    const first = append(...batch('run_a', 1, 1))
    await nextTurn()
    const sent = append.sent()
    expect(await settled(sent)).toBe(false)
    const later = append(...batch('run_b', 1, 1))
    releaseFirst()
    await sent
    expect(await storedRows()).toContainEqual(['run_a', 1])
    await Promise.all([first, later])
  })

  it('stores JSON that holds a newline between its tokens as the same JSON, each row in its place', async () => {
    const append = createPostgresRunEventsAppender(pool)
    const [envelopes, data] = batch('run_a', 1, 3)
    // Pretty-printed: the newlines are whitespace, not part of any value. (The writer's JSON has none.)
    await append(envelopes, [data[0]!, '{\n  "text": "two\\nlines"\n}', data[2]!])
    const stored = await pool.query<{ seq: number; data: string }>(
      'SELECT seq, data FROM run_events ORDER BY seq',
    )
    expect(stored.rows.map((row) => [row.seq, JSON.parse(row.data)])).toEqual([
      [1, { text: '#1' }],
      [2, { text: 'two\nlines' }],
      [3, { text: '#3' }],
    ])
  })

  it('commits a batch of streamed pieces alone without waiting for the WAL flush, and any other batch with it', async () => {
    const append = createPostgresRunEventsAppender(recordingPool)
    releaseFirst()
    await append(...batch('run_a', 1, 2))
    const [deltas, deltaData] = batch('run_a', 3, 1)
    const end = { v: 1, runId: 'run_a', seq: 4, ts: deltas[0]!.ts, type: 'run-end', status: 'succeeded' }
    await append([...deltas, end as unknown as EventEnvelope], [...deltaData, '{"status":"succeeded"}'])
    expect(names).toEqual(['hangar_append_run_events_no_wait', 'hangar_append_run_events'])
    expect((await storedRows()).map(([, seq]) => seq)).toEqual([1, 2, 3, 4])

    // What each statement makes of its transaction's commit.
    const client = await pool.connect()
    try {
      const commitOf = async (noWait: boolean, seq: number) => {
        await client.query('BEGIN')
        await client.query({
          ...appendStatement(noWait),
          values: ['run_b', `${seq}`, 'ts', 'text-delta', '{}'],
        })
        const setting = (await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit'))
          .rows[0]
        await client.query('COMMIT')
        return setting?.synchronous_commit
      }
      expect(await commitOf(true, 1)).toBe('off')
      expect(await commitOf(false, 2)).toBe('on')
      // The setting was the transaction's only.
      expect((await client.query('SHOW synchronous_commit')).rows[0].synchronous_commit).toBe('on')
    } finally {
      client.release()
    }
    expect((await storedRows()).filter(([run]) => run === 'run_b')).toEqual([
      ['run_b', 1],
      ['run_b', 2],
    ])
  })

  it('fails only the batch that cannot be stored, of those that went together', async () => {
    const append = createPostgresRunEventsAppender(recordingPool)
    const first = append(...batch('run_a', 1, 1))
    await nextTurn()
    // seq 1 of run_a again: a duplicate key once the first statement has landed.
    const duplicate = append(...batch('run_a', 1, 1))
    const fine = append(...batch('run_b', 1, 1))
    releaseFirst()
    await first
    await expect(duplicate).rejects.toThrow(/duplicate key/)
    await fine
    expect(await storedRows()).toEqual([
      ['run_a', 1],
      ['run_b', 1],
    ])
  })
})

describe('PostgreSQL run event notices', () => {
  it('notifies, in the statement that stores them, each run stored with its range, owner and conversation', async () => {
    const dataDir = await makeTempDir()
    const url = await freshPostgresUrl()
    const store = await openStore({ dataDir, url })
    const heard: unknown[] = []
    let heardOf: () => void = () => {}
    const stopListening = await store.notifications!.listen('run-events-test', {
      onPayload: (payload) => {
        heard.push(JSON.parse(payload))
        heardOf()
      },
    })
    try {
      const user = await store.users.create({ name: 'owner', role: 'owner' })
      const scope = store.forUser(user.id)
      const conversation = await scope.conversations.create({ title: 't', profile: 'builtin', project: '/p' })
      const inConversation = await scope.runs.create({
        agent: 'builtin',
        adapter: 'builtin',
        prompt: 'p',
        cwd: '/w',
        conversationId: conversation.id,
      })
      const alone = await scope.runs.create({ agent: 'builtin', adapter: 'builtin', prompt: 'p', cwd: '/w' })
      await scope.runs.appendEvents(batch(alone.id, 1, 1)[0])
      const stopAnnouncing = store.notifications!.announceRunEvents('run-events-test', 'node-a')
      const heardTwo = new Promise<void>((resolve) => (heardOf = () => heard.length === 2 && resolve()))
      await Promise.all([
        scope.runs.appendEvents(batch(inConversation.id, 1, 3)[0]),
        scope.runs.appendEvents(batch(alone.id, 2, 2)[0]),
      ])
      await heardTwo
      expect(heard).toEqual(
        expect.arrayContaining([
          {
            origin: 'node-a',
            userId: user.id,
            conversationId: conversation.id,
            runId: inConversation.id,
            fromSeq: 1,
            toSeq: 3,
          },
          { origin: 'node-a', userId: user.id, conversationId: null, runId: alone.id, fromSeq: 2, toSeq: 3 },
        ]),
      )
      expect(heard).toHaveLength(2)
      // A statement that fails (seq 3 is stored already) notifies nothing; after stop, nothing either.
      await expect(scope.runs.appendEvents(batch(alone.id, 3, 1)[0])).rejects.toThrow(/duplicate key/)
      stopAnnouncing()
      await scope.runs.appendEvents(batch(alone.id, 4, 1)[0])
      const heardMarker = new Promise<void>((resolve) => (heardOf = () => resolve()))
      await store.notifications!.notify('run-events-test', JSON.stringify({ marker: true }))
      await heardMarker
      expect(heard.slice(2)).toEqual([{ marker: true }])
    } finally {
      await stopListening()
      await store.close()
    }
  })
})

describe('PostgreSQL run events and the pool', () => {
  it('stores run events while transactions hold every connection of the pool', async () => {
    const dataDir = await makeTempDir()
    const store = await openStore({ dataDir, url: await freshPostgresUrl(), poolSize: 2 })
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const holding: Promise<unknown>[] = []
    try {
      const user = await store.users.create({ name: 'owner', role: 'owner' })
      const scope = store.forUser(user.id)
      const run = await scope.runs.create({ agent: 'builtin', adapter: 'builtin', prompt: 'p', cwd: '/w' })
      // Twenty runs starting at once do this to a pool: every connection inside a transaction.
      let begun = 0
      const allBegun = new Promise<void>((resolve) => {
        for (let index = 0; index < 2; index++)
          holding.push(
            store.transaction(async (repositories) => {
              await repositories.users.findById(user.id)
              if (++begun === 2) resolve()
              await gate
            }),
          )
      })
      await allBegun
      // An agent's lines go on to their clients meanwhile: they do not wait for a pool connection (a
      // generous bound; stored, they take milliseconds).
      const outcome = await Promise.race([
        scope.runs.appendEvents(batch(run.id, 1, 3)[0]).then(() => 'stored'),
        new Promise((resolve) => setTimeout(resolve, 10_000, 'waited for the pool')),
      ])
      expect(outcome).toBe('stored')
    } finally {
      release()
      await Promise.all(holding)
      await store.close()
    }
  })
})

describe('PostgreSQL store close', () => {
  it('closes twice, at once or one after the other, without an error', async () => {
    const store = await openStore({ dataDir: await makeTempDir(), url: await freshPostgresUrl() })
    const user = await store.users.create({ name: 'owner', role: 'owner' })
    const run = await store
      .forUser(user.id)
      .runs.create({ agent: 'builtin', adapter: 'builtin', prompt: 'p', cwd: '/w' })
    await store.forUser(user.id).runs.appendEvents(batch(run.id, 1, 1)[0])
    await Promise.all([store.close(), store.close()])
    await store.close()
  })
})
