// The files of a workspace on this host, with no store: a git worktree of the project (a branch of its own
// per conversation, or a detached HEAD for a one-off), or a plain copy of a project that is not a git
// repository. Creating, checking that nobody changed it behind our back, and removing it again.
import { lstat, mkdir, realpath, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { AppError } from '../core/errors.js'
import { copyTree } from './copy-tree.js'
import { currentBranch, git, GitError, gitRoot } from './git.js'

export type WorkspaceKind = 'worktree' | 'copy' | 'in_place'

/** What we know about a workspace's files (a stored workspace row has all of it). */
export interface WorkspaceLocation {
  /** For messages; absent before the workspace is stored. */
  id?: string
  kind: WorkspaceKind
  path: string
  /** The directory it was made from (the project, or the cwd of a one-off run). */
  projectPath: string
  branch: string | null
  createdBranch: boolean
}

export interface CreatedWorkspace extends WorkspaceLocation {
  kind: 'worktree' | 'copy'
  /** For a worktree: the commit it started from (resolved, not the ref that was asked for). */
  baseRef: string | null
  /** For a worktree: the branch that commit was the head of (the ref asked for, or HEAD's), or null. */
  baseBranch?: string | null
  /** Where runs work: the project's own directory inside the workspace (a worktree mirrors the whole repo). */
  cwd: string
}

export interface BranchOutcome {
  name: string
  deleted: boolean
  /** Why it was kept; null when it was deleted. */
  reason: string | null
}

export interface RemovedFiles {
  /** False for a workspace in place (the user's project is never removed) or files already gone. */
  removedFiles: boolean
  branch: BranchOutcome | null
}

interface WorktreeEntry {
  path: string
  /** Short branch name, or null when detached (or bare). */
  branch: string | null
  detached: boolean
}

async function exists(target: string): Promise<boolean> {
  return lstat(target).then(
    () => true,
    () => false,
  )
}

async function realOrResolved(target: string): Promise<string> {
  return realpath(target).catch(() => path.resolve(target))
}

/** The commit `ref` names in `repo`, or undefined when it names none. */
export async function resolveCommit(repo: string, ref: string): Promise<string | undefined> {
  try {
    return (await git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd: repo })).stdout.trim()
  } catch {
    return undefined
  }
}

async function branchExists(repo: string, branch: string): Promise<boolean> {
  return (await resolveCommit(repo, `refs/heads/${branch}`)) !== undefined
}

