// What a project may be: an existing directory on the daemon's host (its real path is stored, so a
// symlink cannot later point it elsewhere), never the data dir, inside it or holding it, with a name of
// PROJECT_NAME_PATTERN. A directory inside a git work tree is a `git` project (conversations get
// worktrees of it); any other is a `folder` (conversations get copies).
import { realpath, stat } from 'node:fs/promises'
import path from 'node:path'
import { AppError } from '../core/errors.js'
import { isInside } from '../workspaces/allowed-roots.js'
import { gitRoot } from '../workspaces/git.js'

export const PROJECT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
export const PROJECT_NAME_RULE =
  'letters, digits, ".", "_" and "-", starting with a letter or digit, at most 64 characters'

export function assertProjectName(name: string): void {
  if (!PROJECT_NAME_PATTERN.test(name)) {
    throw new AppError('invalid_request', `project name "${name}" is not allowed: use ${PROJECT_NAME_RULE}`, {
      details: { field: 'name', pattern: PROJECT_NAME_PATTERN.source },
    })
  }
}

/** A valid name made from a directory's basename (`my repo` → `my-repo`). */
export function nameFromDirectory(directory: string): string {
  const cleaned = path
    .basename(directory)
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 64)
    .replace(/-+$/, '')
  return cleaned || 'project'
}

/** `base`, or `base-2`, `base-3`, … : the first that `taken` does not hold. */
export async function uniqueName(base: string, taken: (name: string) => Promise<boolean>): Promise<string> {
  if (!(await taken(base))) return base
  for (let suffix = 2; ; suffix++) {
    const tail = `-${suffix}`
    const candidate = `${base.slice(0, 64 - tail.length)}${tail}`
    if (!(await taken(candidate))) return candidate
  }
}

/**
 * The real path and kind of a directory to register, or an `invalid_request` saying what is wrong with
 * it: not absolute, missing, not a directory, or the data dir (inside it, or holding it).
 */
export async function checkProjectDirectory(
  requested: string,
  dataDir: string,
): Promise<{ path: string; kind: 'git' | 'folder' }> {
  const details = { field: 'path', path: requested }
  if (!path.isAbsolute(requested)) {
    throw new AppError('invalid_request', `project path ${requested} is not an absolute path`, {
      hint: 'give the full path of a directory on the daemon’s host (hangar projects add resolves it for you)',
      details,
    })
  }
  const real = await realpath(requested).catch(() => undefined)
  if (!real) {
    throw new AppError('invalid_request', `project path ${requested} does not exist on the daemon's host`, {
      hint: 'create the directory first, or check the spelling',
      details,
    })
  }
  if (!(await stat(real)).isDirectory()) {
    throw new AppError('invalid_request', `project path ${requested} is not a directory`, {
      hint: 'give the directory that holds the files, not a file in it',
      details,
    })
  }
  const realDataDir = await realpath(dataDir).catch(() => path.resolve(dataDir))
  if (isInside(realDataDir, real)) {
    throw new AppError(
      'invalid_request',
      `project path ${requested} is inside Hangar's data dir ${realDataDir}, where no run may work`,
      { hint: 'register a directory outside the data dir', details },
    )
  }
  if (isInside(real, realDataDir)) {
    throw new AppError(
      'invalid_request',
      `project path ${requested} holds Hangar's data dir ${realDataDir}: runs there could read its keys and sessions`,
      {
        hint: 'register a directory that does not contain the data dir, or move the data dir (--data-dir)',
        details,
      },
    )
  }
  return { path: real, kind: (await gitRoot(real)) ? 'git' : 'folder' }
}
