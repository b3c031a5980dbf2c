// Pending actions: writes proposed by the built-in agent or an MCP client, held until a person decides.
// Deciding is a conditional UPDATE (status still pending, not expired, this user's): exactly one winner.
import type { ActionStatus, PendingAction } from '../../core/api-types.js'
import type { WriteClassification } from '../../core/events.js'
import { newId } from '../../core/ids.js'
import type { PendingActionsTable } from '../schema.js'
import { fromJson, nowIso, type RepositoryContext } from './context.js'

export type { ActionStatus, PendingAction }

function toAction(row: PendingActionsTable): PendingAction {
  return {
    id: row.id,
    runId: row.run_id,
    conversationId: row.conversation_id,
    tool: row.tool,
    toolCallId: row.tool_call_id,
    input: JSON.parse(row.input) as unknown,
    inputHash: row.input_hash,
    summary: row.summary,
    diff: row.diff,
    classification: row.classification as WriteClassification,
    origin: row.origin,
    status: row.status as ActionStatus,
    decisionReason: row.decision_reason,
    result: fromJson<unknown>(row.result),
    precondition: fromJson<{ path: string; sha256: string | null }>(row.precondition),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    decidedAt: row.decided_at,
  }
}

export interface NewPendingAction {
  runId?: string | null
  conversationId?: string | null
  tool: string
  toolCallId?: string | null
  input: unknown
  inputHash: string
  summary: string
  diff?: string | null
  classification: WriteClassification
  origin: 'chat' | 'mcp'
  expiresAt: string
  precondition?: { path: string; sha256: string | null } | null
}

export function createActionsRepository(context: RepositoryContext, userId: string) {
  const { db } = context
  return {
    async create(input: NewPendingAction): Promise<PendingAction> {
      const row: PendingActionsTable = {
        id: newId('act'),
        user_id: userId,
        run_id: input.runId ?? null,
        conversation_id: input.conversationId ?? null,
        tool: input.tool,
        tool_call_id: input.toolCallId ?? null,
        input: JSON.stringify(input.input),
        input_hash: input.inputHash,
        summary: input.summary,
        diff: input.diff ?? null,
        classification: input.classification,
        origin: input.origin,
        status: 'pending',
        decision_reason: null,
        result: null,
        precondition: input.precondition ? JSON.stringify(input.precondition) : null,
        created_at: nowIso(context),
        expires_at: input.expiresAt,
        decided_at: null,
      }
      await db.insertInto('pending_actions').values(row).execute()
      return toAction(row)
    },
    async get(id: string): Promise<PendingAction | undefined> {
      const row = await db
        .selectFrom('pending_actions')
        .selectAll()
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst()
      return row && toAction(row)
    },
    async list(options: { status?: ActionStatus; conversationId?: string } = {}): Promise<PendingAction[]> {
      let query = db.selectFrom('pending_actions').selectAll().where('user_id', '=', userId)
      if (options.status) query = query.where('status', '=', options.status)
      if (options.conversationId) query = query.where('conversation_id', '=', options.conversationId)
      const rows = await query.orderBy('id').execute()
      return rows.map(toAction)
    },
    /** Records the outcome of an action this caller already claimed (same transaction). */
    async settle(
      id: string,
      outcome: { status: Exclude<ActionStatus, 'pending'>; result: unknown },
    ): Promise<void> {
      await db
        .updateTable('pending_actions')
        // A result is tool output (a command's, a file's): what it printed may hold secrets.
        .set({ status: outcome.status, result: JSON.stringify(context.redactor.value(outcome.result)) })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .execute()
    },
    /** Claims a pending action whose time ran out as `expired` (a decision on it, not a read). */
    async expire(id: string): Promise<PendingAction | undefined> {
      const now = nowIso(context)
      const row = await db
        .updateTable('pending_actions')
        .set({ status: 'expired', decided_at: now })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .where('status', '=', 'pending')
        .where('expires_at', '<=', now)
        .returningAll()
        .executeTakeFirst()
      return row && toAction(row)
    },
    /**
     * Moves a pending, unexpired action to `status`. Returns the action when this call won, undefined
     * when it was already decided, expired, or not this user's.
     */
    async claim(
      id: string,
      decision: { status: Exclude<ActionStatus, 'pending'>; reason?: string | null; result?: unknown },
    ): Promise<PendingAction | undefined> {
      const now = nowIso(context)
      const row = await db
        .updateTable('pending_actions')
        .set({
          status: decision.status,
          decision_reason: decision.reason ? context.redactor.text(decision.reason) : null,
          result:
            decision.result === undefined ? null : JSON.stringify(context.redactor.value(decision.result)),
          decided_at: now,
        })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .where('status', '=', 'pending')
        .where('expires_at', '>', now)
        .returningAll()
        .executeTakeFirst()
      return row && toAction(row)
    },
  }
}

export type ActionsRepository = ReturnType<typeof createActionsRepository>
