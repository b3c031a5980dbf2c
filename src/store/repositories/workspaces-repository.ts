// Execution workspaces: where a conversation's runs work (a worktree, a copy, or the project in place).
import { newId } from '../../core/ids.js'
import type { WorkspacesTable } from '../schema.js'
import { nowIso, type RepositoryContext } from './context.js'

export interface Workspace {
  id: string
  conversationId: string | null
  kind: WorkspacesTable['kind']
  path: string
  projectPath: string
  branch: string | null
  baseRef: string | null
  /** The branch it was made from (where it lands by default), or null. */
  baseBranch: string | null
  createdBranch: boolean
  target: string
  nodeId: string | null
  status: WorkspacesTable['status']
  createdAt: string
  updatedAt: string
}

function toWorkspace(row: WorkspacesTable): Workspace {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    kind: row.kind,
    path: row.path,
    projectPath: row.project_path,
    branch: row.branch,
    baseRef: row.base_ref,
    baseBranch: row.base_branch ?? null,
    createdBranch: row.created_branch === 1,
    target: row.target,
    nodeId: row.node_id,
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

export function createWorkspacesRepository(context: RepositoryContext, userId: string) {
  const { db } = context
  return {
    async create(input: {
      conversationId?: string | null
      kind: Workspace['kind']
      path: string
      projectPath: string
      branch?: string | null
      baseRef?: string | null
      baseBranch?: string | null
      createdBranch?: boolean
      target?: string
      nodeId?: string | null
    }): Promise<Workspace> {
      const now = nowIso(context)
      const row: WorkspacesTable = {
        id: newId('ws'),
        user_id: userId,
        conversation_id: input.conversationId ?? null,
        kind: input.kind,
        path: input.path,
        project_path: input.projectPath,
        branch: input.branch ?? null,
        base_ref: input.baseRef ?? null,
        base_branch: input.baseBranch ?? null,
        created_branch: input.createdBranch ? 1 : 0,
        target: input.target ?? 'local',
        node_id: input.nodeId ?? null,
        status: 'active',
        created_at: now,
        updated_at: now,
      }
      await db.insertInto('workspaces').values(row).execute()
      return toWorkspace(row)
    },
    async get(id: string): Promise<Workspace | undefined> {
      const row = await db
        .selectFrom('workspaces')
        .selectAll()
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst()
      return row && toWorkspace(row)
    },
    async list(options: { includeRemoved?: boolean } = {}): Promise<Workspace[]> {
      let query = db.selectFrom('workspaces').selectAll().where('user_id', '=', userId)
      if (!options.includeRemoved) query = query.where('status', '=', 'active')
      const rows = await query.orderBy('id', 'desc').execute()
      return rows.map(toWorkspace)
    },
    /** The workspaces of one conversation, newest first (active: normally one). */
    async listForConversation(
      conversationId: string,
      options: { includeRemoved?: boolean } = {},
    ): Promise<Workspace[]> {
      let query = db
        .selectFrom('workspaces')
        .selectAll()
        .where('user_id', '=', userId)
        .where('conversation_id', '=', conversationId)
      if (!options.includeRemoved) query = query.where('status', '=', 'active')
      const rows = await query.orderBy('id', 'desc').execute()
      return rows.map(toWorkspace)
    },
    /** Gives a workspace made for a conversation-less run to the conversation that now uses it. */
    async setConversation(id: string, conversationId: string): Promise<Workspace | undefined> {
      await db
        .updateTable('workspaces')
        .set({ conversation_id: conversationId, updated_at: nowIso(context) })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .execute()
      return this.get(id)
    },
    /**
     * Claims the one land of a workspace: true when this caller got it. A claim older than `staleMs` (its
     * daemon died mid-land) may be taken over.
     */
    async claimLanding(id: string, token: string, staleMs: number): Promise<boolean> {
      const now = context.clock()
      const stale = new Date(now.getTime() - staleMs).toISOString()
      const result = await db
        .updateTable('workspaces')
        .set({ landing_by: token, landing_at: now.toISOString() })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .where((where) => where.or([where('landing_by', 'is', null), where('landing_at', '<', stale)]))
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
    /** Lets go of a claim this caller holds (a no-op when it holds none). */
    async releaseLanding(id: string, token: string): Promise<void> {
      await db
        .updateTable('workspaces')
        .set({ landing_by: null, landing_at: null })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .where('landing_by', '=', token)
        .execute()
    },
    async markRemoved(id: string): Promise<boolean> {
      const result = await db
        .updateTable('workspaces')
        .set({ status: 'removed', updated_at: nowIso(context) })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .where('status', '=', 'active')
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
  }
}

export type WorkspacesRepository = ReturnType<typeof createWorkspacesRepository>

/** For start-up cleanup: active workspaces of every user whose conversation no longer exists. */
export function createWorkspaceSweep(context: RepositoryContext) {
  const { db } = context
  return {
    async orphans(): Promise<(Workspace & { userId: string })[]> {
      const rows = await db
        .selectFrom('workspaces')
        .leftJoin('conversations', 'conversations.id', 'workspaces.conversation_id')
        .selectAll('workspaces')
        .where('workspaces.status', '=', 'active')
        .where('workspaces.conversation_id', 'is not', null)
        .where('conversations.id', 'is', null)
        .orderBy('workspaces.id')
        .execute()
      return rows.map((row) => ({ ...toWorkspace(row), userId: row.user_id }))
    },
  }
}
