// Every path a tool touches goes through here. The check is on the real path (symlinks followed, at any
// depth, dangling ones included) because a lexical check alone lets `link/../../etc` or a symlink that
// points out of the workspace slip through. A symlink swapped in between this check and the file operation
// is caught by workspace-fs.ts, which opens the checked real path without following any symlink.
import { lstat, readlink, realpath } from 'node:fs/promises'
import path from 'node:path'

export interface ResolveOptions {
  /** Refuse a path that does not exist (reads, edits, deletes). */
  mustExist?: boolean
  /** Refuse paths a tool must never change: the workspace root itself and anything inside `.git/`. */
  forWrite?: boolean
}

export type ResolvedPath =
  | {
      ok: true
      /** The real absolute path (symlinks followed); the tool operates on this one. */
      absolutePath: string
      /** The path relative to the real workspace root, with `/` separators, for messages and proposals. */
      relativePath: string
      /** The real path of the workspace root. */
      workspaceRoot: string
      exists: boolean
    }
  | { ok: false; message: string }

/** Symlink hops allowed while resolving a dangling chain by hand, mirroring the kernel's own limit. */
const MAX_SYMLINK_HOPS = 40

class SymlinkLoopError extends Error {}

function errorCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined
}

/**
 * `realpath` for a path that may not exist yet: the nearest existing ancestor is resolved and the missing
 * rest appended. A dangling symlink on the way is followed by hand, so a link to a missing file outside
 * the workspace resolves to that outside location instead of looking like a new file inside.
 */
async function realpathAllowingMissing(target: string, hops = 0): Promise<{ real: string; exists: boolean }> {
  if (hops > MAX_SYMLINK_HOPS) throw new SymlinkLoopError()
  try {
    return { real: await realpath(target), exists: true }
  } catch (error) {
    const code = errorCode(error)
    if (code === 'ELOOP') throw new SymlinkLoopError()
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error
  }
  const parent = path.dirname(target)
  if (parent === target) return { real: target, exists: false }
  const stats = await lstat(target).catch(() => undefined)
  if (stats?.isSymbolicLink()) {
    const linkTarget = await readlink(target)
    return realpathAllowingMissing(path.resolve(parent, linkTarget), hops + 1)
  }
  const resolvedParent = await realpathAllowingMissing(parent, hops + 1)
  return { real: path.join(resolvedParent.real, path.basename(target)), exists: false }
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate)
  return (
    relative === '' ||
    (!relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative))
  )
}

function toPosix(relative: string): string {
  return relative.split(path.sep).join('/')
}

/**
 * Resolves `requested` (relative to the workspace, or absolute) to a real path inside the workspace.
 * Anything else is a refusal whose message tells the model what was wrong and what to do instead.
 */
export async function resolveInWorkspace(
  workspace: string,
  requested: string,
  options: ResolveOptions = {},
): Promise<ResolvedPath> {
  if (requested.trim() === '') {
    return {
      ok: false,
      message: 'The path is empty; give a path relative to the workspace root, such as "src/index.ts".',
    }
  }
  if (requested.includes('\0')) {
    return {
      ok: false,
      message: `Path ${JSON.stringify(requested)} contains a NUL byte; use a plain relative path.`,
    }
  }
  let workspaceRoot: string
  try {
    workspaceRoot = await realpath(workspace)
  } catch {
    return {
      ok: false,
      message: `The workspace ${workspace} does not exist or cannot be read; no file tool can run.`,
    }
  }
  const lexical = path.resolve(workspaceRoot, requested)
  let resolved: { real: string; exists: boolean }
  try {
    resolved = await realpathAllowingMissing(lexical)
  } catch (error) {
    if (error instanceof SymlinkLoopError) {
      return {
        ok: false,
        message: `Path ${requested} goes through a symlink loop; use a path that does not.`,
      }
    }
    return {
      ok: false,
      message: `Path ${requested} cannot be resolved (${errorCode(error) ?? String(error)}).`,
    }
  }
  if (!isInside(workspaceRoot, resolved.real)) {
    // A path that is lexically inside but real outside escaped through a symlink; say so, since the
    // model cannot see symlinks in a plain path.
    const viaLink = isInside(workspaceRoot, lexical) ? ' through a symlink' : ''
    return {
      ok: false,
      message: `Path ${requested} is outside the workspace${viaLink}; use a path relative to the workspace root.`,
    }
  }
  const relativePath = toPosix(path.relative(workspaceRoot, resolved.real))
  if (options.forWrite) {
    if (relativePath === '') {
      return {
        ok: false,
        message: 'The workspace root itself cannot be written or deleted; name a file inside it.',
      }
    }
    if (relativePath.split('/').some((segment) => segment.toLowerCase() === '.git')) {
      return {
        ok: false,
        message: `Path ${requested} is inside .git/, which tools must not change; use git through run_command if you need to.`,
      }
    }
  }
  if (options.mustExist && !resolved.exists) {
    return {
      ok: false,
      message: `Path ${requested} does not exist; use list_files or glob to find the right path.`,
    }
  }
  return {
    ok: true,
    absolutePath: resolved.real,
    relativePath: relativePath === '' ? '.' : relativePath,
    workspaceRoot,
    exists: resolved.exists,
  }
}