/** Every worktree of the repository `dir` belongs to (`git worktree list --porcelain`). */
async function listWorktrees(dir: string): Promise<WorktreeEntry[]> {
  const { stdout } = await git(['worktree', 'list', '--porcelain'], { cwd: dir })
  const entries: WorktreeEntry[] = []
  let current: WorktreeEntry | undefined
  for (const line of stdout.split('\n')) {
    if (line.startsWith('worktree ')) {
      current = { path: line.slice('worktree '.length), branch: null, detached: false }
      entries.push(current)
    } else if (current && line.startsWith('branch ')) {
      current.branch = line.slice('branch '.length).replace(/^refs\/heads\//, '')
    } else if (current && line === 'detached') current.detached = true
  }
  return Promise.all(entries.map(async (entry) => ({ ...entry, path: await realOrResolved(entry.path) })))
}

/** Whether `dir` is in a git repository, and whether that has a commit to make a worktree from. */
export async function repositoryState(dir: string): Promise<'none' | 'no_commit' | 'ready'> {
  const repo = await gitRoot(dir)
  if (!repo) return 'none'
  return (await resolveCommit(repo, 'HEAD')) ? 'ready' : 'no_commit'
}

function noCommitError(repo: string): AppError {
  return new AppError('conflict', `${repo} has no commit yet, so there is nothing to make a worktree from`, {
    hint: 'commit first (git commit --allow-empty -m "start" will do), then try again',
  })
}

/** A fresh directory `<root>/<name>`; root is made if needed and given as its real path. */
async function targetDirectory(root: string, name: string): Promise<string> {
  await mkdir(root, { recursive: true, mode: 0o700 })
  const target = path.join(await realpath(root), name)
  if (await exists(target)) {
    throw new AppError('conflict', `${target} exists already`, {
      hint: 'remove it (or its workspace with hangar workspaces remove) and try again',
    })
  }
  return target
}

/**
 * A git worktree of the repository `projectDir` is in, at `<root>/<name>`.
 * - With `branch` (a conversation's `hangar/<conversation-id>`): checked out on that branch, made from
 *   `baseRef` (default HEAD), and `createdBranch: true`. If the branch exists already — the workspace of a
 *   conversation made again after a removal that kept it, or one a person made — it is checked out as it
 *   is (its commits are the conversation's earlier work, or someone's), `baseRef` is ignored and
 *   `createdBranch: false`: Hangar deletes only branches it made, so it never deletes that one.
 * - Without `branch` (a one-off `--isolate` run): a detached HEAD at `baseRef` (default HEAD).
 */
export async function createWorktree(options: {
  projectDir: string
  root: string
  name: string
  branch?: string
  baseRef?: string
}): Promise<CreatedWorkspace> {
  const repo = await gitRoot(options.projectDir)
  if (!repo) {
    throw new AppError('invalid_request', `${options.projectDir} is not in a git repository`, {
      hint: 'git init and commit the project to work in worktrees',
    })
  }
  const prefix = (await git(['rev-parse', '--show-prefix'], { cwd: options.projectDir })).stdout.trim()
  let base = await resolveCommit(repo, options.baseRef ?? 'HEAD')
  if (!base) {
    if (!options.baseRef || !(await resolveCommit(repo, 'HEAD'))) throw noCommitError(repo)
    throw new AppError('invalid_request', `${repo} has no commit "${options.baseRef}"`, {
      hint: 'give a branch, tag or commit that exists in the project',
    })
  }
  const baseBranch = options.baseRef
    ? (await branchExists(repo, options.baseRef))
      ? options.baseRef
      : null
    : await currentBranch(repo).catch(() => null)
  const target = await targetDirectory(options.root, options.name)
  let createdBranch = false
  let args: string[]
  if (!options.branch) args = ['worktree', 'add', '--quiet', '--detach', target, base]
  else if (await branchExists(repo, options.branch)) {
    base = (await resolveCommit(repo, `refs/heads/${options.branch}`))!
    args = ['worktree', 'add', '--quiet', target, options.branch]
  } else {
    createdBranch = true
    args = ['worktree', 'add', '--quiet', '-b', options.branch, target, base]
  }
  try {
    await git(args, { cwd: repo })
  } catch (error) {
    const reason = error instanceof GitError ? error.stderrLine : String(error)
    const checkedOut = /already (checked out|used by worktree) at '?([^']+)'?/.exec(reason)
    if (checkedOut && options.branch) {
      throw new AppError('conflict', `branch ${options.branch} is already checked out at ${checkedOut[2]}`, {
        hint: `switch that worktree to another branch, or delete the branch ${options.branch}, and try again`,
      })
    }
    throw new AppError('unavailable', `cannot create a worktree of ${repo} at ${target}: ${reason}`, {
      retryable: false,
      cause: error,
    })
  }
  const cwd = path.resolve(target, prefix)
  // A project directory that is not committed yet (a new folder with hangar.yaml) is not in the
  // worktree: the agent still works where the project is, and its files become part of the branch.
  await mkdir(cwd, { recursive: true })
  return {
    kind: 'worktree',
    path: target,
    projectPath: await realOrResolved(options.projectDir),
    branch: options.branch ?? null,
    baseRef: base,
    baseBranch,
    createdBranch,
    cwd,
  }
}

/** Top-level names never copied: Hangar's per-run files (skills) that a crashed in-place run left. */
const COPY_SKIPPED_NAMES = new Set(['.hangar'])

