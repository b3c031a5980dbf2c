// hangar workspaces diff|land|resolve — review a workspace's change set and land it into a branch of the
// user's repository; through the daemon when one runs, else the review service on the store directly.
import type { Command } from 'commander'
import type { Runtime } from '../../main.js'
import type { ChangeSet } from '../../workspaces/review/change-set.js'
import type { LandResult, ReviewCaller } from '../../workspaces/review/review-service.js'
import { type GlobalOptions, viaDaemonOrStore } from '../context.js'
import { type CliIo, printJson, usageError } from '../output.js'

/** The owner, as the CLI without a daemon acts. */
function ownerCaller(runtime: Runtime): ReviewCaller {
  return { userId: runtime.owner.id, actor: `user:${runtime.owner.id}`, mayLand: true }
}

const path = (id: string, rest: string) => `/api/workspaces/${encodeURIComponent(id)}/${rest}`

/** `M  src/a.ts  +3 -1` lines, then the diffs. */
export function describeChangeSet(set: ChangeSet, stat: boolean): string {
  const out: string[] = [
    `base ${set.base.slice(0, 12)}${set.baseBranch ? ` (merge-base with ${set.baseBranch})` : ''} · head ${set.head.slice(0, 12)}`,
  ]
  if (set.commits.length) {
    out.push(`commits (${set.commits.length}):`)
    for (const commit of set.commits)
      out.push(`  ${commit.sha.slice(0, 12)} ${commit.subject} (${commit.author})`)
  }
  out.push(
    `${set.stats.files} file(s) changed, +${set.stats.additions} -${set.stats.deletions}${set.uncommitted.files ? ` · ${set.uncommitted.files} with uncommitted work (*)` : ''}`,
  )
  for (const file of set.files) {
    const name = file.oldPath ? `${file.oldPath} → ${file.path}` : file.path
    const counts = file.binary ? 'binary' : `+${file.additions} -${file.deletions}`
    out.push(`  ${file.status} ${file.uncommitted ? '*' : ' '} ${name}  ${counts}`)
  }
  let text = `${out.join('\n')}\n`
  if (!stat) for (const file of set.files) if (file.patch) text += `\n${file.patch}`
  return text
}

export function describeLand(result: LandResult): string {
  const where =
    result.updated === 'checkout'
      ? `; your checkout at ${result.checkout} was fast-forwarded`
      : ' (ref only: it is not checked out)'
  const removed = result.removal
    ? `; workspace removed${result.removal.branch?.deleted ? ` with branch ${result.removal.branch.name}` : ''}`
    : ''
  return `landed workspace ${result.workspaceId} into ${result.into} (${result.strategy}, ${result.files} file(s)): ${result.previous.slice(0, 12)} → ${result.commit.slice(0, 12)}${where}${removed}\n`
}

export function registerReviewCommands(workspaces: Command, io: CliIo, globals: () => GlobalOptions): void {
  workspaces
    .command('diff')
    .description(
      "a workspace's change set against its base: files, +/- counts, diffs, commits, uncommitted work",
    )
    .argument('<id>', 'workspace id')
    .option('--stat', 'only the files and counts')
    .option(
      '--base <branch>',
      'compare with this branch (its merge-base) instead of the commit it started from',
    )
    .option('--json', 'print JSON')
    .action(async (id: string, options: { stat?: boolean; base?: string; json?: boolean }) => {
      const query = new URLSearchParams({
        ...(options.base && { base: options.base }),
        ...(options.stat && { stat: '1' }),
      })
      const set = await viaDaemonOrStore<ChangeSet>(
        io,
        globals(),
        { method: 'GET', route: `${path(id, 'diff')}${query.size ? `?${query}` : ''}` },
        (runtime) =>
          runtime.review.diff(ownerCaller(runtime), id, {
            ...(options.base && { base: options.base }),
            stat: options.stat ?? false,
          }),
      )
      if (options.json) return printJson(io, set)
      io.stdout.write(describeChangeSet(set, options.stat ?? false))
    })

  workspaces
    .command('land')
    .description(
      "commit the workspace's uncommitted work, then merge (or squash, or rebase) it into a branch of your repository; never pushes",
    )
    .argument('<id>', 'workspace id')
    .option('--into <branch>', 'the branch to land into (default: the one the workspace was made from)')
    .option('--squash', 'one commit on the branch')
    .option('--rebase', "the workspace's commits replayed onto the branch")
    .option('--message <text>', 'the commit message')
    .option('--remove', 'remove the workspace (and its branch) after landing')
    .option('--json', 'print JSON')
    .action(
      async (
        id: string,
        options: {
          into?: string
          squash?: boolean
          rebase?: boolean
          message?: string
          remove?: boolean
          json?: boolean
        },
      ) => {
        if (options.squash && options.rebase) throw usageError('--squash and --rebase exclude each other')
        const request = {
          ...(options.into && { into: options.into }),
          strategy: options.squash
            ? ('squash' as const)
            : options.rebase
              ? ('rebase' as const)
              : ('merge' as const),
          ...(options.message && { message: options.message }),
          ...(options.remove && { removeWorkspace: true }),
        }
        const result = await viaDaemonOrStore<LandResult>(
          io,
          globals(),
          { method: 'POST', route: path(id, 'land'), body: request },
          (runtime) => runtime.review.land(ownerCaller(runtime), id, request),
        )
        if (options.json) return printJson(io, result)
        io.stdout.write(describeLand(result))
      },
    )

  workspaces
    .command('resolve')
    .description(
      "when landing conflicts: a run in the workspace's conversation that merges the branch in and resolves it",
    )
    .argument('<id>', 'workspace id')
    .option('--into <branch>', 'the branch it should land into')
    .option('--json', 'print JSON')
    .action(async (id: string, options: { into?: string; json?: boolean }) => {
      const body = { ...(options.into && { into: options.into }) }
      const result = await viaDaemonOrStore<{ run: { id: string }; into: string; conflicts: string[] }>(
        io,
        globals(),
        { method: 'POST', route: path(id, 'resolve-conflicts'), body },
        (runtime) => runtime.review.resolveConflicts(ownerCaller(runtime), id, body),
      )
      if (options.json) return printJson(io, result)
      io.stdout.write(
        `run ${result.run.id} resolves the conflicts with ${result.into} in: ${result.conflicts.join(', ')}\n`,
      )
    })
}
