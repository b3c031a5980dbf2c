// Both engines for one suite: `describe.each(STORE_ENGINES)`. Each `open()` gets an empty store —
// a temp data dir on SQLite, a fresh schema inside this run's database on PostgreSQL.
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { inject } from 'vitest'
import type { Clock } from '../../src/core/ids.js'
import type { Redactor } from '../../src/core/redact.js'
import { openStore, type Store } from '../../src/store/store.js'
import { TEMPLATE_SCHEMA } from '../setup/postgres-global-setup.js'

export interface TestStore {
  store: Store
  /** The --database value for a daemon or CLI that should share this store ('' = SQLite in dataDir). */
  databaseUrl: string
  dataDir: string
  dispose(): Promise<void>
}

export interface StoreEngine {
  name: 'sqlite' | 'postgres'
  open(options?: { clock?: Clock; redactor?: Redactor }): Promise<TestStore>
}

export async function makeTempDir(prefix = 'hangar-test-'): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix))
}

/**
 * A fresh schema in this run's database, as a URL whose connections use it: empty, or (`migrated`) as a
 * store's first open leaves it, made from the template the global setup migrated (a fraction of the
 * migrations' cost).
 */
export async function freshPostgresUrl(options: { migrated?: boolean } = {}): Promise<string> {
  const runUrl = inject('postgresUrl')
  const schema = `s_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  await onRunDatabase(
    options.migrated
      ? inject('migratedSchemaSql').replaceAll(TEMPLATE_SCHEMA, schema)
      : `CREATE SCHEMA ${schema}`,
  )
  const url = new URL(runUrl)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return url.toString()
}

/**
 * A database of its own, for a test that migrates down: a down migration drops tables, and Kysely's migrator
 * lists the tables of every schema of its database, which fails on a table dropped in the middle of the
 * listing (the other tests' schemas share this run's database). `drop()` removes it.
 */
export async function freshPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `hangar_t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  await onRunDatabase(`CREATE DATABASE ${name}`)
  const url = new URL(inject('postgresUrl'))
  url.pathname = `/${name}`
  return { url: url.toString(), drop: () => onRunDatabase(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
}

/** Runs `statement` on a connection of its own to this run's database. */
async function onRunDatabase(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: inject('postgresUrl') })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

/**
 * Both engines for a migration test that migrates down: SQLite in the test's data dir (`url` undefined),
 * PostgreSQL in a database of its own (freshPostgresDatabase). `drop()` once done.
 */
export const MIGRATION_ENGINES = [
  { name: 'sqlite', database: async () => ({ url: undefined, drop: async () => {} }) },
  { name: 'postgres', database: freshPostgresDatabase },
] as const

export const STORE_ENGINES: StoreEngine[] = [
  {
    name: 'sqlite',
    async open(options = {}) {
      const dataDir = await makeTempDir()
      const store = await openStore({ dataDir, ...options })
      return {
        store,
        databaseUrl: '',
        dataDir,
        async dispose() {
          await store.close()
          await rm(dataDir, { recursive: true, force: true })
        },
      }
    },
  },
  {
    name: 'postgres',
    async open(options = {}) {
      const dataDir = await makeTempDir()
      const databaseUrl = await freshPostgresUrl({ migrated: true })
      const store = await openStore({ dataDir, url: databaseUrl, ...options })
      return {
        store,
        databaseUrl,
        dataDir,
        async dispose() {
          await store.close()
          await rm(dataDir, { recursive: true, force: true })
        },
      }
    },
  },
]
