// A run that ended waiting for decisions, once every proposal was decided, is `succeeded` with the status
// its agent reached (`agentStatus: awaiting_confirmation`) kept: the UI shows it as "decided" and links the
// run that continued it (the one whose `continues` names it).
import type { Run } from './types'

export function isDecidedRun(run: Pick<Run, 'status' | 'agentStatus'>): boolean {
  return run.status === 'succeeded' && run.agentStatus === 'awaiting_confirmation'
}

/**
 * The status to show: "decided" for such a run — even while the chat's replayed run-end still says
 * awaiting_confirmation — else the live status when there is one, else the stored one.
 */
export function shownStatus(run: Pick<Run, 'status' | 'agentStatus'>, live?: string): string {
  return isDecidedRun(run) ? 'decided' : (live ?? run.status)
}

/** The run that went on from `run` after its decisions (newest first when several). */
export function continuationOf(run: Pick<Run, 'id'>, runs: readonly Run[]): Run | undefined {
  return runs.filter((candidate) => candidate.continues === run.id).sort((a, b) => (a.id < b.id ? 1 : -1))[0]
}
