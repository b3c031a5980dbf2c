// The floor under the stdout → SSE figures on this machine: what one store round trip costs with nothing
// else running, one statement every 5 ms (the fake agent's line rate). Every line a client is shown has
// been committed first, so a p99 of the pipeline can be no better than the commit's own. On one of the
// Firecracker machines these goals were measured on, the idle PostgreSQL INSERT + commit alone had a p99 of
// 3.7-4.8 ms, and a bare SELECT 1 round trip (two process wake-ups) one of 1.2-2.4 ms: part of the spread
// between machines is there before any of Hangar's code runs.
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { freshSchema, percentile } from './bench-support.mjs'

const SAMPLES = 400
const GAP_MS = 5

const pause = () => new Promise((resolve) => setTimeout(resolve, GAP_MS))

/** Milliseconds each of SAMPLES calls of `once` took, GAP_MS apart. */
async function timeEach(once) {
  const samples = []
  for (let index = 0; index < SAMPLES; index++) {
    const started = performance.now()
    await once(index)
    samples.push(performance.now() - started)
    await pause()
  }
  return samples
}

/** PostgreSQL: a SELECT 1 round trip, and an INSERT committed (synchronous_commit as the server has it). */
async function postgresFloor() {
  const schema = await freshSchema('hangar_bench_floor')
  const client = new pg.Client({ connectionString: schema.url })
  await client.connect()
  try {
    await client.query('CREATE TABLE floor_probe (id integer PRIMARY KEY, data text NOT NULL)')
    const roundTrip = await timeEach(() => client.query({ name: 'floor_select', text: 'SELECT 1' }))
    const commit = await timeEach((index) =>
      client.query({
        name: 'floor_insert',
        text: 'INSERT INTO floor_probe (id, data) VALUES ($1, $2)',
        values: [index, '{"type":"text-delta","text":"hello"}'],
      }),
    )
    return { 'SELECT 1 round trip': roundTrip, 'INSERT + commit': commit }
  } finally {
    await client.end()
    await schema.drop()
  }
}

/** SQLite, as the daemon opens it (WAL, synchronous NORMAL): an INSERT committed on the calling thread. */
async function sqliteFloor(root) {
  const Database = createRequire(path.join(root, 'package.json'))('better-sqlite3')
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-floor-'))
  const db = new Database(path.join(dir, 'floor.db'))
  try {
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
    db.exec('CREATE TABLE floor_probe (id integer PRIMARY KEY, data text NOT NULL)')
    const insert = db.prepare('INSERT INTO floor_probe (id, data) VALUES (?, ?)')
    const commit = await timeEach((index) => insert.run(index, '{"type":"text-delta","text":"hello"}'))
    return { 'INSERT + commit': commit }
  } finally {
    db.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The floor of `engine` on this machine: each probe's samples (ms). */
export function storeFloor(root, engine) {
  return engine === 'postgres' ? postgresFloor() : sqliteFloor(root)
}

/** One line: each probe's p50 and p99. */
export function formatStoreFloor(floor) {
  const parts = Object.entries(floor).map(
    ([probe, samples]) =>
      `${probe} p50 ${percentile(samples, 50).toFixed(2)} ms  p99 ${percentile(samples, 99).toFixed(2)} ms`,
  )
  return `idle, one statement every ${GAP_MS} ms (n=${SAMPLES}): ${parts.join('; ')}`
}