/**
 * A plain copy of `projectDir` at `<root>/<name>`, for a project that is not a git repository. Everything
 * is copied (node_modules too: the agent may need to build or test), symlinks stay symlinks pointing where
 * they pointed, and these are left out: a top-level `.hangar`, the directories in `exclude` (Hangar's data
 * dir when it lies inside the project — or the copy would contain itself), and sockets, FIFOs and devices,
 * which cannot be copied.
 */
export async function createCopy(options: {
  projectDir: string
  root: string
  name: string
  exclude?: readonly string[]
}): Promise<CreatedWorkspace> {
  const source = await realOrResolved(options.projectDir)
  if (
    !(await stat(source).then(
      (info) => info.isDirectory(),
      () => false,
    ))
  )
    throw new AppError('invalid_request', `${options.projectDir} is not a directory`)
  const target = await targetDirectory(options.root, options.name)
  const excluded = new Set(
    await Promise.all([options.root, ...(options.exclude ?? [])].map((entry) => realOrResolved(entry))),
  )
  try {
    await copyTree(source, target, (from) => {
      if (path.dirname(from) === source && COPY_SKIPPED_NAMES.has(path.basename(from))) return false
      return !excluded.has(from)
    })
  } catch (error) {
    await rm(target, { recursive: true, force: true })
    throw new AppError('unavailable', `cannot copy ${source} to ${target}: ${(error as Error).message}`, {
      retryable: false,
      cause: error,
    })
  }
  return {
    kind: 'copy',
    path: target,
    projectPath: source,
    branch: null,
    baseRef: null,
    createdBranch: false,
    cwd: target,
  }
}

function label(location: WorkspaceLocation): string {
  return location.id ? `workspace ${location.id}` : 'the workspace'
}

function removeHint(location: WorkspaceLocation): string {
  return location.id
    ? `remove the workspace with hangar workspaces remove ${location.id} (a new one is made on the next message)`
    : 'remove the workspace (a new one is made on the next message)'
}

/**
 * Throws a `conflict` AppError unless the workspace is as we left it: its directory exists and, for a
 * worktree, it is still a worktree of the project on its own branch (a one-off: still detached). A
 * worktree switched to another branch behind our back is reported, never silently reused.
 */
export async function verifyWorkspace(location: WorkspaceLocation): Promise<void> {
  if (
    !(await stat(location.path).then(
      (info) => info.isDirectory(),
      () => false,
    ))
  ) {
    throw new AppError(
      'conflict',
      `${label(location)} at ${location.path} is missing — it was removed outside Hangar`,
      {
        hint: removeHint(location),
      },
    )
  }
  if (location.kind !== 'worktree') return
  let entries: WorktreeEntry[]
  try {
    entries = await listWorktrees(location.projectPath)
  } catch (error) {
    throw new AppError(
      'conflict',
      `${label(location)}: ${location.projectPath} is not a git repository any more`,
      {
        hint: removeHint(location),
        cause: error,
      },
    )
  }
  const real = await realOrResolved(location.path)
  const entry = entries.find((candidate) => candidate.path === real)
  if (!entry) {
    throw new AppError(
      'conflict',
      `${label(location)} at ${location.path} is no longer a worktree of ${location.projectPath} — it was changed outside Hangar`,
      { hint: removeHint(location) },
    )
  }
  const expected = location.branch
  if (expected ? entry.branch === expected : entry.detached) return
  const actual = entry.branch ? `branch ${entry.branch}` : 'a detached HEAD'
  const wanted = expected ?? 'a detached HEAD'
  const back = expected
    ? `switch it back with git -C ${location.path} switch ${expected}`
    : `detach it again with git -C ${location.path} switch --detach`
  throw new AppError(
    'conflict',
    `${label(location)} at ${location.path} is on ${actual}, not ${wanted} — it was changed outside Hangar`,
    { hint: `${back}, or ${removeHint(location)}` },
  )
}

