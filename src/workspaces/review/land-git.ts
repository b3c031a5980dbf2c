// The git half of landing a workspace, with no store: the result commit is computed in a temporary
// worktree (a merge, a squash or a rebase of the workspace's commit onto the target's head), so a conflict
// is found there and the user's checkout is never half-merged; only a clean result reaches the user's
// repository — a fast-forward of their checkout when the target is checked out (and clean), else a ref
// update with an old-value check. User hooks never run (core.hooksPath is emptied): agents can write them.
import { mkdir, realpath, rm } from 'node:fs/promises'
import path from 'node:path'
import { AppError } from '../../core/errors.js'
import { git, GitError } from '../git.js'
import { workingTree } from './change-set.js'

export type LandStrategy = 'merge' | 'squash' | 'rebase'

export interface Identity {
  name: string
  email: string
}

/** No hooks, no signing prompts, no editor: a land is one non-interactive step. */
const SAFE = ['-c', 'core.hooksPath=/dev/null', '-c', 'commit.gpgSign=false', '-c', 'rebase.autoStash=false']

function identityEnv(identity: Identity): NodeJS.ProcessEnv {
  return {
    GIT_AUTHOR_NAME: identity.name,
    GIT_AUTHOR_EMAIL: identity.email,
    GIT_COMMITTER_NAME: identity.name,
    GIT_COMMITTER_EMAIL: identity.email,
    GIT_EDITOR: 'true',
    GIT_SEQUENCE_EDITOR: 'true',
  }
}

/** The person landing, as the repository knows them (`user.name`/`user.email`), else as Hangar does. */
export async function identityFor(repo: string, fallbackName: string): Promise<Identity> {
  const read = async (key: string) =>
    git(['config', '--get', key], { cwd: repo }).then(
      ({ stdout }) => stdout.trim() || undefined,
      () => undefined,
    )
  return {
    name: (await read('user.name')) ?? fallbackName,
    email: (await read('user.email')) ?? `${fallbackName.replace(/[^A-Za-z0-9._-]/g, '_')}@hangar.invalid`,
  }
}

/**
 * The workspace's work as a commit: HEAD when nothing is uncommitted, else a new commit of the working
 * state on top of HEAD that no ref points at yet (see adoptWork) — a refused land leaves the workspace
 * exactly as it was.
 */
export async function snapshotWork(
  worktree: string,
  message: string,
  identity: Identity,
): Promise<{ head: string; source: string }> {
  const head = (await git(['rev-parse', '--verify', 'HEAD^{commit}'], { cwd: worktree })).stdout.trim()
  const tree = await workingTree(worktree)
  const headTree = (await git(['rev-parse', '--verify', `${head}^{tree}`], { cwd: worktree })).stdout.trim()
  if (tree === headTree) return { head, source: head }
  const { stdout } = await git(['commit-tree', tree, '-p', head, '-m', message], {
    cwd: worktree,
    env: identityEnv(identity),
  })
  return { head, source: stdout.trim() }
}

/** After a land: the workspace's branch takes the commit of its work, and its index matches it. */
export async function adoptWork(worktree: string, snapshot: { head: string; source: string }): Promise<void> {
  if (snapshot.source === snapshot.head) return
  await git(['reset', '--quiet', '--soft', snapshot.source], { cwd: worktree })
  await git(['add', '-A', '--', '.'], { cwd: worktree })
}

export interface Checkout {
  path: string
  branch: string | null
}

