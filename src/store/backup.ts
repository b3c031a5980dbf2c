// `hangar backup` / `hangar restore`: one self-describing file holding a consistent snapshot of the SQLite
// store (the SQLite online backup API, so a running daemon keeps writing) and the instance key file.
//
// Format: the line `HANGAR-BACKUP/1`, one line of JSON naming each file with its size and SHA-256, then
// the files' bytes one after the other. Restore checks every checksum and the exact length before it
// writes anything, so a truncated or damaged file restores nothing.
import { createHash } from 'node:crypto'
import { createReadStream, createWriteStream, promises as fs } from 'node:fs'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import type SqliteDatabase from 'better-sqlite3'
import { AppError } from '../core/errors.js'
import { KEY_FILE_NAME } from './keyring.js'
import { ensureDataDir } from './open-database.js'
import { openSqliteFile } from './sqlite-driver.js'

const MAGIC = 'HANGAR-BACKUP/1'
export const STORE_FILE_NAME = 'hangar.db'
/** What a backup may hold: restore writes nothing else, so a crafted header cannot name another path. */
const ARCHIVED_FILES = [STORE_FILE_NAME, KEY_FILE_NAME] as const
const MAX_HEADER_BYTES = 64 * 1024
/** Copy every page in one step: a snapshot under one read lock, never restarted by the daemon's writes. */
const ALL_PAGES = 0x7fffffff

interface ArchivedFile {
  name: (typeof ARCHIVED_FILES)[number]
  size: number
  sha256: string
}

interface BackupHeader {
  hangarVersion: string
  createdAt: string
  files: ArchivedFile[]
}

export interface BackupSummary {
  file: string
  bytes: number
  hangarVersion: string
  createdAt: string
  files: string[]
}

export interface WriteBackupOptions {
  /** The SQLite store to snapshot. */
  storeFile: string
  /** The instance key file; left out of the backup when it does not exist. */
  keyFile: string
  target: string
  hangarVersion: string
  now?: Date
}

/** Writes the backup to `target` (mode 0600), which must not exist yet. */
export async function writeBackup(options: WriteBackupOptions): Promise<BackupSummary> {
  const target = path.resolve(options.target)
  await refuseExisting(target)
  const directory = path.dirname(target)
  let work: string
  try {
    work = await fs.mkdtemp(path.join(directory, '.hangar-backup-'))
  } catch (error) {
    throw new AppError('invalid_request', `cannot write the backup in ${directory} (${codeOf(error)})`, {
      hint: 'choose a file in an existing, writable directory',
      cause: error,
    })
  }
  try {
    const snapshot = path.join(work, STORE_FILE_NAME)
    await snapshotSqlite(options.storeFile, snapshot)
    const parts: { path: string; name: ArchivedFile['name'] }[] = [{ path: snapshot, name: STORE_FILE_NAME }]
    if (await exists(options.keyFile)) parts.push({ path: options.keyFile, name: KEY_FILE_NAME })
    const files: ArchivedFile[] = []
    for (const part of parts) files.push({ name: part.name, ...(await sizeAndHash(part.path)) })
    const header: BackupHeader = {
      hangarVersion: options.hangarVersion,
      createdAt: (options.now ?? new Date()).toISOString(),
      files,
    }
    const archive = path.join(work, 'archive')
    const output = createWriteStream(archive, { flags: 'wx', mode: 0o600 })
    await pipeline(async function* () {
      yield Buffer.from(`${MAGIC}\n${JSON.stringify(header)}\n`)
      for (const part of parts) yield* createReadStream(part.path)
    }, output)
    await syncFile(archive)
    // link() fails when the name exists: a backup written meanwhile is never replaced, and FILE never
    // shows a half-written archive.
    try {
      await fs.link(archive, target)
    } catch (error) {
      if (codeOf(error) === 'EEXIST') throw alreadyExists(target)
      throw error
    }
    const { size } = await fs.stat(target)
    return { file: target, bytes: size, ...header, files: files.map((file) => file.name) }
  } finally {
    await fs.rm(work, { recursive: true, force: true })
  }
}

async function snapshotSqlite(storeFile: string, snapshot: string): Promise<void> {
  let source: SqliteDatabase.Database
  try {
    source = openSqliteFile(storeFile, { fileMustExist: true })
  } catch (error) {
    throw new AppError('not_found', `there is no Hangar store at ${storeFile} (${codeOf(error)})`, {
      hint: 'point --data-dir (or HANGAR_DATA_DIR) at the data dir to back up',
      cause: error,
    })
  }
  try {
    source.pragma('busy_timeout = 5000')
    await source.backup(snapshot, { progress: () => ALL_PAGES })
  } catch (error) {
    const code = codeOf(error)
    throw new AppError('database_unavailable', `cannot snapshot the store ${storeFile} (${code})`, {
      retryable: code === 'SQLITE_BUSY',
      hint:
        code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT'
          ? 'the file is not a Hangar database: check --data-dir'
          : 'no backup was written; check the file and try again',
      cause: error,
    })
  } finally {
    source.close()
  }
  const copy = openSqliteFile(snapshot)
  try {
    // One self-contained file: no -wal beside it once restored.
    copy.pragma('journal_mode = DELETE')
    const integrity = (copy.pragma('integrity_check') as { integrity_check: string }[])
      .map((row) => row.integrity_check)
      .join('; ')
    if (integrity !== 'ok') {
      throw new AppError(
        'database_unavailable',
        `the store ${storeFile} failed its integrity check: ${integrity}`,
        {
          retryable: false,
          hint: 'no backup was written; run hangar doctor',
        },
      )
    }
  } finally {
    copy.close()
  }
}

