// Actions a crash left `applying`: the process that claimed them is gone, so nobody will settle them. As
// with runs (scheduler.recover), only a provably dead claimant counts — same node, another boot, pid no
// longer alive — or a node whose lease expired. Its command's process group (recorded before the
// command started) is killed when it is on this machine, and the action fails as interrupted: never
// pending again, never applied twice. It may have run in part; the tool result tells the agent so.
import { processAlive, reapProcessGroup } from '../adapters/supervisor.js'
import type { ApplyingClaim, DecidedStatus, PendingAction } from '../store/repositories/actions-repository.js'
import type { Repositories, Store } from '../store/store.js'
import type { RunOwner } from './run-service.js'

/** `result.reason` of an action failed because the process applying it stopped. */
export const INTERRUPTED = 'interrupted'

type AppendToolResult = (
  repositories: Repositories,
  userId: string,
  action: PendingAction,
  content: string,
  isError: boolean,
) => Promise<void>

export interface ActionRecoveryOptions {
  store: Store
  owner: RunOwner
  appendToolResult: AppendToolResult
}

/**
 * Settles an action claimed `applying` — its outcome, the agent's tool result and the audit row, in the
 * caller's transaction. False when it was no longer applying (recovery failed it meanwhile: that stands).
 */
export async function settleApplying(
  repositories: Repositories,
  appendToolResult: AppendToolResult,
  settlement: {
    userId: string
    action: PendingAction
    status: DecidedStatus
    content: string
    isError: boolean
    actor: string
    /** Recorded in the result and the audit row besides the outcome. */
    extra?: { reason: string; decidedBy: string | null }
  },
): Promise<boolean> {
  const { userId, action, status, content, isError, actor, extra } = settlement
  const scope = repositories.forUser(userId)
  const settled = await scope.actions.settle(action.id, {
    status,
    result: { content, isError, ...(extra && { reason: extra.reason }) },
    from: 'applying',
  })
  if (!settled) return false
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
      ...extra,
    },
  })
  return true
}

export function createActionRecovery(options: ActionRecoveryOptions) {
  const { store, owner } = options

  /** True when the claimant is provably gone: on this node, not this boot, and its pid is not alive. */
  function orphaned(claim: ApplyingClaim): boolean {
    if (claim.node !== owner.node || claim.bootId === owner.bootId) return false
    return claim.pid === null || claim.pid === owner.pid || !processAlive(claim.pid)
  }

  /** Kills the claim's process group (this machine only), then fails the action as interrupted. */
  async function interrupt(
    userId: string,
    action: PendingAction,
    claim: ApplyingClaim,
    why = 'the process applying it stopped before it finished',
  ): Promise<boolean> {
    if (claim.pgid !== null && claim.node === owner.node) await reapProcessGroup(claim.pgid)
    const content = `Interrupted: ${why}. It may have run in part and will not run again; check the workspace before proposing it anew.`
    return store.transaction((repositories) =>
      settleApplying(repositories, options.appendToolResult, {
        userId,
        action,
        status: 'failed',
        content,
        isError: true,
        actor: 'system',
        extra: { reason: INTERRUPTED, decidedBy: claim.decidedBy },
      }),
    )
  }

  return {
    orphaned,
    interrupt,

    /** Start-up: what earlier processes of this node left applying. */
    async recoverNode(): Promise<number> {
      let recovered = 0
      for (const action of await store.applyingActions.onNode(owner.node)) {
        // Another live process on this host (a `hangar actions confirm`, another daemon) still applies it.
        if (!orphaned(action.claim)) continue
        if (await interrupt(action.userId, action, action.claim)) recovered++
      }
      return recovered
    },

    /** A node whose lease expired: its processes are on another machine, or not ours to kill. */
    async interruptNode(node: string, why: string): Promise<number> {
      if (node === owner.node) return 0
      let interrupted = 0
      for (const action of await store.applyingActions.onNode(node)) {
        const remote = { ...action.claim, pgid: null }
        if (await interrupt(action.userId, action, remote, why)) interrupted++
      }
      return interrupted
    },
  }
}
