// SQLite WAL checkpoints off the event loop. A checkpoint copies the WAL back into the database file and
// syncs both to disk: on a busy disk that is tens of milliseconds, and SQLite runs it inside whichever
// commit crosses the threshold — on the daemon's one thread, where every streaming run waits for it. So
// once run events flow, a worker thread with its own connection checkpoints (PASSIVE: it never waits for
// nor blocks a reader or a writer) every CHECKPOINT_INTERVAL_MS, and the daemon's connection keeps only a
// far threshold as a safety net, should the worker fall behind or be gone.
import { Worker } from 'node:worker_threads'
import type SqliteDatabase from 'better-sqlite3'
import { sqliteDriverPath } from './sqlite-driver.js'

export const CHECKPOINT_INTERVAL_MS = 200
/** The daemon's own connection checkpoints only past this many WAL pages (SQLite's default is 1000). */
export const FALLBACK_AUTOCHECKPOINT_PAGES = 20_000

// CommonJS, evaluated: no file to find next to the compiled module (tests run the TypeScript sources).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
const db = new Database(workerData.file, { fileMustExist: true })
db.pragma('synchronous = NORMAL')
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)')
const run = () => {
  try {
    checkpoint.get()
  } catch {
    // Busy or gone: the next tick tries again, and the daemon's connection has its own threshold.
  }
}
const timer = setInterval(run, workerData.intervalMs)
parentPort.on('message', () => {
  clearInterval(timer)
  run()
  db.close()
  parentPort.close()
})
`

export interface WalCheckpointer {
  /** Starts the worker, if it is not running (cheap to call on every commit). */
  start(): void
  /** Ends the worker after a last checkpoint; resolves once its connection is closed. */
  stop(): Promise<void>
}

export function createWalCheckpointer(
  file: string,
  sqlite: SqliteDatabase.Database,
  options: { intervalMs?: number } = {},
): WalCheckpointer {
  let worker: Worker | undefined
  let exited: Promise<void> = Promise.resolve()
  return {
    start() {
      if (worker) return
      const started = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: {
          file,
          driver: sqliteDriverPath(),
          intervalMs: options.intervalMs ?? CHECKPOINT_INTERVAL_MS,
        },
      })
      worker = started
      // It never keeps a process alive: a CLI command that stored an event exits when it is done.
      started.unref()
      exited = new Promise<void>((resolve) => {
        started.once('exit', () => resolve())
        // Could not start or failed: the daemon's connection checkpoints at its own threshold instead.
        started.once('error', () => {
          if (sqlite.open) sqlite.pragma('wal_autocheckpoint = 1000')
        })
      })
      sqlite.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`)
    },
    async stop() {
      const running = worker
      if (!running) return
      // Waited for now: it must keep the process alive until its connection is closed.
      running.ref()
      running.postMessage('stop')
      await exited
      worker = undefined
    },
  }
}
