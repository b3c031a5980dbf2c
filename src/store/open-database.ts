// Opens the store on one of its two engines: embedded SQLite (default, `<data-dir>/hangar.db`, WAL) or
// PostgreSQL (`postgres://…`). Failures are AppErrors that say what, where and how to fix — and never
// echo a password from the URL.

import { constants as fsConstants } from 'node:fs'
import { access, chmod, mkdir, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type SqliteDatabase from 'better-sqlite3'
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely'
import type pg from 'pg'
import { AppError } from '../core/errors.js'
import {
  createPostgresProxyRequestsAppender,
  createSqliteProxyRequestsAppender,
  type ProxyRequestsAppender,
} from './proxy-requests-appender.js'
import { pgDriver } from './pg-driver.js'
import { createPgNotifications, type StoreNotifications } from './pg-notifications.js'
import { createPostgresRunEventsAppender } from './postgres-run-events-appender.js'
import { createSqliteRunEventsAppender, type RunEventsAppender } from './run-events-appender.js'
import type { Database } from './schema.js'
import { createCommitWatch, LOOK_EVERY_MS } from './sqlite-commit-watch.js'
import { withStatementCache } from './sqlite-statement-cache.js'
import { createWalCheckpointer } from './wal-checkpointer.js'
import { openSqliteFile } from './sqlite-driver.js'

export type Engine = 'sqlite' | 'postgres'

export interface DatabaseHandle {
  db: Kysely<Database>
  engine: Engine
  /** Where the store is, safe to print: a file path, or the URL without its password. */
  location: string
  /** LISTEN/NOTIFY between the processes sharing the database (PostgreSQL only). */
  notifications?: StoreNotifications
  /** The run-event insert on the engine's own driver, one reused statement (outside transactions). */
  appendRunEvents: RunEventsAppender
  /** The request log's batch insert on the engine's own driver, one reused statement (outside transactions). */
  appendProxyRequests: ProxyRequestsAppender
  /**
   * A number that changes whenever another connection (another process: a CLI command, a second daemon)
   * commits to the database — SQLite's `data_version`, read without a query through Kysely. Undefined on
   * PostgreSQL, where `notifications` tells what changed.
   */
  writesByOthers?: (fresh?: boolean) => number
  close(): Promise<void>
}

export interface OpenDatabaseOptions {
  /** `postgres://…`, `postgresql://…`, `sqlite:<path>`; absent = SQLite in the data dir. */
  url?: string | undefined
  dataDir: string
  /** PostgreSQL pool size; several daemons may share one server. */
  poolSize?: number
  connectTimeoutMs?: number
}

export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return '<unparseable database URL>'
  }
}

export async function ensureDataDir(dataDir: string): Promise<void> {
  let mode: number
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o700 })
    await access(dataDir, fsConstants.W_OK | fsConstants.X_OK)
    mode = (await stat(dataDir)).mode
  } catch (error) {
    throw new AppError(
      'data_dir_unwritable',
      `data dir ${dataDir} is not writable (${describeFsError(error)})`,
      {
        hint: 'choose another with --data-dir or HANGAR_DATA_DIR, or fix its permissions',
        cause: error,
      },
    )
  }
  // Another user could put files there before Hangar does, or swap its own (a daemon.json pointing the CLI,
  // and the owner token it sends, at their process), sticky bit or not.
  if ((mode & 0o002) !== 0)
    throw new AppError(
      'data_dir_unwritable',
      `refusing the data dir ${dataDir}: every user of this machine may write in it, and could replace what Hangar keeps there`,
      {
        hint: `make it yours alone with chmod 700 ${dataDir}, or choose another with --data-dir or HANGAR_DATA_DIR`,
      },
    )
}

