// One fresh PostgreSQL database per test run, created here and dropped afterwards. A missing server
// fails the run — the store suite must never silently pass on SQLite alone.
//
// Most tests want an empty store, and every one of them on PostgreSQL used to pay the whole migration set
// (0.5–1 s on two busy cores, some hundreds of times a run). So a template schema is migrated here once,
// by the real migrations, and dumped (pg_dump, schema and the migrator's rows); a test's fresh schema
// replays that dump in one statement (test/helpers/store-engines.ts). Migrating an empty schema is still
// tested, where a test asks for one (freshPostgresUrl()) and by the upgrade tests.
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { openStore } from '../../src/store/store.js'

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string
    /** The SQL that makes a migrated store: TEMPLATE_SCHEMA stands for the schema to create. */
    migratedSchemaSql: string
  }
}

/** The template's name in the dump, replaced by a fresh schema's name (unique enough to find nowhere else). */
export const TEMPLATE_SCHEMA = 'hangar_template_4f9c2e'

export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres'

export default async function setup(project: TestProject) {
  const baseUrl = process.env.HANGAR_TEST_DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL
  const admin = new pg.Client({ connectionString: baseUrl, connectionTimeoutMillis: 5000 })
  try {
    await admin.connect()
  } catch (error) {
    throw new Error(
      `PostgreSQL is required by the test suite and is not reachable at ${baseUrl.replace(/:[^:@/]+@/, ':***@')} ` +
        `(${(error as Error).message}). Start it (bash .ci/run does) or set HANGAR_TEST_DATABASE_URL.`,
      { cause: error },
    )
  }
  const name = `hangar_test_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(baseUrl)
  url.pathname = `/${name}`
  project.provide('postgresUrl', url.toString())
  project.provide('migratedSchemaSql', await migratedSchemaSql(url.toString()))

  return async () => {
    const cleanup = new pg.Client({ connectionString: baseUrl })
    await cleanup.connect()
    await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await cleanup.end()
  }
}

/** Migrates TEMPLATE_SCHEMA in the run's database and returns its dump, ready to replay. */
async function migratedSchemaSql(runUrl: string): Promise<string> {
  const admin = new pg.Client({ connectionString: runUrl })
  await admin.connect()
  await admin.query(`CREATE SCHEMA ${TEMPLATE_SCHEMA}`)
  await admin.end()
  const templateUrl = new URL(runUrl)
  templateUrl.searchParams.set('options', `-c search_path=${TEMPLATE_SCHEMA}`)
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-template-'))
  try {
    await (await openStore({ dataDir, url: templateUrl.toString() })).close()
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
  const { stdout } = await promisify(execFile)(
    'pg_dump',
    ['--schema', TEMPLATE_SCHEMA, '--no-owner', '--no-privileges', '--inserts', runUrl],
    { maxBuffer: 16 * 1024 * 1024 },
  ).catch((error: Error & { stderr?: string }) => {
    // Not error.message: it repeats the command line, and so the URL with any password in it.
    throw new Error(
      `pg_dump (PostgreSQL's client tools) is required by the test suite and failed: ${error.stderr?.trim() || (error as { code?: string }).code}. bash .ci/run installs it.`,
    )
  })
  // psql meta-commands (\restrict, since 15.14) are not SQL.
  return stdout
    .split('\n')
    .filter((line) => !line.startsWith('\\'))
    .join('\n')
}
