import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type SqliteDatabase from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createCommitWatch } from './sqlite-commit-watch.js'
import { openSqliteFile } from './sqlite-driver.js'

function open(file: string) {
  const sqlite = openSqliteFile(file)
  sqlite.pragma('journal_mode = WAL')
  return sqlite
}

describe('sqlite commit watch', () => {
  let dir: string
  let file: string
  let ours: SqliteDatabase.Database
  let theirs: SqliteDatabase.Database
  let pragmaReads: number
  let dataVersion: () => number

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hangar-commit-watch-'))
    file = path.join(dir, 'store.db')
    ours = open(file)
    ours.exec('CREATE TABLE t (x INTEGER)')
    // Another connection: another process as far as SQLite's locks and data_version go.
    theirs = open(file)
    const statement = ours.prepare('PRAGMA data_version').pluck()
    pragmaReads = 0
    dataVersion = () => {
      pragmaReads++
      return statement.get() as number
    }
  })
  afterEach(() => {
    ours.close()
    theirs.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('sees every commit of another connection on the very next call', () => {
    const watch = createCommitWatch(file, dataVersion)
    let last = watch.writesByOthers()
    for (let commit = 0; commit < 50; commit++) {
      theirs.prepare('INSERT INTO t VALUES (?)').run(commit)
      const now = watch.writesByOthers()
      expect(now).not.toBe(last)
      last = now
    }
    watch.close()
  })

  it('reads no data_version while nothing committed', () => {
    const watch = createCommitWatch(file, dataVersion)
    const first = watch.writesByOthers()
    const reads = pragmaReads
    for (let call = 0; call < 100; call++) expect(watch.writesByOthers()).toBe(first)
    expect(pragmaReads).toBe(reads)
    watch.close()
  })

  it('watches a file opened fresh, before anything read or wrote it', () => {
    const fresh = path.join(dir, 'fresh.db')
    const sqlite = open(fresh)
    const statement = sqlite.prepare('PRAGMA data_version').pluck()
    let reads = 0
    const watch = createCommitWatch(fresh, () => {
      reads++
      return statement.get() as number
    })
    const first = watch.writesByOthers()
    const before = reads
    for (let call = 0; call < 10; call++) expect(watch.writesByOthers()).toBe(first)
    expect(reads).toBe(before)
    const other = open(fresh)
    other.exec('CREATE TABLE u (x INTEGER)')
    expect(watch.writesByOthers()).not.toBe(first)
    other.close()
    watch.close()
    sqlite.close()
  })

  it("does not count this connection's own commits as another's", () => {
    const watch = createCommitWatch(file, dataVersion)
    const first = watch.writesByOthers()
    ours.prepare('INSERT INTO t VALUES (1)').run()
    expect(watch.writesByOthers()).toBe(first)
    theirs.prepare('INSERT INTO t VALUES (2)').run()
    expect(watch.writesByOthers()).not.toBe(first)
    watch.close()
  })

  it("reads its own commits' change to the header in lookNow, so the next call reads nothing", () => {
    const watch = createCommitWatch(file, dataVersion)
    const first = watch.writesByOthers()
    ours.prepare('INSERT INTO t VALUES (1)').run()
    watch.lookNow()
    const reads = pragmaReads
    expect(watch.writesByOthers()).toBe(first)
    expect(pragmaReads).toBe(reads)
    // What another connection committed before the look is not lost to it.
    theirs.prepare('INSERT INTO t VALUES (2)').run()
    ours.prepare('INSERT INTO t VALUES (3)').run()
    watch.lookNow()
    expect(watch.writesByOthers()).not.toBe(first)
    watch.close()
  })

  it('reads data_version on every call when there is no -shm to watch', () => {
    const watch = createCommitWatch(path.join(dir, 'missing.db'), dataVersion)
    const reads = pragmaReads
    watch.writesByOthers()
    watch.writesByOthers()
    expect(pragmaReads).toBe(reads + 2)
    theirs.prepare('INSERT INTO t VALUES (3)').run()
    const before = dataVersion()
    expect(watch.writesByOthers()).toBe(before)
    // Nothing to gain by looking after a commit then: lookNow reads nothing.
    const readsBeforeLook = pragmaReads
    watch.lookNow()
    expect(pragmaReads).toBe(readsBeforeLook)
    watch.close()
  })

  it('reads nothing in lookNow once closed (commits still land while a store closes)', () => {
    const watch = createCommitWatch(file, dataVersion)
    watch.writesByOthers()
    watch.close()
    ours.prepare('INSERT INTO t VALUES (6)').run()
    const reads = pragmaReads
    watch.lookNow()
    expect(pragmaReads).toBe(reads)
  })

  it('looks at most once per interval: a commit is seen at the first call once the interval has passed', () => {
    let now = 1_000
    const watch = createCommitWatch(file, dataVersion, { lookEveryMs: 5, now: () => now })
    const first = watch.writesByOthers()
    theirs.prepare('INSERT INTO t VALUES (4)').run()
    now += 4.9
    expect(watch.writesByOthers()).toBe(first)
    now += 0.1
    const seen = watch.writesByOthers()
    expect(seen).not.toBe(first)
    // The look that saw it starts the next interval.
    theirs.prepare('INSERT INTO t VALUES (5)').run()
    now += 4
    expect(watch.writesByOthers()).toBe(seen)
    now += 1
    expect(watch.writesByOthers()).not.toBe(seen)
    watch.close()
  })

  it('looks within the interval when asked for a fresh look, which starts a new interval', () => {
    let now = 1_000
    const watch = createCommitWatch(file, dataVersion, { lookEveryMs: 5, now: () => now })
    const first = watch.writesByOthers()
    theirs.prepare('INSERT INTO t VALUES (6)').run()
    now += 1
    const seen = watch.writesByOthers(true)
    expect(seen).not.toBe(first)
    theirs.prepare('INSERT INTO t VALUES (7)').run()
    now += 4.9
    expect(watch.writesByOthers()).toBe(seen)
    now += 0.1
    expect(watch.writesByOthers()).not.toBe(seen)
    watch.close()
  })
})