/**
 * The SQLite store holds password hashes, sessions, transcripts and the audit log: its owner's alone, whatever
 * the umask or the directory it is in (a `sqlite:` URL may name any). It is created 0600 before SQLite opens
 * it, so its -wal and -shm, which SQLite makes with the database file's mode, are too; one made readable by
 * others (by an earlier version: 0644 under the usual umask) is narrowed. Best effort: a file Hangar cannot
 * change fails, if at all, where SQLite opens it.
 */
export async function ownerOnlyStoreFile(file: string): Promise<void> {
  await writeFile(file, '', { flag: 'wx', mode: 0o600 }).catch(() => {})
  for (const each of [file, `${file}-wal`, `${file}-shm`]) {
    const found = await stat(each).catch(() => undefined)
    // The group's and others' bits dropped, the owner's kept: narrowed, never widened (0444 becomes 0400).
    if (found && (found.mode & 0o077) !== 0) await chmod(each, found.mode & 0o700).catch(() => {})
  }
}

function describeFsError(error: unknown): string {
  const code = (error as { code?: string }).code
  return code ?? 'unknown error'
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  const url = options.url?.trim()
  const file = sqliteStoreFile(options)
  if (file) return openSqlite(file, url ? path.dirname(file) : options.dataDir)
  if (url && /^postgres(ql)?:\/\//.test(url)) return openPostgres(url, options)
  throw invalidUrl(url ?? '', 'expected postgres://user@host:5432/dbname or sqlite:<path>')
}

/** The SQLite file the options name (`<data-dir>/hangar.db` by default), or undefined for PostgreSQL. */
export function sqliteStoreFile(options: Pick<OpenDatabaseOptions, 'url' | 'dataDir'>): string | undefined {
  const url = options.url?.trim()
  if (!url) return path.join(options.dataDir, 'hangar.db')
  if (!url.startsWith('sqlite:')) return undefined
  const file = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '')
  if (!file) throw invalidUrl(url, 'sqlite: needs a file path, e.g. sqlite:/var/lib/hangar/hangar.db')
  return path.resolve(file)
}

function invalidUrl(url: string, expected: string): AppError {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]
  return new AppError(
    'database_url_invalid',
    `database URL ${scheme ? `with scheme "${scheme}:"` : `"${url.includes('@') ? redactDatabaseUrl(url) : url}"`} is not supported`,
    { hint: `${expected} (--database or HANGAR_DATABASE_URL)` },
  )
}

async function openSqlite(file: string, dataDir: string): Promise<DatabaseHandle> {
  await ensureDataDir(dataDir)
  await ownerOnlyStoreFile(file)
  let sqlite: SqliteDatabase.Database
  try {
    sqlite = openSqliteFile(file)
    // WAL lets the CLI read while a daemon writes; NORMAL sync is durable across a process crash
    // (SIGKILL) — only an OS crash can lose the last commits, never corrupt the file.
    sqlite.pragma('journal_mode = WAL')
    sqlite.pragma('synchronous = NORMAL')
    sqlite.pragma('foreign_keys = ON')
    sqlite.pragma('busy_timeout = 5000')
  } catch (error) {
    const code = (error as { code?: string }).code ?? 'unknown error'
    throw new AppError('database_unavailable', `cannot open the SQLite store ${file} (${code})`, {
      retryable: code === 'SQLITE_BUSY',
      hint:
        code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT'
          ? 'the file is not a Hangar database: move it away or pick another --data-dir'
          : 'check the file and its directory permissions',
      cause: error,
    })
  }
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) })
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck()
  const commits = createCommitWatch(file, () => dataVersion.get() as number, { lookEveryMs: LOOK_EVERY_MS })
  const changes = sqlite.prepare('SELECT total_changes()').pluck()
  let closed: Promise<void> | undefined
  // Run events and the proxy's request log are what fill the WAL: from the first commit of either on, a
  // worker checkpoints it (a daemon that only proxies would otherwise checkpoint on its own thread).
  const checkpointer = createWalCheckpointer(file, sqlite)
  // After each request-log commit, a look at the file's header too (commits.lookNow): its own change to it
  // is read there, once per batch of many requests, not by the next proxied request. Not after run events':
  // a streaming run commits far more often than it proxies requests (a commit per line at a human pace),
  // and each look after one is a data_version step (3.9% of the daemon's CPU streaming one run, perf).
  const appendRunEvents = createSqliteRunEventsAppender(db, sqlite, { afterCommit: checkpointer.start })
  return {
    db,
    engine: 'sqlite',
    location: file,
    appendRunEvents,
    appendProxyRequests: createSqliteProxyRequestsAppender(db, sqlite, {
      afterCommit: () => {
        checkpointer.start()
        commits.lookNow()
      },
    }),
    writesByOthers: commits.writesByOthers,
    // Once: a store may be closed twice (a runtime, then its owner).
    close: () =>
      (closed ??= (async () => {
        commits.close()
        // Batches waiting for their commit slot are stored, not dropped.
        await appendRunEvents.commitWaiting()
        await checkpointer.stop()
        // A process that wrote (`hangar token revoke`) returns only once every other process on the file has
        // looked at its commits again (sqlite-commit-watch): what it revoked is refused from the next request.
        const wrote = (changes.get() as number) > 0
        await db.destroy()
        if (wrote) await pause(LOOK_EVERY_MS)
      })()),
  }
}

