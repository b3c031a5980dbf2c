// Migrations are forward-only and tested as upgrades (issue 21): a store as the first release left it
// (test/fixtures/upgrade, made by scripts/make-upgrade-fixtures.mjs) opens with this code, migrates to
// the latest migration, passes its integrity check and reads back through the repositories; a store
// written by a newer Hangar is refused with a clear message and left exactly as it was. Both engines.
import { createHash } from 'node:crypto'
import { copyFile, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { sql } from 'kysely'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { freshPostgresUrl, makeTempDir } from '../../test/helpers/store-engines.js'
import { MIGRATIONS } from './migrate.js'
import { openDatabase } from './open-database.js'
import { openStore } from './store.js'

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/fixtures/upgrade')

interface UpgradeEngine {
  name: 'sqlite' | 'postgres'
  /** A data dir (and database URL) holding the first release's fixture store. */
  loadFixture(dataDir: string): Promise<string | undefined>
}

const ENGINES: UpgradeEngine[] = [
  {
    name: 'sqlite',
    async loadFixture(dataDir) {
      await copyFile(path.join(FIXTURES, 'first-release.sqlite'), path.join(dataDir, 'hangar.db'))
      return undefined
    },
  },
  {
    name: 'postgres',
    async loadFixture() {
      const url = await freshPostgresUrl()
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        await client.query(await readFile(path.join(FIXTURES, 'first-release.postgres.sql'), 'utf8'))
      } finally {
        await client.end()
      }
      return url
    },
  },
]

async function appliedMigrations(url: string | undefined, dataDir: string): Promise<string[]> {
  const handle = await openDatabase({ url, dataDir })
  try {
    const rows = await sql<{ name: string }>`select name from hangar_migrations order by name`.execute(
      handle.db,
    )
    return rows.rows.map((row) => row.name)
  } finally {
    await handle.close()
  }
}

/** Rows whose foreign key points nowhere (SQLite checks them only on write; a table rebuild could lose one). */
async function danglingForeignKeys(url: string | undefined, dataDir: string): Promise<unknown[]> {
  if (url) return [] // PostgreSQL validates every foreign key when a constraint is (re)created.
  const handle = await openDatabase({ url, dataDir })
  try {
    return (await sql`pragma foreign_key_check`.execute(handle.db)).rows
  } finally {
    await handle.close()
  }
}

