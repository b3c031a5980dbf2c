// The daemon's log file sink (`hangar up --detach`): `<data-dir>/logs/hangar.log`, rotated by size inside
// the process — no logrotate. Past `maxBytes` the file becomes hangar.log.1, .1 becomes .2, … and the
// oldest past `keep` is dropped. Writes are synchronous: a line is on disk before the next one, so the
// last lines before a crash or a SIGKILL are there to read.
import { closeSync, fstatSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs'
import path from 'node:path'
import { Writable } from 'node:stream'

export const LOG_FILE_NAME = 'hangar.log'
/** 10 MiB a file, five old files kept: at most 60 MiB of logs. */
export const DEFAULT_LOG_ROTATION = { maxBytes: 10 * 1024 * 1024, keep: 5 } as const

export function daemonLogPath(dataDir: string): string {
  return path.join(dataDir, 'logs', LOG_FILE_NAME)
}

export interface RotatingLogFile extends Writable {
  readonly file: string
}

export function createRotatingLogFile(options: {
  file: string
  maxBytes?: number
  keep?: number
}): RotatingLogFile {
  const { file } = options
  const maxBytes = options.maxBytes ?? DEFAULT_LOG_ROTATION.maxBytes
  const keep = Math.max(1, options.keep ?? DEFAULT_LOG_ROTATION.keep)
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  let descriptor = openSync(file, 'a', 0o600)
  let size = fstatSync(descriptor).size

  function rotate(): void {
    closeSync(descriptor)
    rmSync(`${file}.${keep}`, { force: true })
    for (let index = keep - 1; index >= 1; index--) {
      try {
        renameSync(`${file}.${index}`, `${file}.${index + 1}`)
      } catch {
        // No such old file yet.
      }
    }
    renameSync(file, `${file}.1`)
    descriptor = openSync(file, 'a', 0o600)
    size = 0
  }

  function append(chunk: Buffer): void {
    // A line longer than a whole file still goes in one piece, into a file of its own.
    if (size > 0 && size + chunk.length > maxBytes) rotate()
    let written = 0
    while (written < chunk.length) written += writeSync(descriptor, chunk, written)
    size += chunk.length
  }

  const stream = new Writable({
    write(chunk: Buffer | string, encoding, callback) {
      try {
        append(typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk)
        callback()
      } catch (error) {
        callback(error as Error)
      }
    },
    final(callback) {
      closeSync(descriptor)
      callback()
    },
  })
  return Object.assign(stream, { file })
}
