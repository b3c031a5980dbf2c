// The repository layer: the only place with SQL. Everything per user goes through `forUser(userId)`, so a
// query cannot forget its owner; the few unscoped reads (users, credential lookups, envelopes for
// rewrap, the workspace sweep) are named for what they are.
import { sql } from 'kysely'
import { type Clock, systemClock } from '../core/ids.js'
import { createRedactor, type Redactor } from '../core/redact.js'
import { migrateToLatest } from './migrate.js'
import { type DatabaseHandle, type OpenDatabaseOptions, openDatabase } from './open-database.js'
import { createActionsRepository, createApplyingActions } from './repositories/actions-repository.js'
import { createAttemptsRepository, createPendingAttempts } from './repositories/attempts-repository.js'
import { createAuditRepository } from './repositories/audit-repository.js'
import { createAuthLookups } from './repositories/auth-lookups.js'
import { createBuiltinSettingsRepository } from './repositories/builtin-settings-repository.js'
import type { RepositoryContext } from './repositories/context.js'
import { createConversationsRepository } from './repositories/conversations-repository.js'
import {
  createCredentialEnvelopes,
  createCredentialsRepository,
} from './repositories/credentials-repository.js'
import { createProfilesRepository } from './repositories/profiles-repository.js'
import { createProjectsRepository } from './repositories/projects-repository.js'
import { createReviewCommentsRepository } from './repositories/review-comments-repository.js'
import type { StoreNotifications } from './pg-notifications.js'
import { createNodesRepository } from './repositories/nodes-repository.js'
import { createNotificationsRepository } from './repositories/notifications-repository.js'
import {
  createProxyRequestLog,
  createProxyRequestsRepository,
} from './repositories/proxy-requests-repository.js'
import { createUsageRepository } from './repositories/usage-repository.js'
import { createRunQueue, createRunsRepository } from './repositories/runs-repository.js'
import { createSessionsRepository } from './repositories/sessions-repository.js'
import { createTokensRepository } from './repositories/tokens-repository.js'
import { createTriggersRepository } from './repositories/triggers-repository.js'
import { createUsersRepository } from './repositories/users-repository.js'
import { createWorkspaceSweep, createWorkspacesRepository } from './repositories/workspaces-repository.js'
import { createWorkspaceHostCopiesRepository } from './repositories/workspace-host-copies-repository.js'
import { createWorkspaceLifecycleRepository } from './repositories/workspace-lifecycle-repository.js'

function createUserScope(context: RepositoryContext, userId: string) {
  return {
    userId,
    tokens: createTokensRepository(context, userId),
    sessions: createSessionsRepository(context, userId),
    credentials: createCredentialsRepository(context, userId),
    builtinSettings: createBuiltinSettingsRepository(context, userId),
    profiles: createProfilesRepository(context, userId),
    conversations: createConversationsRepository(context, userId),
    runs: createRunsRepository(context, userId),
    actions: createActionsRepository(context, userId),
    audit: createAuditRepository(context, userId),
    workspaces: createWorkspacesRepository(context, userId),
    reviewComments: createReviewCommentsRepository(context, userId),
    proxyRequests: createProxyRequestsRepository(context, userId),
    usage: createUsageRepository(context, userId),
    attempts: createAttemptsRepository(context, userId),
  }
}

export type UserScope = ReturnType<typeof createUserScope>

function createRepositories(context: RepositoryContext) {
  return {
    users: createUsersRepository(context),
    projects: createProjectsRepository(context),
    runQueue: createRunQueue(context),
    applyingActions: createApplyingActions(context),
    nodes: createNodesRepository(context),
    authLookups: createAuthLookups(context),
    credentialEnvelopes: createCredentialEnvelopes(context),
    workspaceSweep: createWorkspaceSweep(context),
    proxyRequestLog: createProxyRequestLog(context),
    workspaceLifecycle: createWorkspaceLifecycleRepository(context),
    workspaceHostCopies: createWorkspaceHostCopiesRepository(context),
    pendingAttempts: createPendingAttempts(context),
    triggers: createTriggersRepository(context),
    notificationChannels: createNotificationsRepository(context),
    forUser: (userId: string): UserScope => createUserScope(context, userId),
  }
}

export type Repositories = ReturnType<typeof createRepositories>

export interface Store extends Repositories {
  readonly engine: DatabaseHandle['engine']
  readonly location: string
  /** LISTEN/NOTIFY between the daemons sharing the store; undefined on SQLite (one process). */
  readonly notifications: StoreNotifications | undefined
  /** Changes whenever another process commits to the database (SQLite); undefined on PostgreSQL. */
  readonly writesByOthers: ((fresh?: boolean) => number) | undefined
  /**
   * The redactor everything stored goes through (the runtime's one instance). Readers of data that may
   * predate redaction (API reads of conversations) pass it through again.
   */
  readonly redactor: Redactor
  /** Runs `work` in one transaction: all of its writes land, or none. */
  transaction<T>(work: (repositories: Repositories) => Promise<T>): Promise<T>
  /** `ok`, or what the engine reports as broken. */
  integrityCheck(): Promise<string>
  close(): Promise<void>
}

export interface StoreOptions {
  clock?: Clock
  /** Default: one of its own, which knows the secret shapes but no registered values. */
  redactor?: Redactor
}

export function createStore(handle: DatabaseHandle, options: StoreOptions = {}): Store {
  const clock = options.clock ?? systemClock
  const redactor = options.redactor ?? createRedactor()
  const repositories = createRepositories({
    db: handle.db,
    clock,
    engine: handle.engine,
    redactor,
    appendRunEvents: handle.appendRunEvents,
    appendProxyRequests: handle.appendProxyRequests,
  })
  return {
    ...repositories,
    engine: handle.engine,
    location: handle.location,
    notifications: handle.notifications,
    writesByOthers: handle.writesByOthers,
    redactor,
    transaction: (work) =>
      handle.db
        .transaction()
        .execute((transaction) =>
          work(createRepositories({ db: transaction, clock, engine: handle.engine, redactor })),
        ),
    async integrityCheck() {
      if (handle.engine === 'postgres') {
        await sql`select 1`.execute(handle.db)
        return 'ok'
      }
      const result = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(handle.db)
      return result.rows.map((row) => row.integrity_check).join('; ')
    },
    close: () => handle.close(),
  }
}

/** Opens the database, brings its schema up to date and returns the store. */
export async function openStore(options: OpenDatabaseOptions & StoreOptions): Promise<Store> {
  const handle = await openDatabase(options)
  try {
    await migrateToLatest(handle.db, handle.engine)
  } catch (error) {
    await handle.close()
    throw error
  }
  return createStore(handle, {
    ...(options.clock && { clock: options.clock }),
    ...(options.redactor && { redactor: options.redactor }),
  })
}
