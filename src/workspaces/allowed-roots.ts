// Where a run may work: inside an allowed root — the daemon's project directory, `server.allowedRoots`
// of hangar.yaml and every registered project (read again at each check, so a project added or removed
// through any node counts at once on all of them) — and never in the data dir (its instance key, daemon.json with the CLI's session and
// the store are what a run there could read). Every check is on the real path, after symlinks, so
// `../../..`, an absolute path elsewhere and a symlink in the project that points out are all refused.
import { realpath, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { AppError } from '../core/errors.js'

export interface AllowedRoots {
  /** The real paths of the allowed roots fixed at start-up, the project's first (registered projects apart). */
  readonly roots: readonly string[]
  /** The real path of the data dir. */
  readonly dataDir: string
  /**
   * The real path of `requested` (relative to `base`, default the project), which must be an existing
   * directory inside an allowed root and outside the data dir; anything else is an `invalid_request`
   * naming the path, the allowed roots and how to add one.
   */
  resolve(requested: string | undefined, base?: string): Promise<string>
}

export interface AllowedRootsOptions {
  projectDir: string
  /** `server.allowedRoots` as written in hangar.yaml: relative entries are relative to the project. */
  configured: readonly string[]
  dataDir: string
  /** For `~/…` entries (default: the OS's home directory). */
  home?: string
  /** The real paths of the registered projects, asked at every check (default: none). */
  projectRoots?: () => Promise<readonly string[]>
}

/** True when `candidate` is `root` or lies under it (both real paths). */
export function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate)
  return (
    relative === '' ||
    (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
  )
}

/** The real path of a directory that may not exist yet: its nearest existing ancestor's, plus the rest. */
async function realpathOfNearest(target: string): Promise<string> {
  const real = await realpath(target).catch(() => undefined)
  if (real) return real
  const parent = path.dirname(target)
  return parent === target ? target : path.join(await realpathOfNearest(parent), path.basename(target))
}

const ADD_ROOT_HINT =
  'register it as a project (hangar projects add), add it to server.allowedRoots in hangar.yaml, or run in the project'

/**
 * Resolves the allowed roots once, at start-up. A root that does not exist, or a data dir that is inside
 * a root (or holds one), is a `config_invalid` error: such a daemon would let runs read its own secrets.
 */
export async function loadAllowedRoots(options: AllowedRootsOptions): Promise<AllowedRoots> {
  const home = options.home ?? os.homedir()
  const projectDir = await realpath(options.projectDir).catch(() => path.resolve(options.projectDir))
  const dataDir = await realpathOfNearest(path.resolve(options.dataDir))
  const roots = [projectDir]
  for (const entry of options.configured) {
    const expanded = entry.replace(/^~(?=$|\/)/, home)
    const absolute = path.resolve(projectDir, expanded)
    const real = await realpath(absolute).catch(() => undefined)
    if (!real || !(await stat(real)).isDirectory()) {
      throw new AppError('config_invalid', `server.allowedRoots: ${absolute} is not a directory`, {
        hint: 'create it, or remove it from server.allowedRoots in hangar.yaml',
        details: { key: 'server.allowedRoots', path: absolute },
      })
    }
    if (!roots.includes(real)) roots.push(real)
  }
  for (const root of roots) {
    const what = root === projectDir ? `the project ${root}` : `the allowed root ${root}`
    if (isInside(root, dataDir)) {
      throw new AppError(
        'config_invalid',
        `the data dir ${dataDir} is inside ${what}: runs there could read its keys and sessions`,
        {
          hint:
            root === projectDir
              ? 'keep the data dir outside the project (--data-dir or HANGAR_DATA_DIR), or start hangar in the project directory'
              : 'keep the data dir outside it (--data-dir or HANGAR_DATA_DIR), or remove it from server.allowedRoots',
          details: { dataDir, root },
        },
      )
    }
    if (isInside(dataDir, root)) {
      throw new AppError('config_invalid', `${what} is inside the data dir ${dataDir}`, {
        hint: 'run hangar from a project outside the data dir, or choose another data dir (--data-dir)',
        details: { dataDir, root },
      })
    }
  }

  function refusal(
    requested: string,
    message: string,
    hint: string = ADD_ROOT_HINT,
    allowed: readonly string[] = roots,
  ): AppError {
    return new AppError('invalid_request', message, {
      hint,
      details: { cwd: requested, allowedRoots: allowed },
    })
  }

  return {
    roots,
    dataDir,
    async resolve(requested, base = projectDir) {
      const absolute = path.resolve(base, requested ?? '.')
      const real = await realpath(absolute).catch(() => undefined)
      if (!real) {
        throw refusal(absolute, `cwd ${absolute} does not exist on the daemon's host`, 'create it first')
      }
      if (!(await stat(real)).isDirectory())
        throw refusal(absolute, `cwd ${absolute} is not a directory`, 'give a directory')
      if (isInside(dataDir, real)) {
        throw refusal(
          absolute,
          `cwd ${absolute} is inside Hangar's data dir, where no run may work`,
          'run in the project or one of server.allowedRoots',
        )
      }
      if (roots.some((root) => isInside(root, real))) return real
      const allowed = [...new Set([...roots, ...((await options.projectRoots?.()) ?? [])])]
      if (!allowed.some((root) => isInside(root, real))) {
        const shown = real === absolute ? absolute : `${absolute} (${real})`
        throw refusal(
          absolute,
          `cwd ${shown} is outside the allowed roots: ${allowed.join(', ')}`,
          ADD_ROOT_HINT,
          allowed,
        )
      }
      return real
    },
  }
}
