// Writes the upgrade fixtures: a store as the first release left it (migration 0001-initial only) with
// realistic rows in every table, as a SQLite file and as a PostgreSQL dump. Run once per release line
// whose schema the tests must keep upgrading (needs `npm run build` and a PostgreSQL with pg_dump):
//   node scripts/make-upgrade-fixtures.mjs [postgres://postgres@127.0.0.1:5432/postgres]
// The fixtures are committed; the test (src/store/upgrade.test.ts) never regenerates them.
import { execFileSync } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely'
import pg from 'pg'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const fixtures = path.join(root, 'test/fixtures/upgrade')
const FIRST_MIGRATION = '0001-initial'
const SCHEMA = 'hangar_upgrade_fixture'
const { openSqliteFile } = await import(path.join(root, 'dist/src/store/sqlite-driver.js'))
const initial = await import(path.join(root, 'dist/src/store/migrations/0001-initial.js'))
const rows = readFileSync(path.join(fixtures, '0001-rows.sql'), 'utf8')

async function applyFirstMigration(db, schema) {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => ({ [FIRST_MIGRATION]: initial }) },
    migrationTableName: 'hangar_migrations',
    migrationLockTableName: 'hangar_migrations_lock',
    ...(schema && { migrationTableSchema: schema }),
  })
  const { error } = await migrator.migrateToLatest()
  if (error) throw error
}

async function writeSqliteFixture() {
  const file = path.join(fixtures, 'first-release.sqlite')
  rmSync(file, { force: true })
  const sqlite = openSqliteFile(file)
  sqlite.pragma('foreign_keys = ON')
  const db = new Kysely({ dialect: new SqliteDialect({ database: sqlite }) })
  await applyFirstMigration(db)
  sqlite.exec(rows)
  sqlite.exec('VACUUM')
  await db.destroy()
  console.log(`wrote ${path.relative(root, file)}`)
}

async function writePostgresFixture(url) {
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE; CREATE SCHEMA ${SCHEMA}`)
  const scoped = new URL(url)
  scoped.searchParams.set('options', `-c search_path=${SCHEMA}`)
  const pool = new pg.Pool({ connectionString: scoped.toString() })
  const db = new Kysely({ dialect: new PostgresDialect({ pool }) })
  try {
    await applyFirstMigration(db, SCHEMA)
    await pool.query(rows)
    const dump = execFileSync(
      'pg_dump',
      ['--schema', SCHEMA, '--no-owner', '--no-privileges', '--inserts', '--dbname', url],
      { encoding: 'utf8' },
    )
    // Schema-free: the test loads it into a throw-away schema of its own through search_path.
    const portable = dump
      .split('\n')
      // psql meta-commands (\restrict) are not SQL; the schema and search_path are the loader's.
      .filter((line) => !/^CREATE SCHEMA |^SELECT pg_catalog\.set_config\('search_path'|^\\/.test(line))
      .join('\n')
      .replaceAll(`${SCHEMA}.`, '')
    const file = path.join(fixtures, 'first-release.postgres.sql')
    writeFileSync(file, portable)
    console.log(`wrote ${path.relative(root, file)}`)
  } finally {
    await db.destroy()
    await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`)
    await admin.end()
  }
}

await writeSqliteFixture()
await writePostgresFixture(process.argv[2] ?? 'postgres://postgres@127.0.0.1:5432/postgres')