/** Reads and checks the backup's header and every file's checksum; writes nothing. */
export async function verifyBackup(file: string): Promise<BackupHeader & { offset: number }> {
  const source = path.resolve(file)
  let handle: fs.FileHandle
  try {
    handle = await fs.open(source, 'r')
  } catch (error) {
    throw new AppError('not_found', `cannot read the backup ${source} (${codeOf(error)})`, {
      hint: 'check the path',
      cause: error,
    })
  }
  let parsed: { header: BackupHeader; offset: number } | undefined
  let size: number
  try {
    size = (await handle.stat()).size
    const start = Buffer.alloc(Math.min(size, MAX_HEADER_BYTES))
    await handle.read(start, 0, start.length, 0)
    parsed = parseHeader(start)
  } finally {
    await handle.close()
  }
  if (!parsed) throw damaged(source, 'it is not a Hangar backup (no HANGAR-BACKUP/1 header)')
  const { header, offset } = parsed
  const expected = offset + header.files.reduce((total, entry) => total + entry.size, 0)
  if (size !== expected)
    throw damaged(
      source,
      `it is ${size} bytes long where its header says ${expected} (truncated or appended to)`,
    )
  let position = offset
  for (const entry of header.files) {
    const { sha256 } = await sizeAndHash(source, { start: position, size: entry.size })
    if (sha256 !== entry.sha256) throw damaged(source, `${entry.name} does not match its checksum`)
    position += entry.size
  }
  return { ...header, offset }
}

function parseHeader(start: Buffer): { header: BackupHeader; offset: number } | undefined {
  const magicEnd = start.indexOf(0x0a)
  if (magicEnd === -1 || start.subarray(0, magicEnd).toString('utf8') !== MAGIC) return undefined
  const headerEnd = start.indexOf(0x0a, magicEnd + 1)
  if (headerEnd === -1) return undefined
  let header: BackupHeader
  try {
    header = JSON.parse(start.subarray(magicEnd + 1, headerEnd).toString('utf8')) as BackupHeader
  } catch {
    return undefined
  }
  const names = new Set<string>()
  const valid =
    typeof header.hangarVersion === 'string' &&
    typeof header.createdAt === 'string' &&
    Array.isArray(header.files) &&
    header.files.every(
      (entry) =>
        (ARCHIVED_FILES as readonly string[]).includes(entry.name) &&
        !names.has(entry.name) &&
        names.add(entry.name) &&
        Number.isSafeInteger(entry.size) &&
        entry.size >= 0 &&
        /^[0-9a-f]{64}$/.test(entry.sha256),
    ) &&
    names.has(STORE_FILE_NAME)
  return valid ? { header, offset: headerEnd + 1 } : undefined
}

/** Restores a verified backup into `dataDir`, which must be empty or not exist. */
export async function restoreBackup(file: string, dataDir: string): Promise<BackupSummary> {
  const source = path.resolve(file)
  const header = await verifyBackup(source)
  await refuseNonEmptyDataDir(dataDir)
  await ensureDataDir(dataDir)
  let position = header.offset
  for (const entry of header.files) {
    const destination = path.join(dataDir, entry.name)
    const input =
      entry.size === 0 ? [] : createReadStream(source, { start: position, end: position + entry.size - 1 })
    await pipeline(input, createWriteStream(destination, { flags: 'wx', mode: 0o600 }))
    await syncFile(destination)
    position += entry.size
  }
  return {
    file: source,
    bytes: position,
    hangarVersion: header.hangarVersion,
    createdAt: header.createdAt,
    files: header.files.map((entry) => entry.name),
  }
}

async function refuseNonEmptyDataDir(dataDir: string): Promise<void> {
  let entries: string[]
  try {
    entries = await fs.readdir(dataDir)
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return
    throw new AppError('data_dir_unwritable', `cannot read the data dir ${dataDir} (${codeOf(error)})`, {
      cause: error,
    })
  }
  if (entries.length > 0) {
    throw new AppError('conflict', `the data dir ${dataDir} is not empty; nothing was restored`, {
      hint: 'restore into a new or empty data dir (--data-dir), then point Hangar at it',
      details: { dataDir },
    })
  }
}

async function refuseExisting(target: string): Promise<void> {
  if (await exists(target)) throw alreadyExists(target)
}

function alreadyExists(target: string): AppError {
  return new AppError('conflict', `${target} already exists; hangar backup never overwrites a file`, {
    hint: 'choose a new file name, or move the old backup away first',
    details: { file: target },
  })
}

function damaged(file: string, problem: string): AppError {
  return new AppError('invalid_request', `the backup ${file} cannot be restored: ${problem}`, {
    hint: 'nothing was written; use another copy of the backup',
    details: { file },
  })
}

async function sizeAndHash(
  file: string,
  range?: { start: number; size: number },
): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256')
  let size = 0
  if (!range || range.size > 0) {
    const stream = createReadStream(file, range && { start: range.start, end: range.start + range.size - 1 })
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      hash.update(chunk)
      size += chunk.length
    }
  }
  return { size, sha256: hash.digest('hex') }
}

async function syncFile(file: string): Promise<void> {
  const handle = await fs.open(file, 'r+')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.lstat(file)
    return true
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return false
    throw error
  }
}

function codeOf(error: unknown): string {
  return (error as { code?: string } | undefined)?.code ?? 'unknown error'
}
