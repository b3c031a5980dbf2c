// Test-only: every row of every table as one string, to prove a secret was never stored.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'

const TABLES = [
  'users',
  'personal_access_tokens',
  'sessions',
  'login_links',
  'provider_credentials',
  'agent_profiles',
  'conversations',
  'messages',
  'runs',
  'run_events',
  'pending_actions',
  'audit_events',
  'workspaces',
]

/** SQLite: the raw bytes of the database and its WAL; PostgreSQL: every row as JSON. */
export async function dumpStore(databaseUrl: string, dataDir: string): Promise<string> {
  if (!databaseUrl) {
    const parts = await Promise.all(
      ['hangar.db', 'hangar.db-wal'].map((name) =>
        readFile(path.join(dataDir, name)).catch(() => Buffer.alloc(0)),
      ),
    )
    return Buffer.concat(parts).toString('latin1')
  }
  const db = new Kysely<Record<string, Record<string, unknown>>>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: databaseUrl, max: 1 }) }),
  })
  try {
    const rows = await Promise.all(TABLES.map((table) => sql`select * from ${sql.table(table)}`.execute(db)))
    return JSON.stringify(rows.map((result) => result.rows))
  } finally {
    await db.destroy()
  }
}
