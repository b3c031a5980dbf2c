// The one migration set, applied on open by every process (daemon or CLI). Kysely's migrator takes a
// lock (an advisory lock on PostgreSQL), so several daemons starting together migrate once.
import { type Kysely, type Migration, Migrator, sql } from 'kysely'
import { AppError } from '../core/errors.js'
import * as initial from './migrations/0001-initial.js'
import * as actionPrecondition from './migrations/0002-action-precondition.js'
import * as runAgentProcess from './migrations/0003-run-agent-process.js'
import * as runWorkspaceSync from './migrations/0004-run-workspace-sync.js'
import * as proxyRequests from './migrations/0005-proxy-requests.js'
import * as nodes from './migrations/0006-nodes.js'
import * as runPinnedNode from './migrations/0007-run-pinned-node.js'
import * as actionApplying from './migrations/0008-action-applying.js'
import * as builtinSettings from './migrations/0009-builtin-settings.js'
import * as projects from './migrations/0010-projects.js'
import * as workspaceLifecycle from './migrations/0011-workspace-lifecycle.js'
import * as reviewLand from './migrations/0012-review-land.js'
import * as attempts from './migrations/0013-attempts.js'
import * as notifications from './migrations/0015-notifications.js'
import * as triggers from './migrations/0016-triggers.js'
import * as workspaceHostCopies from './migrations/0017-workspace-host-copies.js'
import * as proxySpend from './migrations/0018-proxy-spend.js'
import * as uncheckedRunKeys from './migrations/0019-unchecked-run-keys.js'
import * as unfinalizedRunsIndex from './migrations/0020-unfinalized-runs-index.js'
import * as partialRunIndex from './migrations/0021-partial-run-index.js'
import * as proxyUsage from './migrations/0022-proxy-usage.js'
import type { Database } from './schema.js'
import { VERSION } from '../version.js'

export const MIGRATIONS: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-action-precondition': actionPrecondition,
  '0003-run-agent-process': runAgentProcess,
  '0004-run-workspace-sync': runWorkspaceSync,
  '0005-proxy-requests': proxyRequests,
  '0006-nodes': nodes,
  '0007-run-pinned-node': runPinnedNode,
  '0008-action-applying': actionApplying,
  '0009-builtin-settings': builtinSettings,
  '0010-projects': projects,
  '0011-workspace-lifecycle': workspaceLifecycle,
  '0012-review-land': reviewLand,
  '0013-attempts': attempts,
  '0015-notifications': notifications,
  '0016-triggers': triggers,
  '0017-workspace-host-copies': workspaceHostCopies,
  '0018-proxy-spend': proxySpend,
  '0019-unchecked-run-keys': uncheckedRunKeys,
  '0020-unfinalized-runs-index': unfinalizedRunsIndex,
  '0021-partial-run-index': partialRunIndex,
  '0022-proxy-usage': proxyUsage,
}

export async function migrateToLatest(db: Kysely<Database>, engine: 'sqlite' | 'postgres'): Promise<void> {
  // Kysely looks for its bookkeeping tables in any schema unless told which one; name ours so two
  // Hangar stores in one PostgreSQL database (different search_path) never see each other's tables.
  const schema =
    engine === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
      : undefined
  const applied = await appliedMigrations(db, engine, schema)
  refuseNewerDatabase(applied)
  // Already up to date, the common case on every start and CLI command: Kysely's migrator would still
  // introspect the whole catalog and take its lock (250-400 ms on PostgreSQL, against two small queries).
  // A migration's row is written after its DDL (in the same transaction on PostgreSQL), so a store that
  // lists them all has them all.
  if (Object.keys(MIGRATIONS).every((name) => applied.includes(name))) return
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => MIGRATIONS },
    migrationTableName: 'hangar_migrations',
    migrationLockTableName: 'hangar_migrations_lock',
    ...(schema && { migrationTableSchema: schema }),
  })
  const { error, results } = await migrator.migrateToLatest()
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName
    throw new AppError(
      'database_unavailable',
      `database migration ${failed ?? ''} failed: ${messageOf(error)}`,
      {
        retryable: false,
        hint: 'the store was left as it was; check the database log',
        cause: error,
      },
    )
  }
}

/** The migrations a store has run (none when it has no bookkeeping table yet). */
async function appliedMigrations(
  db: Kysely<Database>,
  engine: 'sqlite' | 'postgres',
  schema: string | undefined,
): Promise<string[]> {
  const exists =
    engine === 'postgres'
      ? await sql<{ found: number }>`select 1 as found from information_schema.tables
          where table_schema = ${schema ?? 'public'} and table_name = 'hangar_migrations'`.execute(db)
      : await sql<{ found: number }>`select 1 as found from sqlite_master
          where type = 'table' and name = 'hangar_migrations'`.execute(db)
  if (exists.rows.length === 0) return []
  const applied = await sql<{ name: string }>`select name from hangar_migrations order by name`.execute(db)
  return applied.rows.map((row) => row.name)
}

/**
 * Migrations are forward-only: a database that has run a migration this binary does not know was written
 * by a newer Hangar, whose schema this code cannot read or write safely. It is refused before the migrator
 * (which takes a lock, i.e. writes) touches it, so the file or schema stays exactly as it was.
 */
function refuseNewerDatabase(applied: readonly string[]): void {
  const unknown = applied.filter((name) => !Object.hasOwn(MIGRATIONS, name))
  if (unknown.length === 0) return
  throw new AppError(
    'database_unavailable',
    `this database was written by a newer Hangar (it has migration ${unknown.join(', ')}, unknown to hangar ${VERSION}); upgrade hangar`,
    {
      retryable: false,
      hint: 'install the Hangar version that wrote it, or a newer one; the database was not changed',
      details: { unknownMigrations: unknown },
    },
  )
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
