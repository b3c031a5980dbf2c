// Confirming an action is no longer one transaction around the write (a long command froze the store):
// the action is claimed `applying` (committed), applied outside any transaction, then settled. While it
// applies, the row names who applies it (node, pid, boot id) and, for a command, its process group, so a
// restarted daemon can kill what a crash left running and mark the action failed — never pending again.
// The status CHECK gains `applying`; a CHECK cannot be altered in SQLite, so the table is rebuilt (on
// both engines: one portable path).
import { type Kysely, sql } from 'kysely'

const STATUSES = ['pending', 'applying', 'applied', 'rejected', 'expired', 'conflict', 'failed', 'superseded']
const PREVIOUS_STATUSES = STATUSES.filter((status) => status !== 'applying')
const WRITE_CLASSIFICATIONS = ['safe_create', 'safe_update', 'destructive_update', 'destructive_delete']

const COPIED_COLUMNS = [
  'id',
  'user_id',
  'run_id',
  'conversation_id',
  'tool',
  'tool_call_id',
  'input',
  'input_hash',
  'summary',
  'diff',
  'classification',
  'origin',
  'status',
  'decision_reason',
  'result',
  'precondition',
  'created_at',
  'expires_at',
  'decided_at',
]

function oneOf(column: string, values: readonly string[]) {
  return sql.raw(`${column} IN (${values.map((value) => `'${value}'`).join(', ')})`)
}

async function rebuild(
  db: Kysely<unknown>,
  statuses: readonly string[],
  withApplying: boolean,
): Promise<void> {
  let table = db.schema
    .createTable('pending_actions_next')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('run_id', 'text', (column) => column.references('runs.id').onDelete('set null'))
    .addColumn('conversation_id', 'text', (column) =>
      column.references('conversations.id').onDelete('cascade'),
    )
    .addColumn('tool', 'text', (column) => column.notNull())
    .addColumn('tool_call_id', 'text')
    .addColumn('input', 'text', (column) => column.notNull())
    .addColumn('input_hash', 'text', (column) => column.notNull())
    .addColumn('summary', 'text', (column) => column.notNull())
    .addColumn('diff', 'text')
    .addColumn('classification', 'text', (column) =>
      column.notNull().check(oneOf('classification', WRITE_CLASSIFICATIONS)),
    )
    .addColumn('origin', 'text', (column) => column.notNull().check(oneOf('origin', ['chat', 'mcp'])))
    .addColumn('status', 'text', (column) => column.notNull().check(oneOf('status', statuses)))
    .addColumn('decision_reason', 'text')
    .addColumn('result', 'text')
    .addColumn('precondition', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('expires_at', 'text', (column) => column.notNull())
    .addColumn('decided_at', 'text')
  if (withApplying) {
    table = table
      // The audit actor of the decision (`user:<id>`, `pat:<id>`), kept for recovery's audit row.
      .addColumn('decided_by', 'text')
      .addColumn('applying_node', 'text')
      .addColumn('applying_pid', 'integer')
      .addColumn('applying_boot_id', 'text')
      .addColumn('apply_pgid', 'integer')
  }
  await table.execute()
  const columns = sql.raw(COPIED_COLUMNS.join(', '))
  await sql`insert into pending_actions_next (${columns}) select ${columns} from pending_actions`.execute(db)
  await db.schema.dropTable('pending_actions').execute()
  await db.schema.alterTable('pending_actions_next').renameTo('pending_actions').execute()
  await db.schema
    .createIndex('pending_actions_user_idx')
    .on('pending_actions')
    .columns(['user_id', 'status'])
    .execute()
}

/** PostgreSQL runs each migration in a transaction already; SQLite's DDL is transactional too, if asked. */
async function atomically(db: Kysely<unknown>, work: (db: Kysely<unknown>) => Promise<void>): Promise<void> {
  if (db.isTransaction) return work(db)
  await db.transaction().execute(work)
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await atomically(db, (transaction) => rebuild(transaction, STATUSES, true))
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await atomically(db, async (transaction) => {
    // An action caught mid-apply cannot be represented any more: it failed.
    await sql`update pending_actions set status = 'failed' where status = 'applying'`.execute(transaction)
    await rebuild(transaction, PREVIOUS_STATUSES, false)
  })
}
