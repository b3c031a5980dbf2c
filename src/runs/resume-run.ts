// Resuming a run: continuing the agent session an earlier run of the same adapter left — typically one
// `interrupted` by a crash — in the same workspace (and conversation). One set of rules for `hangar run
// --resume`, `POST /api/runs { resumeRunId }` and `POST /api/runs/:id/resume`; the session itself is found
// by `sessionToResume` when the run executes.
import { z } from 'zod'
import { processAlive, reapProcessGroup } from '../adapters/supervisor.js'
import { AppError } from '../core/errors.js'
import type { Run } from '../store/repositories/runs-repository.js'
import type { RunService } from './run-service.js'

/** What `POST /api/runs/:id/resume` (the UI's Resume control) says when the caller says nothing. */
export const DEFAULT_RESUME_PROMPT =
  'Continue where you left off: your previous turn was interrupted before it finished.'

/** The body of `POST /api/runs/:id/resume`. */
export const resumeRunSchema = z.strictObject({
  prompt: z
    .string()
    .min(1, 'the prompt must not be empty')
    .max(1_000_000)
    .optional()
    .describe(`What to tell the agent (default: "${DEFAULT_RESUME_PROMPT}")`),
  agent: z
    .string()
    .min(1)
    .optional()
    .describe("Another profile of the run's adapter (default: the run's own)"),
})

const ACTIVE_STATUSES: ReadonlySet<string> = new Set(['queued', 'preparing', 'running', 'finalizing'])

/**
 * Why `previous` cannot be resumed by `adapterId`, as an error; nothing when it can. The built-in agent's
 * session is its conversation (stored messages), so it needs no session id.
 */
export function assertResumable(
  previous: Run,
  adapterId: string,
  capabilities: { resume: boolean } | undefined,
): void {
  if (ACTIVE_STATUSES.has(previous.status)) {
    throw new AppError('conflict', `run ${previous.id} is ${previous.status}: it has not ended yet`, {
      hint: `wait for it to end or cancel it (hangar runs cancel ${previous.id}), then resume it`,
      details: { status: previous.status },
    })
  }
  if (previous.adapter !== adapterId) {
    throw new AppError(
      'invalid_request',
      `run ${previous.id} was made by ${previous.adapter}; it cannot be resumed with ${adapterId}`,
      { hint: `leave the agent out, or pick a profile of ${previous.adapter}` },
    )
  }
  if (adapterId === 'builtin') return
  if (capabilities && !capabilities.resume)
    throw new AppError('invalid_request', `${adapterId} cannot resume a session`)
  if (!previous.sessionId) {
    throw new AppError('conflict', `run ${previous.id} has no agent session to resume`, {
      hint: 'its agent ended (or was stopped) before it named a session; start a new run instead',
    })
  }
}

/**
 * A run still marked active whose owner is provably gone — this node, its pid dead (a `hangar run` killed
 * with SIGKILL) — is marked interrupted and its agent's processes reaped, so it can be resumed at once.
 * Any other run comes back as it was.
 */
export async function releaseIfOwnerGone(
  runs: Pick<RunService, 'owner' | 'interrupt'>,
  lookup: Pick<RunLookup, 'get'>,
  userId: string,
  run: Run,
): Promise<Run> {
  if (!ACTIVE_STATUSES.has(run.status) || run.status === 'queued') return run
  const gone = run.owner.node === runs.owner.node && run.owner.pid !== null && !processAlive(run.owner.pid)
  if (!gone) return run
  if (run.agentPgid !== null) await reapProcessGroup(run.agentPgid)
  await runs.interrupt(userId, run.id, 'the process that ran it stopped before it finished')
  return (await lookup.get(run.id)) ?? run
}

/** The part of the runs repository `sessionToResume` reads. */
export interface RunLookup {
  get(id: string): Promise<Run | undefined>
  list(options: { conversationId?: string; limit?: number }): Promise<Run[]>
}

/**
 * The run whose agent session a run continues: the run it resumes explicitly (`continues`), else its
 * conversation's latest run of the same adapter that recorded a session — an interrupted run included,
 * since the session id is stored as soon as the agent names it. Never an older session while a newer one
 * exists.
 */
export async function runToResume(runs: RunLookup, run: Run): Promise<Run | undefined> {
  if (run.continues) {
    const resumed = await runs.get(run.continues)
    if (resumed?.sessionId && resumed.adapter === run.adapter) return resumed
  }
  if (!run.conversationId) return undefined
  // Newest first (ids sort by creation time).
  const earlier = await runs.list({ conversationId: run.conversationId, limit: 100 })
  return earlier.find(
    (candidate) => candidate.id !== run.id && candidate.adapter === run.adapter && candidate.sessionId,
  )
}

/** The agent session a run continues (see `runToResume`). */
export async function sessionToResume(runs: RunLookup, run: Run): Promise<string | undefined> {
  return (await runToResume(runs, run))?.sessionId ?? undefined
}
