// One fresh PostgreSQL database per test run, created here and dropped afterwards. A missing server
// fails the run — the store suite must never silently pass on SQLite alone.
import pg from 'pg'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string
  }
}

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

  return async () => {
    const cleanup = new pg.Client({ connectionString: baseUrl })
    await cleanup.connect()
    await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await cleanup.end()
  }
}
