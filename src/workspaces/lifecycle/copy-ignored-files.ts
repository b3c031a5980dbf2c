// Copying a project's git-ignored files (`.env*`, local config) into a new workspace: a worktree has
// only what git tracks, so these are what the agent would otherwise miss. Globs stay inside the project
// (no absolute path, no `..`), symlinks are never followed out of it (nor into directories), tracked
// files are left to git, and a file the workspace has already is never overwritten.
import { execFile } from 'node:child_process'
import { copyFile, lstat, mkdir, readdir, realpath, stat } from 'node:fs/promises'
import path from 'node:path'
import { AppError } from '../../core/errors.js'
import { copyGlobProblem } from '../../core/workspace-lifecycle-schema.js'
import { gitEnvironment } from '../git.js'

/** Directories never searched: git's own, and where Hangar places per-run files. */
const NEVER_SEARCHED = new Set(['.git'])
/** A glob that walks the whole project (`**`) stops after this many entries, with an error. */
const MAX_VISITED = 200_000

export interface CopyOutcome {
  /** Copied, relative to the project. */
  copied: string[]
  /** Matched but left: a symlink pointing out of the project or at a directory, or not a regular file. */
  skipped: { path: string; reason: string }[]
}

/** A glob as a regular expression over `/`-separated relative paths: `*`, `?`, `**`, `{a,b}`. */
export function globToRegExp(glob: string): RegExp {
  let source = ''
  for (let index = 0; index < glob.length; index++) {
    const char = glob[index]!
    if (char === '*' && glob[index + 1] === '*') {
      const atStart = index === 0 || glob[index - 1] === '/'
      const atEnd = index + 2 === glob.length || glob[index + 2] === '/'
      if (atStart && atEnd) {
        // `**/` is zero or more directories; a trailing `**` is everything below.
        source += index + 2 === glob.length ? '.*' : '(?:[^/]+/)*'
        index += index + 2 === glob.length ? 1 : 2
        continue
      }
      source += '[^/]*'
      index++
    } else if (char === '*') source += '[^/]*'
    else if (char === '?') source += '[^/]'
    else if (char === '{') {
      const close = glob.indexOf('}', index)
      if (close < 0) source += '\\{'
      else {
        const options = glob.slice(index + 1, close).split(',')
        source += `(?:${options.map((option) => option.replace(/[.+^$()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')).join('|')})`
        index = close
      }
    } else source += char.replace(/[.+^$()|[\]\\}]/g, '\\$&')
  }
  return new RegExp(`^${source}$`)
}

/** The directories before the first wildcard: where the search starts. */
function staticPrefix(glob: string): string {
  const segments = glob.split('/')
  const fixed: string[] = []
  for (const segment of segments.slice(0, -1)) {
    if (/[*?{]/.test(segment)) break
    fixed.push(segment)
  }
  return fixed.join('/')
}

function assertSafe(globs: readonly string[]): void {
  for (const glob of globs) {
    const problem = copyGlobProblem(glob)
    if (problem) {
      throw new AppError('invalid_request', `copy glob "${glob}": ${problem}`, {
        hint: 'fix the copy list of the workspace lifecycle (hangar.yaml or .hangar/workspace.yaml)',
      })
    }
  }
}

/** Relative paths below `root/start` that match one of `patterns` (files and symlinks, never inside .git). */
async function matching(root: string, start: string, patterns: readonly RegExp[]): Promise<string[]> {
  const found: string[] = []
  let visited = 0
  async function walk(relative: string): Promise<void> {
    const entries = await readdir(path.join(root, relative), { withFileTypes: true }).catch(() => [])
    for (const entry of entries) {
      if (++visited > MAX_VISITED) {
        throw new AppError('invalid_request', `copy globs searched more than ${MAX_VISITED} entries`, {
          hint: 'narrow the globs, e.g. "config/*.local.json" instead of "**/*.json"',
        })
      }
      const child = relative ? `${relative}/${entry.name}` : entry.name
      if (entry.isDirectory()) {
        if (!NEVER_SEARCHED.has(entry.name)) await walk(child)
      } else if (patterns.some((pattern) => pattern.test(child))) found.push(child)
    }
  }
  const info = await lstat(path.join(root, start)).catch(() => undefined)
  if (start === '' || info?.isDirectory()) await walk(start)
  return found
}

/** Which of `files` git ignores in `root` (all of them when `root` is not in a repository). */
function ignoredByGit(root: string, files: readonly string[]): Promise<Set<string>> {
  if (files.length === 0) return Promise.resolve(new Set())
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      ['check-ignore', '-z', '--stdin'],
      { cwd: root, env: gitEnvironment(), maxBuffer: 64 * 1024 * 1024 },
      (error, stdout) => {
        const code = (error as { code?: number } | null)?.code
        // 1: none of them is ignored; 128: not a repository (a plain copy: everything is "ignored").
        if (error && code === 128) return resolve(new Set(files))
        if (error && code !== 1) return reject(error)
        resolve(new Set(stdout.split('\0').filter(Boolean)))
      },
    )
    // git may exit before it reads the list (128: not a repository): its exit code decides, not the pipe.
    child.stdin?.on('error', () => {})
    child.stdin?.end(files.map((file) => `${file}\0`).join(''))
  })
}

