// Resuming an interrupted run: offered only when its adapter can continue its own session and the run
// recorded one (the built-in agent's session is its conversation). The daemon applies the same rules.
import { api } from './api'
import type { AdapterInfo, Run } from './types'

export function canResume(run: Run, status: string, adapters: readonly AdapterInfo[]): boolean {
  if (status !== 'interrupted') return false
  if (!run.sessionId && run.adapter !== 'builtin') return false
  return adapters.find((adapter) => adapter.id === run.adapter)?.capabilities.resume === true
}

/** A new run that continues the interrupted one's session, in its workspace and conversation. */
export function resumeRun(runId: string): Promise<Run> {
  return api<Run>('POST', `/api/runs/${encodeURIComponent(runId)}/resume`, {})
}
