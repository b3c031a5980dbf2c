// Kysely's SQLite driver prepares every query it runs (better-sqlite3's `prepare`: SQLite parses and plans
// the text anew), though a daemon runs the same few hundred SQL texts over and over — every run start,
// status change and API read. Kysely is given the database through this wrapper instead, which prepares
// each text once and hands back the same statement after, keeping the most recently used ones.
// A statement stays valid across schema changes: SQLite recompiles it on its next use (sqlite3_prepare_v2).
import type SqliteDatabase from 'better-sqlite3'
import type { SqliteDatabase as KyselySqliteDatabase } from 'kysely'

/** Distinct SQL texts kept: Kysely's own queries are a few hundred; `IN (?, ?, …)` lists vary in length. */
export const STATEMENT_CACHE_SIZE = 500

export function withStatementCache(
  sqlite: SqliteDatabase.Database,
  size = STATEMENT_CACHE_SIZE,
): KyselySqliteDatabase {
  // A Map keeps insertion order: re-inserting on use makes its first entry the least recently used.
  const statements = new Map<string, SqliteDatabase.Statement>()
  return {
    prepare(sql) {
      const cached = statements.get(sql)
      if (cached) {
        // Still being iterated (a streamed query not yet consumed): that one is busy, this use gets its own.
        if (cached.busy) return sqlite.prepare(sql)
        statements.delete(sql)
        statements.set(sql, cached)
        return cached
      }
      const statement = sqlite.prepare(sql)
      if (statements.size >= size) statements.delete(statements.keys().next().value!)
      statements.set(sql, statement)
      return statement
    },
    close() {
      statements.clear()
      sqlite.close()
    },
  }
}
