// Finding the project and its hangar.yaml the way git finds .git: walk up from the working directory.
// The project is the directory holding hangar.yaml; else the git root; else the working directory. Like git,
// the walk stops below each directory of GIT_CEILING_DIRECTORIES, and takes a `.git` only when it is a
// repository: a directory with a HEAD, or a file (a worktree's or submodule's pointer). An empty `.git` is
// not one: Codex's sandbox mounts an empty, read-only `.git` over each writable root it grants, /tmp among
// them, for as long as a command of its runs, and that mount point is an empty /tmp/.git on the host.
// A hangar.yaml is taken only from a user who could run this Hangar's agents anyway (see `loadConfigFile`).
import { existsSync, statSync } from 'node:fs'
import { open } from 'node:fs/promises'
import path from 'node:path'
import { defaultConfig, type HangarConfig, parseConfig } from '../core/config.js'
import { AppError } from '../core/errors.js'

export interface Project {
  dir: string
  name: string
  /** Absolute path of hangar.yaml, or null when the project has none. */
  configFile: string | null
}

/**
 * The directories the walk never goes up into, as git's GIT_CEILING_DIRECTORIES says (absolute paths, colon
 * separated): a hangar.yaml or .git above one of them is not this directory's project.
 */
function ceilingsOf(env: NodeJS.ProcessEnv): Set<string> {
  const list = env.GIT_CEILING_DIRECTORIES ?? ''
  return new Set(
    list
      .split(':')
      .filter((entry) => path.isAbsolute(entry))
      .map((entry) => path.resolve(entry)),
  )
}

/** A git repository's root: its `.git` is a directory with a HEAD, or a file (a worktree's pointer). */
function isGitRoot(directory: string): boolean {
  const dotGit = path.join(directory, '.git')
  const found = statSync(dotGit, { throwIfNoEntry: false })
  return found !== undefined && (found.isFile() || existsSync(path.join(dotGit, 'HEAD')))
}

const hasConfig = (directory: string) => existsSync(path.join(directory, 'hangar.yaml'))

/** The nearest directory from `start` up that `matches`, below the ceilings. */
function findUp(
  start: string,
  matches: (directory: string) => boolean,
  ceilings: Set<string>,
): string | null {
  let directory = path.resolve(start)
  for (;;) {
    if (matches(directory)) return directory
    const parent = path.dirname(directory)
    if (parent === directory || ceilings.has(parent)) return null
    directory = parent
  }
}

export function findProject(cwd: string, env: NodeJS.ProcessEnv = process.env): Project {
  const ceilings = ceilingsOf(env)
  const withConfig = findUp(cwd, hasConfig, ceilings)
  const dir = withConfig ?? findUp(cwd, isGitRoot, ceilings) ?? path.resolve(cwd)
  return {
    dir,
    name: path.basename(dir),
    configFile: withConfig ? path.join(withConfig, 'hangar.yaml') : null,
  }
}

/** Who runs this process, for the owner check of hangar.yaml: its effective uid, and the environment (SUDO_UID). */
export interface ConfigReader {
  env: NodeJS.ProcessEnv
  /** Undefined where there are no uids (Windows): no owner check then. */
  uid: number | undefined
}

/**
 * Why a hangar.yaml with this owner and mode may not configure this process, or undefined when it may. It
 * says which services its agents reach, with which credentials (`bearerEnv`): a file another local user can
 * write (say a /tmp/hangar.yaml above the working directory) would hand them those. So, as git refuses a
 * repository of another user and sshd a writable authorized_keys: the file must be the reader's or root's
 * (root can change anything anyway), under sudo the invoking user's too (SUDO_UID, as git allows), and not
 * writable by everyone.
 */
export function untrustedConfig(owner: number, mode: number, reader: ConfigReader): string | undefined {
  if (reader.uid === undefined) return undefined
  const sudoUid = reader.uid === 0 ? Number(reader.env.SUDO_UID) : Number.NaN
  if (owner !== reader.uid && owner !== 0 && owner !== sudoUid)
    return `belongs to another user (uid ${owner}), who could change what your agents run with`
  if ((mode & 0o002) !== 0) return 'can be changed by every user of this machine (it is world-writable)'
  return undefined
}

export async function loadConfigFile(
  file: string | null,
  env: NodeJS.ProcessEnv = process.env,
  /** The effective uid to check the file's owner against (a test's stand-in for another user). */
  uid: number | undefined = process.geteuid?.(),
): Promise<HangarConfig> {
  if (!file) return defaultConfig()
  const reader: ConfigReader = { env, uid }
  const cannotRead = (error: NodeJS.ErrnoException) =>
    new AppError('config_invalid', `cannot read ${file} (${error.code ?? 'error'})`, {
      hint: 'check the file permissions',
    })
  // Checked and read through one handle: the file checked is the file read.
  const handle = await open(file, 'r').catch((error) => {
    throw cannotRead(error)
  })
  try {
    const { uid: owner, mode } = await handle.stat()
    const untrusted = untrustedConfig(owner, mode, reader)
    if (untrusted) {
      const hint =
        untrustedConfig(owner, 0, reader) === undefined
          ? `if its content is yours, make it writable by you only: chmod o-w ${file}`
          : `if you wrote it, make it yours with sudo chown "$(id -u)" ${file}, else delete it or give your project a hangar.yaml of its own: the nearest one above the working directory wins`
      throw new AppError('config_invalid', `refusing ${file}: it ${untrusted}`, {
        hint,
        details: { file, owner },
      })
    }
    const text = await handle.readFile('utf8').catch((error) => {
      throw cannotRead(error)
    })
    return parseConfig(text, file)
  } finally {
    await handle.close()
  }
}