async function currentSchema(pool: pg.Pool): Promise<string> {
  const result = await pool.query<{ schema: string }>('select current_schema() as schema')
  return result.rows[0]?.schema ?? 'public'
}

async function openPostgres(url: string, options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  if (!URL.canParse(url)) throw invalidUrl(url, 'expected postgres://user:password@host:5432/dbname')
  const location = redactDatabaseUrl(url)
  const openPool = (max: number) => {
    const opened = new (pgDriver().Pool)({
      connectionString: url,
      max,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    })
    // A broken idle connection must not crash the daemon: the pool drops it and opens another.
    opened.on('error', () => {})
    return opened
  }
  const pool = openPool(options.poolSize ?? 10)
  try {
    const client = await pool.connect()
    client.release()
  } catch (error) {
    await pool.end().catch(() => {})
    const reason = (error as { code?: string; message?: string }).code ?? 'connection failed'
    throw new AppError('database_unavailable', `cannot reach PostgreSQL at ${location} (${reason})`, {
      hint: 'check that the server is running and the URL, user and database are right',
      cause: error,
    })
  }
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  // Run events have a connection of their own (the appender keeps one statement in flight): twenty runs
  // starting or ending at once hold every connection of the pool in their transactions, and agents'
  // lines waited behind them (stdout → SSE p99 15-30 ms while runs started, 4-7 ms once they streamed).
  const eventsPool = openPool(1)
  const appendRunEvents = createPostgresRunEventsAppender(eventsPool)
  let eventsPoolEnded: Promise<void> | undefined
  return {
    db,
    engine: 'postgres',
    location,
    appendRunEvents,
    appendProxyRequests: createPostgresProxyRequestsAppender(pool),
    // Channels are database-wide: two stores in one database (other search_path) must not hear each other.
    notifications: createPgNotifications(url, db, await currentSchema(pool), appendRunEvents),
    close: async () => {
      // Batches waiting for the statement in flight are stored, not failed by an ended pool.
      await appendRunEvents.settled()
      // A store may be closed twice (a runtime, then its owner); pg refuses to end a pool twice.
      eventsPoolEnded ??= eventsPool.end()
      await Promise.all([db.destroy(), eventsPoolEnded])
    },
  }
}

/** At least `ms` of wall time: a timer may fire early by the event loop's cached clock, so it is checked. */
async function pause(ms: number): Promise<void> {
  const until = performance.now() + ms
  for (let left = ms; left > 0; left = until - performance.now())
    await new Promise((resolve) => setTimeout(resolve, Math.ceil(left)))
}
