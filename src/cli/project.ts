// Finding the project and its hangar.yaml the way git finds .git: walk up from the working directory.
// The project is the directory holding hangar.yaml; else the git root; else the working directory. Like git,
// the walk stops below each directory of GIT_CEILING_DIRECTORIES, and takes a `.git` only when it is a
// repository: a directory with a HEAD, or a file (a worktree's or submodule's pointer). An empty `.git` is
// not one: Codex's sandbox mounts an empty, read-only `.git` over each writable root it grants, /tmp among
// them, for as long as a command of its runs, and that mount point is an empty /tmp/.git on the host.
import { existsSync, statSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
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

export async function loadConfigFile(file: string | null): Promise<HangarConfig> {
  if (!file) return defaultConfig()
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new AppError(
      'config_invalid',
      `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      {
        hint: 'check the file permissions',
      },
    )
  }
  return parseConfig(text, file)
}
