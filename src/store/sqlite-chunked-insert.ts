// Many rows into one SQLite table through two fixed statements, prepared once: an INSERT of `rowsPerInsert`
// rows run per that many rows, and one of a single row for the rest. A statement sized to each batch would
// be a new one for every size (and meet SQLite's bound-parameter limit on a burst); one statement per row
// pays a call into SQLite, its bindings' checks and a result object per row. The store's hot appenders
// (run events, the proxy's request log) write through it inside their transactions.
import type SqliteDatabase from 'better-sqlite3'

export interface ChunkedInsert {
  /** The bindings of the rows bound so far, `columns` per row: fill the row at next()'s offset. */
  readonly values: unknown[]
  /** The offset in `values` of the next row's first column (inserting a full chunk first). */
  next(): number
  /** Inserts the rows bound and not inserted yet. Call it once the last row is filled, before COMMIT. */
  end(): void
}

function placeholders(rows: number, columns: number): string {
  const row = `(${Array.from({ length: columns }, () => '?').join(', ')})`
  return Array.from({ length: rows }, () => row).join(', ')
}

/** `into`: the statement up to VALUES, e.g. `INSERT INTO t (a, b)`. Prepare after the table exists. */
export function createChunkedInsert(
  sqlite: SqliteDatabase.Database,
  into: string,
  columns: number,
  rowsPerInsert: number,
): ChunkedInsert {
  const insertMany = sqlite.prepare(`${into} VALUES ${placeholders(rowsPerInsert, columns)}`)
  const insertOne = sqlite.prepare(`${into} VALUES ${placeholders(1, columns)}`)
  const values = new Array<unknown>(rowsPerInsert * columns)
  const one = new Array<unknown>(columns)
  let bound = 0
  return {
    values,
    // The count is cleared before each statement runs: one that throws (and so rolls the transaction back)
    // leaves no rows bound for the next transaction to insert.
    next() {
      if (bound === rowsPerInsert) {
        bound = 0
        insertMany.run(values)
      }
      return bound++ * columns
    },
    end() {
      const rows = bound
      bound = 0
      if (rows === rowsPerInsert) return void insertMany.run(values)
      for (let row = 0; row < rows; row++) {
        for (let column = 0; column < columns; column++) one[column] = values[row * columns + column]
        insertOne.run(one)
      }
    },
  }
}
