// Deciding proposals (pending actions). A decision claims the action with a conditional UPDATE — one
// winner under races — and, in the same transaction, applies it, writes its audit row and appends the
// tool result the model will read. Repeating a decision returns the stored outcome; a different decision
// on a decided action is a conflict. Reading never changes an action, not even an expired one.
import { createHash } from 'node:crypto'
import { ToolConflict, type Proposal } from '../agent/tools/types.js'
import type { ToolRegistry } from '../agent/tools/tool-registry.js'
import type { ProposalDesk } from '../agent/ports.js'
import { AppError } from '../core/errors.js'
import { type Clock, systemClock } from '../core/ids.js'
import type { ActionStatus, PendingAction } from '../store/repositories/actions-repository.js'
import type { Run } from '../store/repositories/runs-repository.js'
import type { Repositories, Store } from '../store/store.js'
import type { RunService } from './run-service.js'
import type { Scheduler } from './scheduler.js'

export const PROPOSAL_TTL_MS = 24 * 60 * 60 * 1000

export type Decision = { kind: 'confirm' } | { kind: 'reject'; reason?: string | undefined }

export interface DecisionResult {
  action: PendingAction
  /** True when the action was already decided this way: nothing happened now. */
  replayed: boolean
  /** Actions of the same run still waiting; when 0, the conversation can continue. */
  remaining: number
}

const CONFIRMED: readonly ActionStatus[] = ['applied', 'conflict', 'failed']

function describeOutcome(status: ActionStatus): string {
  return status === 'applied' ? 'applied' : status === 'conflict' ? 'not applied (conflict)' : status
}

/** Where a proposal came from: a run of the built-in agent (chat), or an MCP client with no run. */
interface ProposalSource {
  runId: string | null
  conversationId: string | null
  origin: PendingAction['origin']
}

export interface ActionsServiceOptions {
  store: Store
  tools: ToolRegistry
  clock?: Clock
  /**
   * Where an action without a run is applied: an MCP proposal is applied where it was made (the project
   * for the owner, a member's own workspace). Without it such an action cannot be applied.
   */
  defaultWorkspace?: string | ((userId: string) => Promise<string>)
  /**
   * This node: a confirmed write is applied in its run's workspace, which only the node that holds it can
   * reach (several daemons on one PostgreSQL). Without it every workspace counts as local.
   */
  nodeId?: string
}

