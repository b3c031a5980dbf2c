// Finding bubblewrap and checking that it can confine a process here: a missing binary or a kernel that
// refuses the namespaces fails the run with a fix-it line, never a silent unsandboxed run.
// `HANGAR_BWRAP` names the binary (tests point it at a missing one); else `bwrap` on PATH.
import { execFile } from 'node:child_process'
import { access, constants } from 'node:fs/promises'
import path from 'node:path'
import { AppError } from '../core/errors.js'

export interface Bubblewrap {
  path: string
  /** e.g. "bubblewrap 0.8.0". */
  version: string
}

const checked = new Map<string, Promise<Bubblewrap>>()

async function executable(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  )
}

export async function locateBubblewrap(env: Readonly<Record<string, string | undefined>>): Promise<string> {
  const named = env.HANGAR_BWRAP
  if (named !== undefined && named !== '') return named
  for (const directory of (env.PATH ?? '').split(':').filter(Boolean)) {
    const candidate = path.join(directory, 'bwrap')
    if (await executable(candidate)) return candidate
  }
  return '/usr/bin/bwrap'
}

function run(file: string, args: string[]): Promise<{ stdout: string; stderr: string; failed?: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 20_000, encoding: 'utf8' }, (error, stdout, stderr) => {
      resolve({
        stdout,
        stderr,
        ...(error && { failed: (error as NodeJS.ErrnoException).code?.toString() ?? error.message }),
      })
    })
  })
}

const FIX_OFF = 'or set `sandbox: off` for this profile'

async function probe(file: string): Promise<Bubblewrap> {
  if (!(await executable(file)))
    throw new AppError(
      'sandbox_unavailable',
      `the profile asks for \`sandbox: workspace\` but bubblewrap was not found at ${file}`,
      { hint: `install it (Debian/Ubuntu: apt-get install bubblewrap) ${FIX_OFF}` },
    )
  const version = await run(file, ['--version'])
  const trial = await run(file, [
    '--die-with-parent',
    '--unshare-pid',
    '--unshare-net',
    '--ro-bind',
    '/',
    '/',
    '--proc',
    '/proc',
    '--',
    '/bin/true',
  ])
  if (trial.failed !== undefined) {
    const said = trial.stderr.trim().split('\n').at(-1) ?? trial.failed
    throw new AppError('sandbox_unavailable', `bubblewrap (${file}) cannot create a sandbox here: ${said}`, {
      hint: `enable unprivileged user namespaces (sysctl -w kernel.unprivileged_userns_clone=1, or on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0) ${FIX_OFF}`,
    })
  }
  return { path: file, version: version.stdout.trim() || 'bubblewrap' }
}

/** The bubblewrap to use, checked once per binary (a failed check is retried at the next run). */
export function checkBubblewrap(file: string): Promise<Bubblewrap> {
  let pending = checked.get(file)
  if (!pending) {
    pending = probe(file)
    checked.set(file, pending)
    pending.catch(() => checked.delete(file))
  }
  return pending
}