/** Every worktree of the repository and the branch each has checked out. */
export async function checkouts(repo: string): Promise<Checkout[]> {
  const { stdout } = await git(['worktree', 'list', '--porcelain'], { cwd: repo })
  const list: Checkout[] = []
  for (const line of stdout.split('\n')) {
    if (line.startsWith('worktree ')) list.push({ path: line.slice('worktree '.length), branch: null })
    else if (line.startsWith('branch ') && list.length)
      list.at(-1)!.branch = line.slice('branch '.length).replace(/^refs\/heads\//, '')
  }
  return Promise.all(
    list.map(async (entry) => ({ ...entry, path: await realpath(entry.path).catch(() => entry.path) })),
  )
}

/** Tracked changes (staged or not) in a checkout, read without refreshing its index. */
export async function dirtyFiles(checkout: string): Promise<string[]> {
  const { stdout } = await git(
    ['--no-optional-locks', 'status', '--porcelain=v1', '-z', '--untracked-files=no'],
    { cwd: checkout },
  )
  return stdout
    .split('\0')
    .filter(Boolean)
    .map((entry) => entry.slice(3))
}

export type LandAttempt = { ok: true; result: string } | { ok: false; conflicts: string[]; reason: string }

/**
 * The commit the target would point at after landing `source` onto `targetHead`, computed in a temporary
 * worktree under `tmpRoot` that is always removed. Nothing outside it changes (new objects aside).
 */
export async function attemptLand(options: {
  repo: string
  tmpRoot: string
  source: string
  targetHead: string
  strategy: LandStrategy
  message: string
  identity: Identity
}): Promise<LandAttempt> {
  const { repo, source, targetHead, strategy } = options
  await mkdir(options.tmpRoot, { recursive: true, mode: 0o700 })
  const tmp = path.join(
    await realpath(options.tmpRoot),
    `land-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`,
  )
  const env = identityEnv(options.identity)
  const start = strategy === 'rebase' ? source : targetHead
  await git([...SAFE, 'worktree', 'add', '--quiet', '--detach', tmp, start], { cwd: repo })
  const conflicts = async () =>
    (await git(['diff', '--name-only', '-z', '--diff-filter=U'], { cwd: tmp })).stdout
      .split('\0')
      .filter(Boolean)
  try {
    try {
      if (strategy === 'merge') {
        await git([...SAFE, 'merge', '--no-ff', '--no-edit', '--quiet', '-m', options.message, source], {
          cwd: tmp,
          env,
        })
      } else if (strategy === 'squash') {
        await git([...SAFE, 'merge', '--squash', '--quiet', source], { cwd: tmp, env })
        const staged = await git(['diff', '--cached', '--quiet'], { cwd: tmp }).then(
          () => false,
          () => true,
        )
        if (staged)
          await git([...SAFE, 'commit', '--quiet', '--no-verify', '-m', options.message], { cwd: tmp, env })
      } else {
        await git([...SAFE, 'rebase', '--quiet', targetHead], { cwd: tmp, env })
      }
    } catch (error) {
      if (!(error instanceof GitError)) throw error
      const files = await conflicts().catch(() => [])
      if (strategy === 'rebase') await git(['rebase', '--abort'], { cwd: tmp }).catch(() => undefined)
      return { ok: false, conflicts: files, reason: error.stderrLine || error.message }
    }
    return {
      ok: true,
      result: (await git(['rev-parse', '--verify', 'HEAD^{commit}'], { cwd: tmp })).stdout.trim(),
    }
  } finally {
    await git(['worktree', 'remove', '--force', tmp], { cwd: repo }).catch(() =>
      rm(tmp, { recursive: true, force: true }),
    )
    await git(['worktree', 'prune'], { cwd: repo }).catch(() => undefined)
  }
}

/**
 * Moves branch `into` from `targetHead` to `result` in the user's repository: a fast-forward of the
 * checkout that has it (which must be clean and still at `targetHead`), or a ref update that fails when
 * the branch moved meanwhile. Either leaves the repository as it was when it fails.
 */
export async function applyLand(options: {
  repo: string
  into: string
  targetHead: string
  result: string
  checkout: string | undefined
  reflog: string
}): Promise<void> {
  const { into, targetHead, result } = options
  if (!options.checkout) {
    try {
      await git(['update-ref', '-m', options.reflog, `refs/heads/${into}`, result, targetHead], {
        cwd: options.repo,
      })
    } catch (error) {
      throw new AppError('conflict', `branch ${into} moved while landing; nothing was changed`, {
        hint: 'land again',
        cause: error,
      })
    }
    return
  }
  const head = (
    await git(['rev-parse', '--verify', 'HEAD^{commit}'], { cwd: options.checkout })
  ).stdout.trim()
  const dirty = await dirtyFiles(options.checkout)
  if (head !== targetHead || dirty.length) {
    throw new AppError(
      'conflict',
      `the checkout of ${into} at ${options.checkout} changed while landing; nothing was changed`,
      {
        hint: 'commit or stash your changes there, then land again',
      },
    )
  }
  try {
    await git([...SAFE, 'merge', '--ff-only', '--quiet', result], { cwd: options.checkout })
  } catch (error) {
    const reason = error instanceof GitError ? error.stderrLine : String(error)
    throw new AppError(
      'conflict',
      `cannot update the checkout of ${into} at ${options.checkout}: ${reason}`,
      {
        hint: 'move or remove the untracked files in the way, then land again',
        cause: error,
      },
    )
  }
}