export function createActionsService(options: ActionsServiceOptions) {
  const { store, tools } = options
  const clock = options.clock ?? systemClock

  /** A write lands in its run's workspace: on another node's disk, this node cannot apply it. */
  async function assertAppliesHere(userId: string, action: PendingAction): Promise<void> {
    if (!options.nodeId || !action.runId) return
    const run = await store.forUser(userId).runs.get(action.runId)
    const home = run?.pinnedNode ?? run?.owner.node
    if (home && home !== options.nodeId) {
      throw new AppError(
        'conflict',
        `action ${action.id} applies in a workspace on node ${home}, and this is ${options.nodeId}`,
        { hint: `confirm it on the daemon of ${home} (rejecting works on any node)` },
      )
    }
  }

  /** Resolved before the transaction that applies it (it may read the store). */
  async function defaultWorkspaceOf(userId: string, action: PendingAction): Promise<string | undefined> {
    const fallback = options.defaultWorkspace
    if (action.runId || fallback === undefined) return undefined
    return typeof fallback === 'string' ? fallback : fallback(userId)
  }

  async function workspaceOf(
    repositories: Repositories,
    userId: string,
    action: PendingAction,
    fallback: string | undefined,
  ): Promise<string> {
    if (!action.runId && fallback) return fallback
    const run = action.runId ? await repositories.forUser(userId).runs.get(action.runId) : undefined
    if (!run) throw new AppError('conflict', `action ${action.id} has no run to apply it in`)
    return run.cwd
  }

  function createAction(
    repositories: Repositories,
    userId: string,
    source: ProposalSource,
    call: { toolCallId: string | null; tool: string; input: unknown },
    proposal: Proposal,
  ): Promise<PendingAction> {
    return repositories.forUser(userId).actions.create({
      runId: source.runId,
      conversationId: source.conversationId,
      tool: call.tool,
      toolCallId: call.toolCallId,
      input: call.input,
      inputHash: createHash('sha256').update(JSON.stringify(call.input)).digest('hex'),
      summary: proposal.summary,
      diff: proposal.diff ?? null,
      classification: proposal.classification,
      origin: source.origin,
      precondition: proposal.precondition,
      expiresAt: new Date(clock().getTime() + PROPOSAL_TTL_MS).toISOString(),
    })
  }

  async function appendToolResult(
    repositories: Repositories,
    userId: string,
    action: PendingAction,
    content: string,
    isError: boolean,
  ): Promise<void> {
    if (!action.conversationId || !action.toolCallId) return
    await repositories
      .forUser(userId)
      .conversations.appendMessage(
        action.conversationId,
        { role: 'tool', toolCallId: action.toolCallId, toolName: action.tool, content, isError },
        action.runId ?? undefined,
      )
  }

  /** Applies an action this caller has claimed as `applied`; settles it as conflict or failed otherwise. */
  async function applyClaimed(
    repositories: Repositories,
    userId: string,
    action: PendingAction,
    actor: string,
    fallbackWorkspace?: string,
  ): Promise<{ status: ActionStatus; content: string; isError: boolean }> {
    const tool = tools.get(action.tool)
    let status: ActionStatus = 'applied'
    let content: string
    let isError: boolean
    if (!tool || tool.kind !== 'write') {
      status = 'failed'
      isError = true
      content = `The tool ${action.tool} is not available any more.`
    } else {
      const proposal: Proposal = {
        summary: action.summary,
        classification: action.classification,
        precondition: action.precondition,
        ...(action.diff && { diff: action.diff }),
      }
      try {
        const output = await tool.apply(
          action.input,
          { workspace: await workspaceOf(repositories, userId, action, fallbackWorkspace) },
          proposal,
        )
        content = output.content
        isError = output.isError ?? false
      } catch (error) {
        isError = true
        if (error instanceof ToolConflict) {
          status = 'conflict'
          content = error.message
        } else {
          status = 'failed'
          content = `Applying the change failed: ${error instanceof Error ? error.message : String(error)}`
        }
      }
    }
    const scope = repositories.forUser(userId)
    await scope.actions.settle(action.id, { status, result: { content, isError } })
    await appendToolResult(repositories, userId, action, content, isError)
    await scope.audit.append({
      actor,
      action: 'action.apply',
      targetType: 'pending_action',
      targetId: action.id,
      details: {
        tool: action.tool,
        summary: action.summary,
        classification: action.classification,
        outcome: status,
      },
    })
    return { status, content, isError }
  }

  async function remainingFor(userId: string, action: PendingAction): Promise<number> {
    if (!action.runId) return 0
    const pending = await store.forUser(userId).actions.list({ status: 'pending' })
    return pending.filter((candidate) => candidate.runId === action.runId).length
  }

  return {
    async list(userId: string, filter: { status?: ActionStatus } = {}): Promise<PendingAction[]> {
      return store.forUser(userId).actions.list(filter)
    },

    async decide(
      userId: string,
      actionId: string,
      decision: Decision,
      actor: string,
    ): Promise<DecisionResult> {
      const current = await store.forUser(userId).actions.get(actionId)
      if (!current)
        throw new AppError('not_found', `no action ${actionId}`, { hint: 'see hangar actions list' })
      const already = (action: PendingAction): DecisionResult | undefined => {
        if (action.status === 'pending') return undefined
        const same =
          decision.kind === 'confirm' ? CONFIRMED.includes(action.status) : action.status === 'rejected'
        if (!same) {
          throw new AppError('conflict', `action ${action.id} was already ${action.status}`, {
            details: { status: action.status },
          })
        }
        return { action, replayed: true, remaining: 0 }
      }
      const decided = already(current)
      if (decided) return { ...decided, remaining: await remainingFor(userId, current) }
      if (decision.kind === 'confirm') await assertAppliesHere(userId, current)
      const fallbackWorkspace =
        decision.kind === 'confirm' ? await defaultWorkspaceOf(userId, current) : undefined

      if (current.expiresAt <= clock().toISOString()) {
        await store.transaction(async (repositories) => {
          const expired = await repositories.forUser(userId).actions.expire(actionId)
          if (expired) {
            await appendToolResult(
              repositories,
              userId,
              expired,
              'The proposal expired before anyone decided it.',
              true,
            )
          }
        })
        throw new AppError('conflict', `action ${actionId} expired at ${current.expiresAt}`, {
          hint: 'ask the agent to propose it again',
          details: { status: 'expired' },
        })
      }

      const result = await store.transaction(async (repositories) => {
        const scope = repositories.forUser(userId)
        const claimed = await scope.actions.claim(actionId, {
          status: decision.kind === 'confirm' ? 'applied' : 'rejected',
          reason: decision.kind === 'reject' ? (decision.reason ?? null) : null,
        })
        if (!claimed) return undefined
        if (decision.kind === 'confirm')
          await applyClaimed(repositories, userId, claimed, actor, fallbackWorkspace)
        else {
          const content = `The user rejected this ${claimed.tool} call${decision.reason ? `: ${decision.reason}` : '.'} Nothing was changed.`
          await scope.actions.settle(claimed.id, { status: 'rejected', result: { content, isError: true } })
          await appendToolResult(repositories, userId, claimed, content, true)
          await scope.audit.append({
            actor,
            action: 'action.reject',
            targetType: 'pending_action',
            targetId: claimed.id,
            details: { tool: claimed.tool, summary: claimed.summary, reason: decision.reason ?? null },
          })
        }
        return (await scope.actions.get(actionId))!
      })
      // Lost the race: someone else decided it in between.
      const final = result ?? (await store.forUser(userId).actions.get(actionId))!
      if (!result) return { ...already(final)!, remaining: await remainingFor(userId, final) }
      return { action: final, replayed: false, remaining: await remainingFor(userId, final) }
    },

    /** A new user message while awaiting: open proposals give way, each with a synthetic tool result. */
    async supersede(userId: string, conversationId: string, actor: string): Promise<number> {
      const open = await store.forUser(userId).actions.list({ status: 'pending', conversationId })
      let superseded = 0
      for (const action of open) {
        await store.transaction(async (repositories) => {
          const claimed = await repositories
            .forUser(userId)
            .actions.claim(action.id, { status: 'superseded' })
          if (!claimed) return
          superseded++
          await appendToolResult(
            repositories,
            userId,
            claimed,
            'Not applied: the user sent a new message instead of deciding this proposal.',
            true,
          )
          await repositories.forUser(userId).audit.append({
            actor,
            action: 'action.supersede',
            targetType: 'pending_action',
            targetId: claimed.id,
            details: { tool: claimed.tool, summary: claimed.summary },
          })
        })
      }
      return superseded
    },

    /** The proposal desk of one run: parks proposals, or applies auto-approved ones at once. */
    createDesk(userId: string, run: { runId: string; conversationId: string }, actor: string): ProposalDesk {
      const source: ProposalSource = { ...run, origin: 'chat' }
      return {
        async park(call, proposal) {
          const action = await createAction(store, userId, source, call, proposal)
          return { actionId: action.id, expiresAt: action.expiresAt }
        },
        async applyNow(call, proposal) {
          return store.transaction(async (repositories) => {
            const created = await createAction(repositories, userId, source, call, proposal)
            const claimed = (await repositories
              .forUser(userId)
              .actions.claim(created.id, { status: 'applied', reason: 'auto-approved' }))!
            const { content, isError } = await applyClaimed(
              repositories,
              userId,
              claimed,
              `${actor}:auto-approve`,
            )
            return { content, isError }
          })
        },
      }
    },

    /**
     * The desk of an MCP client: proposals with no run and no conversation, applied in the default
     * workspace once decided. Never auto-approved: the decision is a person's (or an approve-scoped PAT's).
     */
    createMcpDesk(userId: string) {
      const source: ProposalSource = { runId: null, conversationId: null, origin: 'mcp' }
      return {
        park: (call: { tool: string; input: unknown }, proposal: Proposal): Promise<PendingAction> =>
          createAction(store, userId, source, { ...call, toolCallId: null }, proposal),
      }
    },

    describeOutcome,
  }
}

export type ActionsService = ReturnType<typeof createActionsService>

/**
 * After a decision over HTTP or MCP: when it settled the last open proposal of a built-in agent's run,
 * queue the run that resumes its conversation. Replays and proposals without a run continue nothing.
 */
export async function queueContinuation(
  deps: { store: Store; runs: Pick<RunService, 'enqueue'>; scheduler: Pick<Scheduler, 'kick'> },
  userId: string,
  result: DecisionResult,
): Promise<Run | null> {
  if (result.replayed || result.remaining > 0 || !result.action.runId) return null
  const previous = await deps.store.forUser(userId).runs.get(result.action.runId)
  if (!previous?.conversationId) return null
  const continuation = await deps.runs.enqueue(userId, {
    agent: previous.agent,
    adapter: previous.adapter,
    model: previous.model,
    prompt: '',
    cwd: previous.cwd,
    conversationId: previous.conversationId,
    continues: previous.id,
  })
  deps.scheduler.kick()
  return continuation
}
