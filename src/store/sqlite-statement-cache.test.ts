import { Kysely, sql, SqliteDialect } from 'kysely'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { openSqliteFile } from './sqlite-driver.js'
import { withStatementCache } from './sqlite-statement-cache.js'

interface Schema {
  notes: { id: number; body: string }
}

function open(size?: number) {
  const sqlite = openSqliteFile(':memory:')
  const prepare = vi.spyOn(sqlite, 'prepare')
  const db = new Kysely<Schema>({
    dialect: new SqliteDialect({ database: withStatementCache(sqlite, size) }),
  })
  return { sqlite, prepare, db }
}

let opened: ReturnType<typeof open> | undefined
afterEach(async () => {
  await opened?.db.destroy()
  opened = undefined
})

describe('SQLite statement cache', () => {
  it('prepares a query Kysely runs again only once, and its results stay right', async () => {
    opened = open()
    const { db, prepare } = opened
    await sql`create table notes (id integer primary key, body text not null)`.execute(db)
    for (let id = 1; id <= 5; id++)
      await db
        .insertInto('notes')
        .values({ id, body: `note ${id}` })
        .execute()
    const bodies: string[] = []
    for (let id = 1; id <= 5; id++)
      bodies.push(
        (await db.selectFrom('notes').select('body').where('id', '=', id).executeTakeFirstOrThrow()).body,
      )
    expect(bodies).toEqual(['note 1', 'note 2', 'note 3', 'note 4', 'note 5'])
    const texts = prepare.mock.calls.map(([text]) => text)
    // create, insert, select: three texts, each prepared once however often it ran.
    expect(texts).toHaveLength(3)
    expect(new Set(texts).size).toBe(3)
  })

  it('keeps a statement valid across a schema change', async () => {
    opened = open()
    const { db } = opened
    await sql`create table notes (id integer primary key, body text not null)`.execute(db)
    await db.insertInto('notes').values({ id: 1, body: 'first' }).execute()
    const all = () => sql<Record<string, unknown>>`select * from notes`.execute(db)
    expect((await all()).rows).toEqual([{ id: 1, body: 'first' }])
    await sql`alter table notes add column tag text`.execute(db)
    expect((await all()).rows).toEqual([{ id: 1, body: 'first', tag: null }])
  })

  it('drops the least recently used statement beyond its size', async () => {
    opened = open(2)
    const { db, prepare } = opened
    const select = (value: number) => sql`select ${sql.lit(value)} as value`.execute(db)
    await select(1)
    await select(2)
    await select(1) // 1 is now the most recently used: 3 drops 2.
    await select(3)
    await select(1)
    await select(2)
    expect(prepare.mock.calls.map(([text]) => text)).toEqual([
      'select 1 as value',
      'select 2 as value',
      'select 3 as value',
      'select 2 as value',
    ])
  })

  it('gives a statement still being iterated no second use: that query gets its own', async () => {
    opened = open()
    const { db } = opened
    await sql`create table notes (id integer primary key, body text not null)`.execute(db)
    for (let id = 1; id <= 3; id++)
      await db
        .insertInto('notes')
        .values({ id, body: `note ${id}` })
        .execute()
    const cached = withStatementCache(opened.sqlite)
    const query = 'select id from notes order by id'
    const iterating = cached.prepare(query).iterate([])
    expect(iterating.next().value).toEqual({ id: 1 })
    // The same text while the first is mid-iteration: another statement, which runs on its own.
    expect(cached.prepare(query).all([])).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }])
    expect([...iterating]).toEqual([{ id: 2 }, { id: 3 }])
    // Once done, the cached one serves again.
    expect(cached.prepare(query).all([])).toHaveLength(3)
  })
})
