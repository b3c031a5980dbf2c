// Applying a confirmed action: claim (pending → applying, committed, naming this process), apply outside
// any transaction (a command's process group is recorded before it starts), settle in one short
// transaction. A second confirm of an action being applied waits for that outcome; if the process applying
// it is provably gone, it does what start-up recovery would (action-recovery.ts).
import { lowerAgentPriority } from '../adapters/agent-priority.js'
import { ToolConflict, type Proposal, type ToolContext } from '../agent/tools/types.js'
import type { ToolRegistry } from '../agent/tools/tool-registry.js'
import { AppError } from '../core/errors.js'
import type { ActionStatus, DecidedStatus, PendingAction } from '../store/repositories/actions-repository.js'
import type { Repositories, Store } from '../store/store.js'
import { createActionRecovery, settleApplying } from './action-recovery.js'
import type { RunOwner } from './run-service.js'

/** How often a second confirm looks whether another process finished applying the action. */
const APPLYING_POLL_MS = 100
/** The longest a second confirm waits for another process's apply (a command's own limit is 600 s). */
const APPLYING_WAIT_MS = 12 * 60 * 1000

/**
 * PostgreSQL: settles of one conversation take turns on its row lock (appendMessage), but may still
 * deadlock or fail serialization; the loser's transaction rolled back whole, so it is safe to run again.
 */
const RETRYABLE_PG_CODES = new Set(['23505', '40001', '40P01'])

async function settleRetrying<T>(store: Store, work: (repositories: Repositories) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await store.transaction(work)
    } catch (error) {
      const code = (error as { code?: unknown }).code
      if (attempt >= 8 || typeof code !== 'string' || !RETRYABLE_PG_CODES.has(code)) throw error
    }
  }
}

/** The agent's tool result for a decided action, in its conversation (none for an MCP proposal). */
export async function appendToolResult(
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

export interface ActionApplierOptions {
  store: Store
  tools: ToolRegistry
  owner: RunOwner
  /** Where an action without a run is applied (see ActionsServiceOptions). */
  defaultWorkspace?: string | ((userId: string) => Promise<string>)
  /** The variables of the workspace a run works in (HANGAR_PORT …), for the commands applied there. */
  workspaceVariables?: (userId: string, runId: string) => Promise<Record<string, string>>
  /**
   * The sandbox of the run's profile around its commands (undefined: none). Throws when the profile asks
   * for one that cannot be had: the action then fails, its command never runs unsandboxed.
   */
  commandSandbox?: (
    userId: string,
    runId: string,
    workspace: string,
  ) => Promise<ToolContext['wrapCommand'] | undefined>
}

export function createActionApplier(options: ActionApplierOptions) {
  const { store, tools, owner } = options
  /** Applies under way in this process: a second confirm here waits for its outcome. */
  const inFlight = new Map<string, Promise<unknown>>()

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

  /**
   * Applies an action this process claimed as `applying`, outside any transaction, then settles it —
   * outcome, tool result and audit row in one short transaction.
   */
  async function applyClaimed(
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
        const workspace = await workspaceOf(store, userId, action, fallbackWorkspace)
        const wrapCommand =
          action.runId && options.commandSandbox
            ? await options.commandSandbox(userId, action.runId, workspace)
            : undefined
        const output = await tool.apply(
          action.input,
          {
            workspace,
            ...(wrapCommand && { wrapCommand }),
            ...(action.runId &&
              options.workspaceVariables && {
                variables: await options.workspaceVariables(userId, action.runId),
              }),
            // Recorded (committed) before the command may start, for recovery after a crash.
            beforeCommandStarts: async (pgid) => {
              // Below the daemon, as a CLI agent's process runs (before the command has started).
              lowerAgentPriority(pgid)
              if (!(await store.forUser(userId).actions.recordProcess(action.id, pgid)))
                throw new Error(`action ${action.id} is no longer being applied`)
            },
          },
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
    // False when recovery took this process for dead and failed it meanwhile: its record stands.
    await settleRetrying(store, (repositories) =>
      settleApplying(repositories, appendToolResult, {
        userId,
        action,
        status: status as DecidedStatus,
        content,
        isError,
        actor,
      }),
    )
    return { status, content, isError }
  }

  /** Claims a pending action as `applying` by this process (committed), then applies and settles it. */
  async function claimAndApply(
    userId: string,
    actionId: string,
    actor: string,
    reason: string | null = null,
    fallbackWorkspace?: string,
  ): Promise<{ status: ActionStatus; content: string; isError: boolean } | undefined> {
    const claimed = await store.forUser(userId).actions.claim(actionId, {
      status: 'applying',
      reason,
      decidedBy: actor,
      applier: owner,
    })
    if (!claimed) return undefined
    const applying = applyClaimed(userId, claimed, actor, fallbackWorkspace)
    inFlight.set(actionId, applying)
    try {
      return await applying
    } finally {
      inFlight.delete(actionId)
    }
  }

  const recovery = createActionRecovery({ store, owner, appendToolResult })

  /**
   * An action another confirm is applying: waits for its outcome. In this process, on its promise;
   * elsewhere, by looking at the store — and if the process applying it is provably dead (this host,
   * another boot, pid gone), this confirm does what start-up recovery would: kill and fail it.
   */
  async function untilApplied(userId: string, action: PendingAction): Promise<PendingAction> {
    const scope = store.forUser(userId).actions
    const local = inFlight.get(action.id)
    if (local) {
      await local.catch(() => {})
      return (await scope.get(action.id))!
    }
    const deadline = Date.now() + APPLYING_WAIT_MS
    let seenUnsettled = false
    for (;;) {
      const claim = await scope.applyingClaim(action.id)
      if (!claim) return (await scope.get(action.id))!
      // This process applied it and could not record the outcome: a restart's recovery will fail it.
      // (Seen twice: the first time, the winner may not have registered its apply yet.)
      const unsettledHere = claim.bootId === owner.bootId && !inFlight.has(action.id)
      if (unsettledHere && seenUnsettled) {
        throw new AppError(
          'conflict',
          `action ${action.id} was applied but its outcome could not be stored`,
          {
            hint: 'check the workspace; the daemon marks it failed when it restarts',
            details: { status: 'applying' },
          },
        )
      }
      if (recovery.orphaned(claim)) {
        await recovery.interrupt(userId, action, claim)
        return (await scope.get(action.id))!
      }
      if (Date.now() > deadline) {
        throw new AppError('conflict', `action ${action.id} is still being applied`, {
          retryable: true,
          hint: 'see its outcome later with hangar actions list --all',
          details: { status: 'applying' },
        })
      }
      const again = inFlight.get(action.id)
      if (again) await again.catch(() => {})
      seenUnsettled = unsettledHere
      await new Promise((resolve) => setTimeout(resolve, APPLYING_POLL_MS))
    }
  }

  return { defaultWorkspaceOf, claimAndApply, untilApplied, recovery }
}