/**
 * The git-ignored files below `dir` that match `globs` (relative, sorted). Throws an `invalid_request`
 * AppError for an absolute or `..` glob.
 */
export async function matchIgnoredFiles(dir: string, globs: readonly string[]): Promise<string[]> {
  assertSafe(globs)
  if (globs.length === 0) return []
  const root = await realpath(dir)
  const candidates = new Set<string>()
  for (const glob of globs) {
    const normalized = glob.replace(/^\.\//, '')
    for (const file of await matching(root, staticPrefix(normalized), [globToRegExp(normalized)]))
      candidates.add(file)
  }
  const sorted = [...candidates].sort()
  const ignored = await ignoredByGit(root, sorted)
  return sorted.filter((file) => ignored.has(file))
}

/**
 * Copies the git-ignored files of `sourceDir` that match `globs` to the same places under `targetDir`.
 * Throws an `invalid_request` AppError for an absolute or `..` glob.
 */
export async function copyIgnoredFiles(
  sourceDir: string,
  targetDir: string,
  globs: readonly string[],
): Promise<CopyOutcome> {
  const outcome: CopyOutcome = { copied: [], skipped: [] }
  const files = await matchIgnoredFiles(sourceDir, globs)
  if (files.length === 0) return outcome
  const root = await realpath(sourceDir)
  const realTarget = await realpath(targetDir)
  for (const relative of files) {
    const from = path.join(root, relative)
    const info = await lstat(from)
    let source = from
    if (info.isSymbolicLink()) {
      const resolved = await realpath(from).catch(() => undefined)
      if (!resolved || !resolved.startsWith(`${root}${path.sep}`)) {
        outcome.skipped.push({ path: relative, reason: 'a symlink pointing out of the project' })
        continue
      }
      source = resolved
    }
    if (!(await stat(source)).isFile()) {
      outcome.skipped.push({ path: relative, reason: 'not a regular file' })
      continue
    }
    const to = path.join(targetDir, relative)
    if (
      await lstat(to).then(
        () => true,
        () => false,
      )
    ) {
      outcome.skipped.push({ path: relative, reason: 'the workspace has it already' })
      continue
    }
    await mkdir(path.dirname(to), { recursive: true })
    // A tracked symlink in the workspace must not carry the copy somewhere else.
    const parent = await realpath(path.dirname(to))
    if (parent !== realTarget && !parent.startsWith(`${realTarget}${path.sep}`)) {
      outcome.skipped.push({ path: relative, reason: 'its directory in the workspace leads out of it' })
      continue
    }
    await copyFile(source, to)
    outcome.copied.push(relative)
  }
  return outcome
}
