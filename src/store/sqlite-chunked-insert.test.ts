// Rows go in whole chunks and then one by one, each with its own values, in order; a statement that fails
// (rolling its transaction back) leaves no row of that attempt to be inserted by the next transaction.
import { describe, expect, it } from 'vitest'
import { createChunkedInsert } from './sqlite-chunked-insert.js'
import { openSqliteFile } from './sqlite-driver.js'

function table() {
  const sqlite = openSqliteFile(':memory:')
  sqlite.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)')
  const inserts = createChunkedInsert(sqlite, 'INSERT INTO t (k, v)', 2, 4)
  const insertAll = sqlite.transaction((keys: readonly number[]) => {
    for (const key of keys) {
      const at = inserts.next()
      inserts.values[at] = key
      inserts.values[at + 1] = `v${key}`
    }
    inserts.end()
  })
  const stored = () => sqlite.prepare('SELECT k, v FROM t ORDER BY k').all()
  return { insertAll, stored }
}

const keys = (from: number, count: number) => Array.from({ length: count }, (_, index) => from + index)

describe('chunked SQLite inserts', () => {
  it('inserts whole chunks, an exact chunk and a remainder, each row with its own values', () => {
    const { insertAll, stored } = table()
    insertAll(keys(1, 11))
    insertAll(keys(12, 4))
    insertAll(keys(16, 3))
    expect(stored()).toEqual(keys(1, 18).map((k) => ({ k, v: `v${k}` })))
  })

  it('leaves nothing of a failed transaction bound for the next one', () => {
    const { insertAll, stored } = table()
    insertAll([3])
    // Key 3 again: the first chunk fails, in the middle of binding the second.
    expect(() => insertAll(keys(1, 6))).toThrow(/UNIQUE/)
    // The remainder fails too, after the chunk of this attempt went in (and was rolled back).
    expect(() => insertAll([...keys(10, 4), 3])).toThrow(/UNIQUE/)
    insertAll([20])
    expect(stored()).toEqual([
      { k: 3, v: 'v3' },
      { k: 20, v: 'v20' },
    ])
  })
})
