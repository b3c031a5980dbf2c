// The first schema. Portable SQL only: it runs unchanged on SQLite and PostgreSQL.
import { type Kysely, sql } from 'kysely'
import { RUN_STATUSES, WRITE_CLASSIFICATIONS } from '../../core/events.js'

const PENDING_ACTION_STATUSES = [
  'pending',
  'applied',
  'rejected',
  'expired',
  'conflict',
  'failed',
  'superseded',
]

function oneOf(column: string, values: readonly string[]) {
  return sql.raw(`${column} IN (${values.map((value) => `'${value}'`).join(', ')})`)
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull().unique())
    .addColumn('role', 'text', (column) => column.notNull().check(oneOf('role', ['owner', 'member'])))
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('disabled_at', 'text')
    .execute()

  await db.schema
    .createTable('personal_access_tokens')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('kind', 'text', (column) => column.notNull().check(oneOf('kind', ['user', 'proxy'])))
    .addColumn('scopes', 'text', (column) => column.notNull())
    .addColumn('profile', 'text')
    .addColumn('secret_hash', 'text', (column) => column.notNull())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('expires_at', 'text', (column) => column.notNull())
    .addColumn('last_used_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute()
  await db.schema.createIndex('pat_user_idx').on('personal_access_tokens').column('user_id').execute()

  for (const table of ['sessions', 'login_links'] as const) {
    let builder = db.schema
      .createTable(table)
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    builder =
      table === 'sessions'
        ? builder
            .addColumn('kind', 'text', (column) => column.notNull().check(oneOf('kind', ['browser', 'cli'])))
            .addColumn('secret_hash', 'text', (column) => column.notNull())
            .addColumn('created_at', 'text', (column) => column.notNull())
            .addColumn('expires_at', 'text', (column) => column.notNull())
            .addColumn('last_seen_at', 'text')
            .addColumn('revoked_at', 'text')
        : builder
            .addColumn('purpose', 'text', (column) =>
              column.notNull().check(oneOf('purpose', ['login', 'invite'])),
            )
            .addColumn('secret_hash', 'text', (column) => column.notNull())
            .addColumn('created_at', 'text', (column) => column.notNull())
            .addColumn('expires_at', 'text', (column) => column.notNull())
            .addColumn('used_at', 'text')
    await builder.execute()
  }

  await db.schema
    .createTable('provider_credentials')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'text', (column) => column.notNull())
    .addColumn('key_envelope', 'text')
    .addColumn('key_last4', 'text')
    .addColumn('model', 'text')
    .addColumn('base_url', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .addUniqueConstraint('provider_credentials_user_provider_unique', ['user_id', 'provider'])
    .execute()

  await db.schema
    .createTable('agent_profiles')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('definition', 'text', (column) => column.notNull())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .addUniqueConstraint('agent_profiles_user_name_unique', ['user_id', 'name'])
    .execute()

  await db.schema
    .createTable('workspaces')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('conversation_id', 'text')
    .addColumn('kind', 'text', (column) =>
      column.notNull().check(oneOf('kind', ['worktree', 'copy', 'in_place'])),
    )
    .addColumn('path', 'text', (column) => column.notNull())
    .addColumn('project_path', 'text', (column) => column.notNull())
    .addColumn('branch', 'text')
    .addColumn('base_ref', 'text')
    .addColumn('created_branch', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('target', 'text', (column) => column.notNull())
    .addColumn('node_id', 'text')
    .addColumn('status', 'text', (column) => column.notNull().check(oneOf('status', ['active', 'removed'])))
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .execute()

  await db.schema
    .createTable('conversations')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('title', 'text', (column) => column.notNull())
    .addColumn('profile', 'text', (column) => column.notNull())
    .addColumn('project', 'text', (column) => column.notNull())
    .addColumn('workspace_id', 'text', (column) => column.references('workspaces.id').onDelete('set null'))
    .addColumn('status', 'text', (column) =>
      column.notNull().check(oneOf('status', ['idle', 'running', 'awaiting_confirmation'])),
    )
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'text', (column) => column.notNull())
    .execute()
  await db.schema
    .createIndex('conversations_user_idx')
    .on('conversations')
    .columns(['user_id', 'updated_at'])
    .execute()

  await db.schema
    .createTable('runs')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('conversation_id', 'text', (column) =>
      column.references('conversations.id').onDelete('cascade'),
    )
    .addColumn('agent', 'text', (column) => column.notNull())
    .addColumn('adapter', 'text', (column) => column.notNull())
    .addColumn('model', 'text')
    .addColumn('prompt', 'text', (column) => column.notNull())
    .addColumn('cwd', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull().check(oneOf('status', RUN_STATUSES)))
    .addColumn('reason', 'text')
    .addColumn('continues', 'text')
    .addColumn('depends_on', 'text', (column) => column.notNull().defaultTo('[]'))
    .addColumn('owner_node', 'text')
    .addColumn('owner_pid', 'integer')
    .addColumn('owner_boot_id', 'text')
    .addColumn('session_id', 'text')
    .addColumn('usage', 'text')
    .addColumn('cost_usd', 'double precision')
    .addColumn('workspace_finalize', 'text', (column) =>
      column.check(oneOf('workspace_finalize', ['ok', 'failed'])),
    )
    .addColumn('finalize_reason', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('started_at', 'text')
    .addColumn('ended_at', 'text')
    .execute()
  await db.schema.createIndex('runs_user_idx').on('runs').columns(['user_id', 'created_at']).execute()
  await db.schema.createIndex('runs_status_idx').on('runs').columns(['status', 'created_at']).execute()
  await db.schema.createIndex('runs_conversation_idx').on('runs').column('conversation_id').execute()

  await db.schema
    .createTable('messages')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('conversation_id', 'text', (column) =>
      column.notNull().references('conversations.id').onDelete('cascade'),
    )
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (column) => column.notNull())
    .addColumn('role', 'text', (column) =>
      column.notNull().check(oneOf('role', ['user', 'assistant', 'tool'])),
    )
    .addColumn('content', 'text', (column) => column.notNull())
    .addColumn('tool_call_id', 'text')
    .addColumn('run_id', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addUniqueConstraint('messages_conversation_seq_unique', ['conversation_id', 'seq'])
    .addCheckConstraint(
      'messages_tool_call_id_iff_tool',
      sql`(role = 'tool' AND tool_call_id IS NOT NULL) OR (role <> 'tool' AND tool_call_id IS NULL)`,
    )
    .execute()

  await db.schema
    .createTable('run_events')
    .addColumn('run_id', 'text', (column) => column.notNull().references('runs.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (column) => column.notNull())
    .addColumn('ts', 'text', (column) => column.notNull())
    .addColumn('type', 'text', (column) => column.notNull())
    .addColumn('data', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('run_events_pk', ['run_id', 'seq'])
    .execute()

  await db.schema
    .createTable('pending_actions')
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
    .addColumn('status', 'text', (column) => column.notNull().check(oneOf('status', PENDING_ACTION_STATUSES)))
    .addColumn('decision_reason', 'text')
    .addColumn('result', 'text')
    .addColumn('created_at', 'text', (column) => column.notNull())
    .addColumn('expires_at', 'text', (column) => column.notNull())
    .addColumn('decided_at', 'text')
    .execute()
  await db.schema
    .createIndex('pending_actions_user_idx')
    .on('pending_actions')
    .columns(['user_id', 'status'])
    .execute()

  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('actor', 'text', (column) => column.notNull())
    .addColumn('action', 'text', (column) => column.notNull())
    .addColumn('target_type', 'text')
    .addColumn('target_id', 'text')
    .addColumn('details', 'text', (column) => column.notNull())
    .addColumn('created_at', 'text', (column) => column.notNull())
    .execute()
  await db.schema
    .createIndex('audit_events_user_idx')
    .on('audit_events')
    .columns(['user_id', 'created_at'])
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'audit_events',
    'pending_actions',
    'run_events',
    'messages',
    'runs',
    'conversations',
    'workspaces',
    'agent_profiles',
    'provider_credentials',
    'login_links',
    'sessions',
    'personal_access_tokens',
    'users',
  ]) {
    await db.schema.dropTable(table).ifExists().execute()
  }
}
