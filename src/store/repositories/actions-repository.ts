// Pending actions: writes proposed by the built-in agent or an MCP client, held until a person decides.
// Deciding is a conditional UPDATE (status still pending, not expired, this user's): exactly one winner.
// A confirmed action is claimed `applying` with the process that applies it, and settled afterwards by
// another conditional UPDATE; a crash in between leaves it `applying` for start-up recovery to fail.
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
    projectId: row.project_id ?? null,
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

/** Who is applying a claimed action: the process (like a run's owner) and the command's process group. */
export interface ApplyingClaim {
  node: string | null
  pid: number | null
  bootId: string | null
  pgid: number | null
  decidedBy: string | null
}

function toClaim(row: PendingActionsTable): ApplyingClaim {
  return {
    node: row.applying_node,
    pid: row.applying_pid,
    bootId: row.applying_boot_id,
    pgid: row.apply_pgid,
    decidedBy: row.decided_by,
  }
}

export type DecidedStatus = Exclude<ActionStatus, 'pending'>

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
  /** The project whose file an action changes: its conversation's, else its run's. */
  async function projectOf(input: NewPendingAction): Promise<string | null> {
    if (input.conversationId) {
      const conversation = await db
        .selectFrom('conversations')
        .select('project_id')
        .where('id', '=', input.conversationId)
        .where('user_id', '=', userId)
        .executeTakeFirst()
      if (conversation?.project_id) return conversation.project_id
    }
    if (!input.runId) return null
    const run = await db
      .selectFrom('runs')
      .select('project_id')
      .where('id', '=', input.runId)
      .where('user_id', '=', userId)
      .executeTakeFirst()
    return run?.project_id ?? null
  }
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
        decided_by: null,
        applying_node: null,
        applying_pid: null,
        applying_boot_id: null,
        apply_pgid: null,
        project_id: await projectOf(input),
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
    /**
     * Records the outcome of an action this caller claimed as `from`. False when it is no longer in that
     * state (recovery settled an `applying` action whose process it took for dead).
     */
    async settle(
      id: string,
      outcome: { status: DecidedStatus; result: unknown; from: DecidedStatus },
    ): Promise<boolean> {
      const settled = await db
        .updateTable('pending_actions')
        .set({
          status: outcome.status,
          // A result is tool output (a command's, a file's): what it printed may hold secrets.
          result: JSON.stringify(context.redactor.value(outcome.result)),
          applying_node: null,
          applying_pid: null,
          applying_boot_id: null,
          apply_pgid: null,
        })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .where('status', '=', outcome.from)
        .executeTakeFirst()
      return settled.numUpdatedRows > 0n
    },
    /** The process group of the command applying this action: recorded before the command may start. */
    async recordProcess(id: string, pgid: number): Promise<boolean> {
      const recorded = await db
        .updateTable('pending_actions')
        .set({ apply_pgid: pgid })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .where('status', '=', 'applying')
        .executeTakeFirst()
      return recorded.numUpdatedRows > 0n
    },
    /** Who applies an `applying` action (undefined otherwise). */
    async applyingClaim(id: string): Promise<ApplyingClaim | undefined> {
      const row = await db
        .selectFrom('pending_actions')
        .selectAll()
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .where('status', '=', 'applying')
        .executeTakeFirst()
      return row && toClaim(row)
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
     * when it was already decided, expired, or not this user's. A claim as `applying` names the process
     * that applies it.
     */
    async claim(
      id: string,
      decision: {
        status: DecidedStatus
        reason?: string | null
        result?: unknown
        decidedBy?: string
        applier?: { node: string; pid: number; bootId: string }
      },
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
          decided_by: decision.decidedBy ?? null,
          ...(decision.applier && {
            applying_node: decision.applier.node,
            applying_pid: decision.applier.pid,
            applying_boot_id: decision.applier.bootId,
          }),
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

/** Unscoped, for start-up recovery and lost nodes: the actions left `applying` by the processes of a node. */
export function createApplyingActions(context: RepositoryContext) {
  const { db } = context
  return {
    async onNode(node: string): Promise<(PendingAction & { userId: string; claim: ApplyingClaim })[]> {
      const rows = await db
        .selectFrom('pending_actions')
        .selectAll()
        .where('status', '=', 'applying')
        .where('applying_node', '=', node)
        .orderBy('id')
        .execute()
      return rows.map((row) => ({ ...toAction(row), userId: row.user_id, claim: toClaim(row) }))
    },
  }
}

export type ActionsRepository = ReturnType<typeof createActionsRepository>
