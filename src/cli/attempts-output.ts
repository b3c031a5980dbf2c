// How the CLI shows compared attempts: one line per attempt as it finishes (stderr, like `hangar run`'s
// notes), and the side-by-side table once all are done (stdout).
import type { Attempt, AttemptGroup } from '../core/api-types.js'
import { describeRunCost } from '../core/usage-cost.js'
import { type CliIo, cliDollars, formatTable } from './output.js'

function seconds(ms: number | null): string | null {
  return ms === null ? null : `${(ms / 1000).toFixed(1)}s`
}

function check(attempt: Attempt): string {
  const { status, exitCode } = attempt.check
  if (status === 'none') return 'none'
  return exitCode === null ? status : `${status} (exit ${exitCode})`
}

/** One line for an attempt that just finished, e.g. "✓ codex succeeded in 9.1s · check passed (exit 0)". */
export function describeFinishedAttempt(attempt: Attempt): string {
  const mark = attempt.status === 'succeeded' ? '✓' : '✗'
  const took = seconds(attempt.durationMs)
  return `${mark} ${attempt.agent} ${attempt.status}${took ? ` in ${took}` : ''} · check ${check(attempt)} (conversation ${attempt.conversationId})`
}

/** The attempts side by side: status, time, tokens, cost, files changed, diff stats, check. */
export function formatAttemptsTable(group: AttemptGroup): string {
  return formatTable(
    ['AGENT', 'STATUS', 'TIME', 'TOKENS IN/OUT', 'COST', 'FILES', '+/-', 'CHECK', 'CONVERSATION'],
    group.attempts.map((attempt) => [
      `${attempt.picked ? '* ' : ''}${attempt.agent}`,
      attempt.discardedAt ? `${attempt.status} (discarded)` : attempt.status,
      seconds(attempt.durationMs),
      attempt.tokens ? `${attempt.tokens.input}/${attempt.tokens.output}` : null,
      describeRunCost(attempt.costUsd, attempt.costSource, cliDollars),
      attempt.filesChanged === null ? null : String(attempt.filesChanged),
      attempt.additions === null ? null : `+${attempt.additions} -${attempt.deletions ?? 0}`,
      check(attempt),
      attempt.conversationId,
    ]),
  )
}

/** The table, and on stderr how to pick one (or that one was). */
export function printAttemptGroup(io: CliIo, group: AttemptGroup): void {
  io.stdout.write(formatAttemptsTable(group))
  if (group.pickedConversationId) {
    io.stderr.write(`Picked ${group.pickedConversationId}; land it from its workspace.\n`)
  } else if (group.finished) {
    io.stderr.write(
      `Pick one with: hangar attempts pick ${group.id} CONVERSATION [--keep-others] (the others' workspaces are removed)\n`,
    )
  }
  for (const attempt of group.attempts) {
    if (attempt.check.status === 'failed' && attempt.check.output) {
      const tail = attempt.check.output.trimEnd().split('\n').slice(-5).join('\n  ')
      io.stderr.write(`${attempt.agent} check output (last lines):\n  ${tail}\n`)
    }
  }
}
