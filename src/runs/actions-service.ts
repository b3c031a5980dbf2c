// Deciding proposals (pending actions). Who may decide is checked here, for every path (action-decider).
// A rejection is one conditional UPDATE with its tool result and audit row in one transaction. A
// confirmation is three steps, so a long command never holds the store: claim (a conditional UPDATE
// pending → applying, committed, naming this process — one winner under races), apply outside any
// transaction (a command's process group is recorded before it starts), settle (outcome, tool result,
// audit row) in one short transaction. A crash in between leaves the action `applying`: start-up recovery
// kills the recorded group and fails it as interrupted — it never becomes pending or runs again.
// Repeating a decision returns the stored outcome; a different decision on a decided action is a
// conflict. Reading never changes an action, not even an expired one.
import { createHash, randomUUID } from 'node:crypto'
import os from 'node:os'
import type { Proposal } from '../agent/tools/types.js'
import type { ToolRegistry } from '../agent/tools/tool-registry.js'
import type { ProposalDesk } from '../agent/ports.js'
import { AppError } from '../core/errors.js'
import { type Clock, systemClock } from '../core/ids.js'
import type { ActionStatus, PendingAction } from '../store/repositories/actions-repository.js'
import type { Run } from '../store/repositories/runs-repository.js'
import type { Repositories, Store } from '../store/store.js'
import { assertMayDecide, type Decider, deciderActor } from './action-decider.js'
import { type ActionApplierOptions, appendToolResult, createActionApplier } from './action-applier.js'
import { INTERRUPTED } from './action-recovery.js'
import type { RunOwner, RunService } from './run-service.js'
import type { Scheduler } from './scheduler.js'

export type { Decider } from './action-decider.js'

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

function wasInterrupted(action: PendingAction): boolean {
  return action.status === 'failed' && (action.result as { reason?: unknown } | null)?.reason === INTERRUPTED
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
  /** This process, named in the claim of an action it applies (default: this host, pid and a boot id). */
  owner?: RunOwner
  /** The variables of a run's workspace (HANGAR_PORT …), for the commands applied there. */
  workspaceVariables?: ActionApplierOptions['workspaceVariables']
  /** The sandbox of a run's profile around the commands applied for it. */
  commandSandbox?: ActionApplierOptions['commandSandbox']
}