/** Never delete the project itself (or a directory holding it) because of a wrong row. */
function assertRemovable(location: WorkspaceLocation): void {
  const target = path.resolve(location.path)
  const project = path.resolve(location.projectPath)
  if (
    target === path.parse(target).root ||
    project === target ||
    project.startsWith(`${target}${path.sep}`)
  ) {
    throw new AppError('conflict', `refusing to remove ${target}: it holds the project ${project}`)
  }
}

async function removeDirectory(target: string): Promise<void> {
  try {
    await rm(target, { recursive: true, force: true, maxRetries: 3 })
  } catch (error) {
    throw new AppError('conflict', `cannot remove ${target}: ${(error as Error).message}`, {
      hint: 'check its permissions, remove it by hand, then try again',
      cause: error,
    })
  }
}

async function deleteBranch(location: WorkspaceLocation & { branch: string }): Promise<BranchOutcome> {
  const name = location.branch
  if (!location.createdBranch) return { name, deleted: false, reason: 'not created by Hangar' }
  if (!(await gitRoot(location.projectPath)))
    return { name, deleted: false, reason: `${location.projectPath} is not a git repository any more` }
  if (!(await branchExists(location.projectPath, name)))
    return { name, deleted: false, reason: 'it was already deleted' }
  const holder = (await listWorktrees(location.projectPath)).find((entry) => entry.branch === name)
  if (holder) return { name, deleted: false, reason: `it is checked out at ${holder.path}` }
  try {
    await git(['branch', '--quiet', '-D', name], { cwd: location.projectPath })
    return { name, deleted: true, reason: null }
  } catch (error) {
    return { name, deleted: false, reason: error instanceof GitError ? error.stderrLine : String(error) }
  }
}

/**
 * Removes a workspace's files; safe to call again. A worktree goes with `git worktree remove --force`
 * (its uncommitted changes too), else by deleting the directory and pruning; its branch is deleted only
 * when Hangar created it and no other worktree has it checked out — otherwise the outcome says why it was
 * kept. A copy is deleted; a workspace in place is the user's project and is never touched.
 */
export async function removeWorkspaceFiles(location: WorkspaceLocation): Promise<RemovedFiles> {
  if (location.kind === 'in_place') return { removedFiles: false, branch: null }
  assertRemovable(location)
  const present = await exists(location.path)
  if (location.kind === 'copy') {
    if (present) await removeDirectory(location.path)
    return { removedFiles: present, branch: null }
  }
  const repo = await gitRoot(location.projectPath)
  if (present) {
    const removed = repo
      ? await git(['worktree', 'remove', '--force', location.path], { cwd: repo }).then(
          () => true,
          () => false,
        )
      : false
    if (!removed) await removeDirectory(location.path)
  }
  // Forget the worktree's administrative files if its directory went another way.
  if (repo) await git(['worktree', 'prune'], { cwd: repo }).catch(() => undefined)
  const branch = location.branch ? await deleteBranch({ ...location, branch: location.branch }) : null
  return { removedFiles: present, branch }
}

/** Where a workspace's runs work: the project's directory inside it (worktrees mirror the whole repo). */
export async function workspaceCwd(location: WorkspaceLocation): Promise<string> {
  if (location.kind !== 'worktree') return location.path
  const prefix = await git(['rev-parse', '--show-prefix'], { cwd: location.projectPath }).then(
    ({ stdout }) => stdout.trim(),
    () => '',
  )
  const cwd = path.resolve(location.path, prefix)
  return (await exists(cwd)) ? cwd : location.path
}

/** How many files `git status --short` lists in a worktree; null when it cannot tell. */
export async function changedFileCount(location: WorkspaceLocation): Promise<number | null> {
  if (location.kind !== 'worktree') return null
  try {
    const { stdout } = await git(['status', '--short', '--untracked-files=all'], { cwd: location.path })
    return stdout.split('\n').filter(Boolean).length
  } catch {
    return null
  }
}
