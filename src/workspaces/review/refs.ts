// Refs users give (a land target, a diff base, a conversation's start point) are hostile until checked:
// a name git itself accepts as a branch (`git check-ref-format --branch`), never an option, resolved only
// with `--verify --end-of-options`, so nothing a user types is read as a flag or a revision expression.
import { AppError } from '../../core/errors.js'
import { git, GitError, gitRoot } from '../git.js'

const HEX = /^[0-9a-f]{7,64}$/

/** Refuses what cannot be a branch name or a commit id; returns the name as git would spell it. */
export async function checkRefName(repo: string, ref: string, field: string): Promise<string> {
  const bad = (why: string) =>
    new AppError('invalid_request', `${field}: ${JSON.stringify(ref.slice(0, 80))} is not a valid ${why}`, {
      hint: 'give a local branch name (or, where a commit is allowed, a commit id)',
      details: { field },
    })
  // eslint-disable-next-line no-control-regex
  if (!ref || ref.length > 255 || ref.startsWith('-') || /[\s\x00-\x1f\x7f]/.test(ref))
    throw bad('branch name')
  if (HEX.test(ref)) return ref
  try {
    const { stdout } = await git(['check-ref-format', '--branch', ref], { cwd: repo })
    const name = stdout.trim()
    // `--branch` also expands `@{-1}`-style shorthands; only a plain name is taken.
    if (name !== ref) throw bad('branch name')
    return name
  } catch (error) {
    if (error instanceof GitError) throw bad('branch name')
    throw error
  }
}

/** The commit `fullRef` names, or undefined. */
export async function commitOf(repo: string, fullRef: string): Promise<string | undefined> {
  try {
    const { stdout } = await git(
      ['rev-parse', '--verify', '--quiet', '--end-of-options', `${fullRef}^{commit}`],
      {
        cwd: repo,
      },
    )
    return stdout.trim() || undefined
  } catch {
    return undefined
  }
}

/** The head commit of local branch `branch` (checked first); a missing branch is `not_found`. */
export async function resolveBranch(repo: string, branch: string, field: string): Promise<string> {
  const name = await checkRefName(repo, branch, field)
  const commit = HEX.test(name) ? undefined : await commitOf(repo, `refs/heads/${name}`)
  if (!commit) {
    throw new AppError('not_found', `${field}: there is no branch ${name} in ${repo}`, {
      hint: `see git -C ${repo} branch`,
      details: { field },
    })
  }
  return commit
}

/** A start point: a local branch, a tag or a commit id of the repository; its commit. */
export async function resolveStartPoint(repo: string, ref: string, field: string): Promise<string> {
  const name = await checkRefName(repo, ref, field)
  const commit = HEX.test(name)
    ? await commitOf(repo, name)
    : ((await commitOf(repo, `refs/heads/${name}`)) ?? (await commitOf(repo, `refs/tags/${name}`)))
  if (!commit) {
    throw new AppError('not_found', `${field}: there is no branch, tag or commit ${name} in ${repo}`, {
      hint: `see git -C ${repo} branch`,
      details: { field },
    })
  }
  return commit
}

/** `baseRef` of a new conversation of the project in `dir`: a branch, tag or commit it has. */
export async function checkStartPoint(dir: string, ref: string, field = 'baseRef'): Promise<string> {
  const repo = await gitRoot(dir)
  if (!repo) {
    throw new AppError(
      'invalid_request',
      `${field}: ${dir} is not a git repository, so it has no ref to start from`,
      {
        hint: `leave ${field} out`,
        details: { field },
      },
    )
  }
  return resolveStartPoint(repo, ref, field)
}
