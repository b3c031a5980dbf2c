// The end of one attempt: once its agent's run ended, its project's check command (`npm test`) runs in the
// attempt's workspace with the runner the workspace lifecycle's setup uses (lifecycle-command.ts), its
// output kept (the last CHECK_OUTPUT_MAX_CHARS), and the workspace's diff stats against its base are taken
// — then the attempt is finished and an `attempt-finished` event is appended to its run.
import type { TerminalRunStatus } from '../core/events.js'
import type { Logger } from '../core/logger.js'
import type { Store } from '../store/store.js'
import type { AttemptOutcome, AttemptRow } from '../store/repositories/attempts-repository.js'
import { diffStats } from '../workspaces/diff-stats.js'
import { runLifecycleCommand } from '../workspaces/lifecycle/lifecycle-command.js'
import { workspaceCwd } from '../workspaces/local-workspaces.js'
import type { RunService } from './run-service.js'

/** The check's output is kept up to this many characters (its end: where a test runner sums up). */
export const CHECK_OUTPUT_MAX_CHARS = 64 * 1024
/** A check that runs longer is stopped (exit code 124, as timeout(1) says). */
export const DEFAULT_CHECK_TIMEOUT_MS = 10 * 60_000

export interface AttemptCheckDeps {
  store: Store
  runs: Pick<RunService, 'appendEvents'>
  /** The check's environment: the setup commands' (setupEnvironment: no Hangar secrets). */
  checkEnv: Readonly<Record<string, string | undefined>>
  /** The workspace's HANGAR_PORT and HANGAR_PORT_COUNT, when it holds ports. */
  workspaceVariables?: (workspaceId: string) => Promise<Record<string, string>>
  checkTimeoutMs?: number
  log?: Logger
}

/** A check stopped by a shutdown: put back to pending, so the next start-up runs it again. */
export class CheckStopped extends Error {}

/** Keeps the end of a stream of text, saying how much was cut before it. */
function boundedOutput() {
  let kept = ''
  let cut = 0
  return {
    add(text: string) {
      kept += text
      if (kept.length > CHECK_OUTPUT_MAX_CHARS) {
        cut += kept.length - CHECK_OUTPUT_MAX_CHARS
        kept = kept.slice(-CHECK_OUTPUT_MAX_CHARS)
      }
    },
    text: () => (cut > 0 ? `[… ${cut} characters cut]\n${kept}` : kept),
  }
}

export async function finishAttempt(
  userId: string,
  attempt: AttemptRow,
  end: { runId: string; status: TerminalRunStatus },
  deps: AttemptCheckDeps,
  signal?: AbortSignal,
): Promise<void> {
  const scope = deps.store.forUser(userId)
  // The run-end is stored before the run's row says so: its status is the event's.
  const run = await scope.runs.get(end.runId)
  const workspace = attempt.workspaceId ? await scope.workspaces.get(attempt.workspaceId) : undefined
  const outcome: AttemptOutcome = {
    checkStatus: attempt.checkCommand ? 'skipped' : 'none',
    checkExitCode: null,
    checkOutput: null,
    filesChanged: null,
    additions: null,
    deletions: null,
  }
  try {
    const cwd = workspace?.status === 'active' ? await workspaceCwd(workspace) : undefined
    if (cwd && workspace?.baseRef) {
      const stats = await diffStats(cwd, workspace.baseRef)
      if (stats) Object.assign(outcome, stats)
    }
    if (!attempt.checkCommand) {
      // Nothing to run.
    } else if (!cwd) {
      outcome.checkOutput = 'not run: the workspace is gone'
    } else if (end.status === 'cancelled' || end.status === 'interrupted') {
      outcome.checkOutput = `not run: the agent's run was ${end.status}`
    } else {
      const output = boundedOutput()
      const result = await runLifecycleCommand({ kind: 'local', dir: cwd }, attempt.checkCommand, {
        env: deps.checkEnv,
        variables: (await deps.workspaceVariables?.(workspace!.id)) ?? {},
        onOutput: (_stream, text) => output.add(text),
        timeoutMs: deps.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS,
        ...(signal && { signal }),
      })
      if (signal?.aborted) throw new CheckStopped('stopped by a shutdown')
      outcome.checkStatus = result.exitCode === 0 ? 'passed' : 'failed'
      outcome.checkExitCode = result.exitCode
      // A command that could not start says why in its tail only.
      outcome.checkOutput = deps.store.redactor.text(output.text() || result.tail)
    }
  } catch (error) {
    if (error instanceof CheckStopped) {
      await scope.attempts.releaseCheck(attempt.conversationId)
      return
    }
    deps.log?.warn('attempt check could not run', { conversationId: attempt.conversationId, error })
    outcome.checkStatus = attempt.checkCommand ? 'skipped' : 'none'
    outcome.checkOutput = `not run: ${error instanceof Error ? error.message : String(error)}`
  }
  await scope.attempts.finish(attempt.conversationId, outcome)
  if (!run) return
  await deps.runs.appendEvents(userId, end.runId, [
    {
      type: 'attempt-finished',
      attemptId: attempt.groupId,
      conversationId: attempt.conversationId,
      status: end.status,
      checkStatus: outcome.checkStatus as 'passed' | 'failed' | 'skipped' | 'none',
      checkExitCode: outcome.checkExitCode,
    },
  ])
}