describe.each(ENGINES)('upgrading a first-release store ($name)', (engine) => {
  it('migrates to the latest migration, passes the integrity check and reads back every table', async () => {
    const dataDir = await makeTempDir('hangar-upgrade-')
    const url = await engine.loadFixture(dataDir)
    // The fixture's invite link is open until 2026-01-13: read it back at a time it is still valid.
    const store = await openStore({ dataDir, url, clock: () => new Date('2026-01-10T12:00:00.000Z') })
    try {
      expect(await appliedMigrations(url, dataDir)).toEqual(Object.keys(MIGRATIONS).sort())
      expect(await store.integrityCheck()).toBe('ok')
      expect(await danglingForeignKeys(url, dataDir)).toEqual([])

      const owner = await store.users.findOwner()
      expect(owner).toMatchObject({ id: 'usr_owner01', name: 'alice', role: 'owner' })
      expect((await store.users.list()).map((user) => user.name)).toEqual(['alice', 'bob'])
      const alice = store.forUser('usr_owner01')

      const tokens = await alice.tokens.list({ includeRevoked: true })
      expect(tokens.map((token) => [token.id, token.scopes])).toEqual(
        expect.arrayContaining([
          ['pat_laptop01', ['api', 'approve']],
          ['pat_proxy001', ['api']],
        ]),
      )
      expect(await store.authLookups.findSession('ses_browser1')).toMatchObject({ kind: 'browser' })
      expect(await store.authLookups.consumeLoginLink('lnk_invite01', 'c2hhMjU2LWludml0ZQ')).toBeDefined()

      const credentials = await alice.credentials.list()
      expect(credentials.map((credential) => credential.provider).sort()).toEqual([
        'anthropic',
        'openai-compatible',
      ])
      expect((await alice.profiles.get('reviewer'))?.definition).toMatchObject({ agent: 'claude' })
      expect((await alice.workspaces.list({ includeRemoved: true })).map((w) => w.id).sort()).toEqual([
        'wsp_copy0001',
        'wsp_feature1',
      ])

      const conversations = await alice.conversations.list()
      expect(conversations.map((conversation) => conversation.id).sort()).toEqual([
        'cnv_fixbug01',
        'cnv_review01',
      ])
      const messages = await alice.conversations.listMessages('cnv_fixbug01')
      expect(messages.map((message) => message.message.role)).toEqual([
        'user',
        'assistant',
        'tool',
        'assistant',
      ])

      expect(await alice.runs.get('run_0001')).toMatchObject({
        status: 'succeeded',
        usage: { inputTokens: 5120, outputTokens: 880 },
      })
      expect(await alice.runs.get('run_0002')).toMatchObject({ status: 'failed', dependsOn: ['run_0001'] })
      const events = await alice.runs.listEvents('run_0001')
      expect(events.map((event) => event.type)).toEqual(['run-start', 'text-delta', 'run-end'])

      const actions = await alice.actions.list()
      expect(actions.map((action) => [action.id, action.status]).sort()).toEqual([
        ['act_0001', 'pending'],
        ['act_0002', 'rejected'],
      ])
      expect((await alice.audit.list()).map((event) => event.action).sort()).toEqual([
        'action.reject',
        'token.create',
      ])

      // The upgraded store takes new writes next to the old rows.
      const added = await alice.conversations.create({
        title: 'after upgrade',
        profile: 'default',
        project: '/p',
      })
      await alice.conversations.appendMessage(added.id, {
        role: 'user',
        content: [{ type: 'text', text: 'hi' }],
      })
      expect(await alice.conversations.listMessages(added.id)).toHaveLength(1)
      expect(await store.integrityCheck()).toBe('ok')
    } finally {
      await store.close()
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})

describe.each(['sqlite', 'postgres'] as const)('an up-to-date store (%s)', (engineName) => {
  it('opens without running the migrator, and writes nothing', async () => {
    const dataDir = await makeTempDir('hangar-current-')
    const url = engineName === 'postgres' ? await freshPostgresUrl() : undefined
    try {
      await (await openStore({ dataDir, url })).close()
      // The migrator puts its lock row back whenever it runs; an open that skips it leaves it gone. (A row,
      // not the table: a DROP races the catalog reads of other tests' migrators in the shared database.)
      const handle = await openDatabase({ dataDir, url })
      await sql`delete from hangar_migrations_lock`.execute(handle.db)
      await handle.close()

      const before = await snapshot(dataDir, url)
      const store = await openStore({ dataDir, url })
      await store.close()
      expect(await snapshot(dataDir, url)).toEqual(before)
      expect(await appliedMigrations(url, dataDir)).toEqual(Object.keys(MIGRATIONS).sort())
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})

const FUTURE_MIGRATION = '9999-from-a-newer-hangar'

describe.each(['sqlite', 'postgres'] as const)('a store written by a newer Hangar (%s)', (engineName) => {
  it('is refused with a clear message and left untouched', async () => {
    const dataDir = await makeTempDir('hangar-newer-')
    const url = engineName === 'postgres' ? await freshPostgresUrl() : undefined
    try {
      const store = await openStore({ dataDir, url })
      await store.users.create({ name: 'alice', role: 'owner' })
      await store.close()
      const handle = await openDatabase({ dataDir, url })
      await sql`insert into hangar_migrations (name, timestamp) values (${FUTURE_MIGRATION}, '2030-01-01T00:00:00.000Z')`.execute(
        handle.db,
      )
      await handle.close()

      const before = await snapshot(dataDir, url)
      const refusal = openStore({ dataDir, url })
      await expect(refusal).rejects.toMatchObject({
        code: 'database_unavailable',
        retryable: false,
        message: expect.stringMatching(
          new RegExp(`written by a newer Hangar .*${FUTURE_MIGRATION}.*; upgrade hangar`),
        ),
      })
      expect(await snapshot(dataDir, url)).toEqual(before)
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})

/** The SQLite file's bytes, or every row of the PostgreSQL schema's tables, as something comparable. */
async function snapshot(dataDir: string, url: string | undefined): Promise<unknown> {
  if (!url)
    return createHash('sha256')
      .update(await readFile(path.join(dataDir, 'hangar.db')))
      .digest('hex')
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const tables = await client.query<{ table_name: string }>(
      `select table_name from information_schema.tables where table_schema = current_schema() order by table_name`,
    )
    const contents: Record<string, unknown[]> = {}
    for (const { table_name: table } of tables.rows) {
      contents[table] = (await client.query(`select * from "${table}" order by 1`)).rows
    }
    return contents
  } finally {
    await client.end()
  }
}
