// "Has another connection committed?" asked by the proxied requests (a token revoked by another process
// must be refused), for less than `PRAGMA data_version` costs (a statement step and two fcntl locks). In WAL
// mode every commit, by any connection of any process, rewrites the wal-index header: the first 48 bytes
// of `<db>-shm`, whose `iChange` counter goes up with each transaction and whose checksum covers the rest
// (https://www.sqlite.org/walformat.html, "The WAL-Index Header"). One pread of those bytes tells whether
// anything committed since the last look; only then is data_version read (our own commits change the
// header too, but data_version only counts the others'). The header is read before data_version, so a
// commit landing between the two is seen again on the next call: never missed, at worst read twice.
// Without a readable `-shm` (not WAL, or an odd file system) every call reads data_version.
//
// The daemon looks at most every LOOK_EVERY_MS, not on every proxied request: the read was about 5 µs of
// each request's latency (a syscall through fs.readSync, cold between requests). What another process
// commits is then seen within that interval, and at once by a request sent after that process closed its
// store, because a process that wrote waits out the interval before it closes (open-database): a token
// revoked by `hangar token revoke` is refused from the next request after the command returns.
import { closeSync, openSync, readSync } from 'node:fs'

const HEADER_BYTES = 48
/** How long a look at the header is trusted, and so how long a process that wrote waits before it closes. */
export const LOOK_EVERY_MS = 5

export interface CommitWatch {
  /**
   * data_version: changes whenever another connection committed since the last call. `fresh`: look whatever
   * the interval (a look done ahead, off the request path, starts a new interval).
   */
  writesByOthers(fresh?: boolean): number
  /**
   * Looks now, whatever the interval: called right after each of the request log's commits, so that the
   * header they changed is read there, off the request path, and a proxied request after them does not
   * pay data_version's statement and locks to learn that nobody else wrote.
   */
  lookNow(): void
  close(): void
}

export function createCommitWatch(
  file: string,
  dataVersion: () => number,
  options: { lookEveryMs?: number; now?: () => number } = {},
): CommitWatch {
  const lookEveryMs = options.lookEveryMs ?? 0
  const now = options.now ?? (() => performance.now())
  // Read first: on a fresh file, a first read is what creates `-shm`.
  let version = dataVersion()
  let lookedAt = -Infinity
  let fd: number | undefined
  try {
    fd = openSync(`${file}-shm`, 'r')
  } catch {
    fd = undefined
  }
  let seen = Buffer.alloc(HEADER_BYTES)
  let next = Buffer.alloc(HEADER_BYTES)
  let primed = false

  function look(): number {
    if (fd === undefined) return (version = dataVersion())
    let read: number
    try {
      read = readSync(fd, next, 0, HEADER_BYTES, 0)
    } catch {
      read = 0
    }
    if (read === HEADER_BYTES && primed && next.equals(seen)) return version
    // Changed (or unreadable): swap the buffers, then ask SQLite.
    const previous = seen
    seen = next
    next = previous
    primed = read === HEADER_BYTES
    version = dataVersion()
    return version
  }

  return {
    writesByOthers(fresh = false) {
      if (lookEveryMs > 0) {
        const at = now()
        if (!fresh && at - lookedAt < lookEveryMs) return version
        lookedAt = at
      }
      return look()
    },
    lookNow() {
      // Without the header (no `-shm`, or closed) every writesByOthers() reads data_version anyway.
      if (fd === undefined) return
      lookedAt = now()
      look()
    },
    close() {
      if (fd !== undefined) closeSync(fd)
      fd = undefined
    },
  }
}
