// What a workspace changed against its base, read with git only (no shell, shas only on the command
// line): the working state — committed, staged, unstaged and untracked files — is written as a tree
// through a temporary index (the workspace's own index is never touched), then compared with the base.
import { copyFile, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { git } from '../git.js'

export type FileStatus = 'A' | 'M' | 'D' | 'R' | 'C' | 'T'

export interface ChangedFile {
  path: string
  /** For a rename or copy: where it came from. */
  oldPath?: string
  status: FileStatus
  additions: number
  deletions: number
  binary: boolean
  /** Changed by work not committed yet (staged, unstaged or untracked). */
  uncommitted: boolean
  /** The unified diff of this file (absent with `stat`). */
  patch?: string
}

export interface AgentCommit {
  sha: string
  subject: string
  author: string
  email: string
}

export interface ChangeSet {
  /** The commit compared against. */
  base: string
  /** The branch the base came from when `?base=` named one (its merge-base with the workspace). */
  baseBranch: string | null
  head: string
  files: ChangedFile[]
  commits: AgentCommit[]
  uncommitted: { files: number; paths: string[] }
  stats: { files: number; additions: number; deletions: number }
}

/** The tree of everything in the work tree now (what `git add -A` would commit), without touching the index. */
export async function workingTree(worktree: string): Promise<string> {
  const indexPath = path.resolve(
    worktree,
    (await git(['rev-parse', '--git-path', 'index'], { cwd: worktree })).stdout.trim(),
  )
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-index-'))
  const temporary = path.join(dir, 'index')
  try {
    // A copy of the real index keeps its stat cache: `add -A` then hashes only what changed.
    await copyFile(indexPath, temporary).catch(() => undefined)
    const env = { GIT_INDEX_FILE: temporary }
    await git(['add', '-A', '--', '.'], { cwd: worktree, env })
    return (await git(['write-tree'], { cwd: worktree, env })).stdout.trim()
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

function parseNameStatus(output: string): { status: FileStatus; path: string; oldPath?: string }[] {
  const fields = output.split('\0')
  const entries: { status: FileStatus; path: string; oldPath?: string }[] = []
  for (let i = 0; i < fields.length - 1;) {
    const code = fields[i++]!
    const status = code[0] as FileStatus
    if (status === 'R' || status === 'C') {
      const oldPath = fields[i++]!
      entries.push({ status, oldPath, path: fields[i++]! })
    } else entries.push({ status, path: fields[i++]! })
  }
  return entries
}

function parseNumstat(
  output: string,
): Map<string, { additions: number; deletions: number; binary: boolean }> {
  const stats = new Map<string, { additions: number; deletions: number; binary: boolean }>()
  const fields = output.split('\0')
  for (let i = 0; i < fields.length - 1;) {
    const [added, deleted, name] = fields[i++]!.split('\t')
    // A rename: an empty name, then the old and the new path.
    const file = name ? name : (i++, fields[i++]!)
    stats.set(file, {
      additions: added === '-' ? 0 : Number(added),
      deletions: deleted === '-' ? 0 : Number(deleted),
      binary: added === '-',
    })
  }
  return stats
}

/** Splits a multi-file patch into the text of each file, in order. */
function splitPatch(patch: string): string[] {
  const parts = patch.split(/^(?=diff --git )/m)
  return parts.filter((part) => part.startsWith('diff --git '))
}

const DIFF_OPTIONS = ['-M', '--no-color', '--no-ext-diff', '--no-textconv'] as const

/** The change set of `worktree` against `base` (a commit id). */
export async function changeSet(
  worktree: string,
  base: string,
  options: { stat?: boolean; baseBranch?: string | null } = {},
): Promise<ChangeSet> {
  const cwd = worktree
  const head = (await git(['rev-parse', '--verify', 'HEAD^{commit}'], { cwd })).stdout.trim()
  const tree = await workingTree(worktree)
  const diffArgs = (from: string, to: string, ...extra: string[]) => [
    'diff-tree',
    '-r',
    ...DIFF_OPTIONS,
    ...extra,
    from,
    to,
  ]
  const [nameStatus, numstat, uncommittedNames, log] = await Promise.all([
    git(diffArgs(base, tree, '--name-status', '-z'), { cwd }),
    git(diffArgs(base, tree, '--numstat', '-z'), { cwd }),
    git(diffArgs(`${head}^{tree}`, tree, '--name-only', '-z', '--no-renames'), { cwd }),
    git(['log', '-z', '--format=%H%x1f%s%x1f%an%x1f%ae', `${base}..${head}`], { cwd }),
  ])
  const uncommittedPaths = uncommittedNames.stdout.split('\0').filter(Boolean)
  const uncommittedSet = new Set(uncommittedPaths)
  const stats = parseNumstat(numstat.stdout)
  const patches = options.stat
    ? []
    : splitPatch((await git([...diffArgs(base, tree, '-p', '--full-index')], { cwd })).stdout)
  const files = parseNameStatus(nameStatus.stdout).map((entry, index): ChangedFile => {
    const stat = stats.get(entry.path) ?? { additions: 0, deletions: 0, binary: false }
    return {
      ...entry,
      ...stat,
      uncommitted:
        uncommittedSet.has(entry.path) || (entry.oldPath !== undefined && uncommittedSet.has(entry.oldPath)),
      ...(!options.stat && { patch: patches[index] ?? '' }),
    }
  })
  const commits = log.stdout
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const [sha, subject, author, email] = line.replace(/^\n/, '').split('\x1f')
      return { sha: sha!, subject: subject ?? '', author: author ?? '', email: email ?? '' }
    })
  return {
    base,
    baseBranch: options.baseBranch ?? null,
    head,
    files,
    commits,
    uncommitted: { files: uncommittedPaths.length, paths: uncommittedPaths },
    stats: {
      files: files.length,
      additions: files.reduce((sum, file) => sum + file.additions, 0),
      deletions: files.reduce((sum, file) => sum + file.deletions, 0),
    },
  }
}

/** The blob of `file` in `tree` (undefined when it has none there) and its lines. */
export async function fileAt(
  worktree: string,
  tree: string,
  file: string,
): Promise<{ blob: string; lines: string[] } | undefined> {
  const { stdout } = await git(['ls-tree', '-z', tree, '--', file], { cwd: worktree })
  // ls-tree matches by prefix; only the exact path counts.
  const match = /^\d+ blob ([0-9a-f]+)\t([^\0]*)\0/.exec(stdout)
  if (!match || match[2] !== file) return undefined
  const blob = match[1]!
  const text = (await git(['cat-file', 'blob', blob], { cwd: worktree })).stdout
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  return { blob, lines }
}
