// COPY … FROM STDIN from memory on the pg driver: text fields arrive as they were, whatever they hold, and the
// COPY and the statements after it in its message land together or not at all, leaving the pool's
// connection clean for the next query.
import pg from 'pg'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { freshPostgresUrl } from '../../test/helpers/store-engines.js'
import { copyField, copyFromMemory, CopyRows } from './postgres-copy.js'

const row = (...fields: (string | number | null)[]) => `${fields.map(copyField).join('\t')}\n`

/** Lines as a COPY's rows. */
function rowsOf(...lines: string[]): CopyRows {
  const rows = new CopyRows(16)
  for (const line of lines) rows.add(line)
  return rows
}

describe('COPY rows in a buffer', () => {
  it('holds every line whole, as UTF-8, past the size it started with', () => {
    const rows = new CopyRows(8)
    const lines = ['a\tb\n', `${'x'.repeat(100)}\n`, 'ünïcødé ✓ 𝄞\n', '\\N\t\\N\n']
    for (const line of lines) rows.add(line)
    expect(rows.bytes().toString('utf8')).toBe(lines.join(''))
    expect(rows.bytes().length).toBe(Buffer.byteLength(lines.join('')))
  })
})

describe('COPY from memory (PostgreSQL)', () => {
  let pool: pg.Pool

  beforeEach(async () => {
    // One connection: a connection left inside a failed transaction would fail the next query.
    pool = new pg.Pool({ connectionString: await freshPostgresUrl(), max: 1 })
    await pool.query(
      'CREATE TABLE items (id TEXT PRIMARY KEY, note TEXT, size INTEGER, cost DOUBLE PRECISION)',
    )
    await pool.query('CREATE TABLE tally (n INTEGER NOT NULL)')
  })
  afterEach(async () => {
    await pool.end()
  })

  const items = async () =>
    (await pool.query('SELECT id, note, size, cost FROM items ORDER BY id')).rows as {
      id: string
      note: string | null
      size: number | null
      cost: number | null
    }[]

  it('stores text with tabs, newlines, returns, backslashes, quotes and \\N as it came, and nulls as null', async () => {
    const notes = [
      'a\tb',
      'line\nnext',
      'cr\rhere',
      'C:\\dir\\file',
      'it\'s "quoted"',
      '\\N',
      'ünïcødé ✓',
      '',
    ]
    const data = rowsOf(
      ...notes.map((note, index) => row(`i${index}`, note, index, index / 3)),
      row('null', null, null, null),
    )
    await copyFromMemory(pool, 'COPY items (id, note, size, cost) FROM STDIN', data)
    const stored = await items()
    expect(stored.filter((item) => item.id !== 'null').map((item) => item.note)).toEqual(notes)
    expect(stored.find((item) => item.id === 'i4')).toMatchObject({ size: 4, cost: 4 / 3 })
    expect(stored.find((item) => item.id === 'null')).toEqual({
      id: 'null',
      note: null,
      size: null,
      cost: null,
    })
  })

  it('runs the statements after the COPY in the same transaction: all land, or none', async () => {
    await copyFromMemory(
      pool,
      'COPY items (id) FROM STDIN; INSERT INTO tally (n) VALUES (1)',
      rowsOf(row('a')),
    )
    expect((await items()).map((item) => item.id)).toEqual(['a'])
    // The statement after the COPY fails: the COPY's rows go too.
    await expect(
      copyFromMemory(
        pool,
        'COPY items (id) FROM STDIN; INSERT INTO tally (n) VALUES (NULL)',
        rowsOf(row('b')),
      ),
    ).rejects.toThrow(/null value/)
    // The COPY itself fails (a taken key): nothing after it runs.
    await expect(
      copyFromMemory(
        pool,
        'COPY items (id) FROM STDIN; INSERT INTO tally (n) VALUES (2)',
        rowsOf(row('c'), row('a')),
      ),
    ).rejects.toThrow(/duplicate key/)
    expect((await items()).map((item) => item.id)).toEqual(['a'])
    expect((await pool.query('SELECT n FROM tally')).rows).toEqual([{ n: 1 }])
    // The one connection is usable again, outside any transaction.
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
  })

  // The rows are sent with the query, before the server has started the COPY: when the message fails
  // first, the server must drop them, and the connection must come back clean.
  it('fails as a whole when a statement before the COPY fails, and the connection stays usable', async () => {
    await expect(
      copyFromMemory(
        pool,
        'INSERT INTO tally (n) VALUES (NULL); COPY items (id) FROM STDIN',
        rowsOf(row('d')),
      ),
    ).rejects.toThrow(/null value/)
    await expect(
      copyFromMemory(pool, 'COPY no_such_table (id) FROM STDIN', rowsOf(row('e'))),
    ).rejects.toThrow(/no_such_table/)
    expect(await items()).toEqual([])
    expect((await pool.query('SELECT count(*)::int AS n FROM tally')).rows).toEqual([{ n: 0 }])
    await copyFromMemory(pool, 'COPY items (id) FROM STDIN', rowsOf(row('f')))
    expect((await items()).map((item) => item.id)).toEqual(['f'])
  })

  it('fails a message with two COPYs rather than giving the second no rows', async () => {
    await expect(
      copyFromMemory(pool, 'COPY items (id) FROM STDIN; COPY items (id) FROM STDIN', rowsOf(row('g'))),
    ).rejects.toThrow(/one COPY per message/)
    expect(await items()).toEqual([])
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
  })

  it('refuses rows that do not fit the columns, with the server’s reason', async () => {
    await expect(
      copyFromMemory(pool, 'COPY items (id, size) FROM STDIN', rowsOf(row('x', 'many'))),
    ).rejects.toThrow(/invalid input syntax for type integer/)
    expect(await items()).toEqual([])
  })
})
