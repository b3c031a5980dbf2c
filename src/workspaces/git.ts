// The one way Hangar runs git: execFile (no shell), never a prompt, C locale (so the few messages we read
// are stable), and an environment cleaned of what a git hook exports — a GIT_DIR inherited from a hook
// that started the daemon would otherwise point every command at the wrong repository.
import { execFile } from 'node:child_process'

export interface GitOptions {
  cwd: string
  /** Written to git's stdin (a bundle, a patch, a list of paths). */
  input?: string | Buffer
  /** Added over the cleaned environment; these win over anything inherited. */
  env?: NodeJS.ProcessEnv
  /** Kills git after this long (default: no limit). */
  timeoutMs?: number
}

/** Set by git for its hooks; inherited, they would redirect our commands to another repository. */
const INHERITED_GIT_VARIABLES = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_PREFIX',
]

const TEXT_MAX_BUFFER = 64 * 1024 * 1024
// Bundles of a large repository come back through stdout.
const BINARY_MAX_BUFFER = 1024 * 1024 * 1024

/** A failed git command: `stderrLine` is git's last word on it, which is what a person needs to see. */
export class GitError extends Error {
  readonly args: readonly string[]
  readonly exitCode: number | null
  readonly stderr: string
  readonly stderrLine: string

  constructor(args: readonly string[], exitCode: number | null, stderr: string, cause?: unknown) {
    const stderrLine =
      stderr
        .trim()
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean)
        .at(-1) ?? ''
    super(
      `git ${args[0] ?? ''} failed: ${stderrLine || (exitCode === null ? 'it could not be started' : `exit ${exitCode}`)}`,
      cause === undefined ? undefined : { cause },
    )
    this.name = 'GitError'
    this.args = args
    this.exitCode = exitCode
    this.stderr = stderr
    this.stderrLine = stderrLine
  }
}

export function gitEnvironment(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of INHERITED_GIT_VARIABLES) delete env[name]
  return { ...env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', ...extra }
}

function run(
  args: readonly string[],
  options: GitOptions,
  encoding: 'utf8' | 'buffer',
): Promise<string | Buffer> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      [...args],
      {
        cwd: options.cwd,
        env: gitEnvironment(options.env),
        encoding,
        maxBuffer: encoding === 'buffer' ? BINARY_MAX_BUFFER : TEXT_MAX_BUFFER,
        ...(options.timeoutMs !== undefined && { timeout: options.timeoutMs }),
      },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout)
        const code = typeof error.code === 'number' ? error.code : null
        const text = Buffer.isBuffer(stderr) ? stderr.toString('utf8') : String(stderr ?? '')
        const reason = error.code === 'ENOENT' ? 'git is not installed (or not on PATH)' : text
        reject(new GitError(args, code, reason, error))
      },
    )
    // git may exit before reading all of its input; that is its answer, not ours to report.
    child.stdin?.on('error', () => {})
    child.stdin?.end(options.input ?? '')
  })
}

/** Runs git and returns its stdout as text. */
export async function git(args: readonly string[], options: GitOptions): Promise<{ stdout: string }> {
  return { stdout: (await run(args, options, 'utf8')) as string }
}

/** Runs git and returns its stdout as bytes (bundles, archives, binary diffs). */
export async function gitBuffer(args: readonly string[], options: GitOptions): Promise<{ stdout: Buffer }> {
  return { stdout: (await run(args, options, 'buffer')) as Buffer }
}

/** The top of the work tree `dir` is in, or undefined when it is in none (or git is missing). */
export async function gitRoot(dir: string): Promise<string | undefined> {
  try {
    const root = (await git(['rev-parse', '--show-toplevel'], { cwd: dir })).stdout.trim()
    return root || undefined
  } catch {
    return undefined
  }
}

/** The branch checked out in `dir`, or null on a detached HEAD. */
export async function currentBranch(dir: string): Promise<string | null> {
  try {
    const ref = (await git(['symbolic-ref', '--quiet', 'HEAD'], { cwd: dir })).stdout.trim()
    return ref.replace(/^refs\/heads\//, '')
  } catch (error) {
    // `symbolic-ref --quiet` exits 1 without a word on a detached HEAD; anything else is a real failure.
    if (error instanceof GitError && error.exitCode === 1 && !error.stderrLine) return null
    throw error
  }
}
