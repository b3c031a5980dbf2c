// What a workspace changed against the commit it started from, as numbers: files changed, lines added
// and removed — its agents' commits and its uncommitted work (untracked files included, ignored ones and
// the files Hangar placed not), from a snapshot of the worktree through a private index (run-changes.ts),
// so the workspace's own index is never touched.
import { git } from './git.js'
import { snapshotTree } from './run-changes.js'

export interface DiffStats {
  filesChanged: number
  /** Lines added; binary files count as changed files with no lines. */
  additions: number
  deletions: number
}

/** The stats of `cwd` (a worktree) against `base`; null when either is not in git or git refused. */
export async function diffStats(cwd: string, base: string): Promise<DiffStats | null> {
  const tree = await snapshotTree(cwd)
  if (!tree) return null
  try {
    const { stdout } = await git(['diff', '--numstat', '--no-renames', '-z', base, tree, '--'], { cwd })
    const stats: DiffStats = { filesChanged: 0, additions: 0, deletions: 0 }
    // `-z`: "ADDED\tDELETED\tPATH\0" per file; "-\t-\t" for a binary one.
    for (const record of stdout.split('\0')) {
      const [added, deleted] = record.split('\t')
      if (added === undefined || deleted === undefined || record === '') continue
      stats.filesChanged++
      stats.additions += Number(added) || 0
      stats.deletions += Number(deleted) || 0
    }
    return stats
  } catch {
    return null
  }
}