export function createActionsService(options: ActionsServiceOptions) {
  const { store, tools } = options
  const clock = options.clock ?? systemClock
  const owner: RunOwner = options.owner ?? {
    node: options.nodeId ?? os.hostname(),
    pid: process.pid,
    bootId: randomUUID(),
  }
  const { defaultWorkspaceOf, claimAndApply, untilApplied, recovery } = createActionApplier({
    store,
    tools,
    owner,
    ...(options.defaultWorkspace !== undefined && { defaultWorkspace: options.defaultWorkspace }),
    ...(options.workspaceVariables && { workspaceVariables: options.workspaceVariables }),
    ...(options.commandSandbox && { commandSandbox: options.commandSandbox }),
  })

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

  async function remainingFor(userId: string, action: PendingAction): Promise<number> {
    if (!action.runId) return 0
    const pending = await store.forUser(userId).actions.list({ status: 'pending' })
    return pending.filter((candidate) => candidate.runId === action.runId).length
  }

  /**
   * The last open proposal of a run was decided (or superseded): the run no longer waits. It ended its turn,
   * so it is `succeeded`, and `agentStatus` keeps what its agent reached — the UI shows it as decided and
   * links the run that continues it. Idempotent, so a replayed decision settles a run a crash left waiting.
   */
  async function settleDecidedRun(userId: string, runId: string | null): Promise<void> {
    if (!runId) return
    const runs = store.forUser(userId).runs
    const run = await runs.get(runId)
    if (run?.status !== 'awaiting_confirmation') return
    const open = await store.forUser(userId).actions.list({ status: 'pending' })
    if (open.some((candidate) => candidate.runId === runId)) return
    await runs.update(runId, {
      status: 'succeeded',
      agentStatus: 'awaiting_confirmation',
      reason: 'every proposal was decided',
    })
  }

  async function resultOf(userId: string, action: PendingAction, replayed: boolean): Promise<DecisionResult> {
    const remaining = await remainingFor(userId, action)
    if (remaining === 0) await settleDecidedRun(userId, action.runId)
    return { action, replayed, remaining }
  }

  return {
    async list(userId: string, filter: { status?: ActionStatus } = {}): Promise<PendingAction[]> {
      return store.forUser(userId).actions.list(filter)
    },

    async decide(decider: Decider, actionId: string, decision: Decision): Promise<DecisionResult> {
      assertMayDecide(decider)
      const userId = decider.user.id
      const actor = deciderActor(decider)
      const current = await store.forUser(userId).actions.get(actionId)
      if (!current)
        throw new AppError('not_found', `no action ${actionId}`, { hint: 'see hangar actions list' })
      /** The stored outcome when the action is decided already (waiting while it is being applied). */
      const already = async (action: PendingAction): Promise<DecisionResult | undefined> => {
        if (action.status === 'pending') return undefined
        if (action.status === 'applying') {
          if (decision.kind === 'reject') {
            throw new AppError('conflict', `action ${action.id} is being applied and cannot be rejected`, {
              details: { status: action.status },
            })
          }
          return already(await untilApplied(userId, action))
        }
        if (wasInterrupted(action)) {
          throw new AppError(
            'conflict',
            `action ${action.id} was interrupted while it was applied (the process applying it stopped); it will not run again`,
            {
              hint: 'ask the agent to propose it again',
              details: { status: action.status, reason: INTERRUPTED },
            },
          )
        }
        const same =
          decision.kind === 'confirm' ? CONFIRMED.includes(action.status) : action.status === 'rejected'
        if (!same) {
          throw new AppError('conflict', `action ${action.id} was already ${action.status}`, {
            details: { status: action.status },
          })
        }
        return resultOf(userId, action, true)
      }
      const decided = await already(current)
      if (decided) return decided
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

      const won =
        decision.kind === 'confirm'
          ? (await claimAndApply(userId, actionId, actor, null, fallbackWorkspace)) !== undefined
          : await store.transaction(async (repositories) => {
              const scope = repositories.forUser(userId)
              const content = `The user rejected this ${current.tool} call${decision.reason ? `: ${decision.reason}` : '.'} Nothing was changed.`
              const claimed = await scope.actions.claim(actionId, {
                status: 'rejected',
                reason: decision.reason ?? null,
                result: { content, isError: true },
                decidedBy: actor,
              })
              if (!claimed) return false
              await appendToolResult(repositories, userId, claimed, content, true)
              await scope.audit.append({
                actor,
                action: 'action.reject',
                targetType: 'pending_action',
                targetId: claimed.id,
                details: { tool: claimed.tool, summary: claimed.summary, reason: decision.reason ?? null },
              })
              return true
            })
      const final = (await store.forUser(userId).actions.get(actionId))!
      // Lost the race: someone else decided it in between.
      if (!won) return (await already(final))!
      return resultOf(userId, final, false)
    },

    /**
     * Start-up: the actions this node's earlier processes left `applying` (a crash) — their commands'
     * process groups killed, each failed as interrupted. Returns how many.
     */
    recover: () => recovery.recoverNode(),

    /** A lost node (lease expired): its `applying` actions failed as interrupted; its processes left alone. */
    interruptNode: (node: string, why: string) => recovery.interruptNode(node, why),

    /** A new user message while awaiting: open proposals give way, each with a synthetic tool result. */
    async supersede(userId: string, conversationId: string, actor: string): Promise<number> {
      const open = await store.forUser(userId).actions.list({ status: 'pending', conversationId })
      let superseded = 0
      const runIds = new Set<string>()
      for (const action of open) {
        if (action.runId) runIds.add(action.runId)
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
      for (const runId of runIds) await settleDecidedRun(userId, runId)
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
          // Like a confirmation: claimed (committed), applied outside any transaction, settled.
          const created = await createAction(store, userId, source, call, proposal)
          const applied = await claimAndApply(userId, created.id, `${actor}:auto-approve`, 'auto-approved')
          if (!applied) throw new AppError('conflict', `action ${created.id} was decided elsewhere`)
          return { content: applied.content, isError: applied.isError }
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
    projectId: previous.projectId,
    continues: previous.id,
  })
  await noteContinuation(deps.store, userId, previous.id, continuation.id)
  deps.scheduler.kick()
  return continuation
}

/** A decided run names the run that goes on from it (`hangar runs show`, the API; the UI links it). */
export async function noteContinuation(
  store: Store,
  userId: string,
  previousId: string,
  continuationId: string,
): Promise<void> {
  const runs = store.forUser(userId).runs
  const previous = await runs.get(previousId)
  if (previous?.status !== 'succeeded' || previous.agentStatus !== 'awaiting_confirmation') return
  await runs.update(previousId, { reason: `every proposal was decided; continued in ${continuationId}` })
}
