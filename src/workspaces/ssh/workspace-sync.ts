// Shipping a local workspace to an SSH target before a run and bringing the run's changes back after it
// (see sync-scripts.ts for the wire layout). Bringing back is all or nothing: everything is downloaded and
// verified first, the local workspace must still be exactly as it was shipped (else: a conflict, nothing
// applied), and a failure while applying restores the state from before.
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { AppError } from '../../core/errors.js'
import { gitEnvironment, git as runGit } from '../git.js'
import { withWorkspaceLock } from './workspace-lock.js'
import { consumeOutput, remoteShell, type SshConnection } from './ssh-connection.js'
import {
  FORGET,
  HELD_BY_ANOTHER_RUN,
  LIST_BASES,
  PACK_LOCAL,
  RECEIVE,
  RELEASE,
  SEND_BACK,
} from './sync-scripts.js'

/** What a finalize (and a retried one) needs to bring a run's changes back. Stored on the run. */
export interface ShippedWorkspace {
  target: string
  key: string
  kind: 'git' | 'copy'
  /** Absolute, on the host. */
  remoteRoot: string
  remoteDir: string
  remoteHome: string
  /** The local workspace. */
  localDir: string
  /** The commit shipped (git), and a digest of the local uncommitted state at that moment. */
  head: string | null
  fingerprint: string
  /** Workspace-relative files Hangar placed for the run (skills): not brought back. */
  excludes: string[]
  /** The run whose mark the host copy carries until its changes are back (absent in older records). */
  runId?: string
}

export interface TransferStats {
  bytes: number
  bundled: boolean
  overlayFiles: number
  deletions: number
  ms: number
}

/** Runs a local command; stdout collected (or handed to `output`), a non-zero exit throws. */
function runLocal(
  command: string,
  args: readonly string[],
  options: { cwd?: string; input?: Readable; output?: (stdout: Readable) => Promise<void> } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      ...(options.cwd !== undefined && { cwd: options.cwd }),
      stdio: ['pipe', 'pipe', 'pipe'],
      // The pack script runs git: the same sanitised environment as every git call of ours.
      env: gitEnvironment(),
    })
    let stdout = ''
    let stderr = ''
    const consumed = consumeOutput(child, options.output)
    if (!options.output) child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')))
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-8192)))
    child.stdin.on('error', () => {})
    if (options.input) options.input.pipe(child.stdin)
    else child.stdin.end()
    child.once('error', reject)
    child.once('close', (code) => {
      void consumed.then((failure) => {
        if (failure) reject(failure)
        else if (code === 0) resolve(stdout)
        else reject(new Error(stderr.trim().split('\n').at(-1) || `${command} exited with ${code}`))
      })
    })
  })
}

const git = async (dir: string, ...args: string[]) => (await runGit(args, { cwd: dir })).stdout

const exists = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  )

function nulList(text: string): string[] {
  return text.split('\0').filter(Boolean)
}

async function isGitWorkspace(dir: string): Promise<boolean> {
  return git(dir, 'rev-parse', '--show-toplevel').then(
    (top) => path.resolve(top.trim()) === path.resolve(dir),
    () => false,
  )
}

async function writeExcludes(out: string, excludes: readonly string[]): Promise<void> {
  await writeFile(path.join(out, 'excludes.git'), excludes.map((file) => `/${file}\n`).join(''))
  await writeFile(path.join(out, 'excludes.tar'), excludes.map((file) => `./${file}\n`).join(''))
}

async function digestFile(file: string, hash: ReturnType<typeof createHash>): Promise<void> {
  const info = await lstat(file).catch(() => undefined)
  if (!info) hash.update('missing')
  else if (info.isSymbolicLink()) hash.update(`link:${await readlink(file)}`)
  else if (info.isFile()) hash.update(`${info.mode & 0o111 ? 'x' : '-'}:`).update(await readFile(file))
  else hash.update('other')
}

async function walk(dir: string, prefix = ''): Promise<string[]> {
  const files: string[] = []
  for (const entry of await readdir(path.join(dir, prefix), { withFileTypes: true })) {
    const relative = path.posix.join(prefix, entry.name)
    if (entry.isDirectory()) files.push(...(await walk(dir, relative)))
    else files.push(relative)
  }
  return files.sort()
}

/** A digest of what a local workspace holds beyond its HEAD: a concurrent local edit changes it. */
async function localFingerprint(dir: string, kind: 'git' | 'copy', excludes: readonly string[]) {
  const hash = createHash('sha256')
  const skip = new Set(excludes)
  if (kind === 'copy') {
    for (const file of await walk(dir)) {
      if (skip.has(file)) continue
      hash.update(`${file}\0`)
      await digestFile(path.join(dir, file), hash)
    }
    return { head: null, fingerprint: hash.digest('hex') }
  }
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'hangar-pack-'))
  try {
    await writeExcludes(scratch, excludes)
    await runLocal('sh', ['-c', PACK_LOCAL, 'sh', 'lists', dir, scratch, 'git'])
    const head = (await readFile(path.join(scratch, 'head'), 'utf8')).trim()
    hash.update(`${head}\0`)
    for (const file of nulList(await readFile(path.join(scratch, 'changed'), 'utf8')).sort()) {
      hash.update(`${file}\0`)
      await digestFile(path.join(dir, file), hash)
    }
    hash.update(`deleted\0${await readFile(path.join(scratch, 'deleted'), 'utf8')}`)
    return { head, fingerprint: hash.digest('hex') }
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

/** A stable, readable name for a workspace on the host. */
export function remoteKey(localDir: string): string {
  const base =
    path
      .basename(localDir)
      .replace(/[^\w.-]/g, '_')
      .slice(0, 40) || 'workspace'
  return `${base}-${createHash('sha256').update(path.resolve(localDir)).digest('hex').slice(0, 12)}`
}

/**
 * Ships `localDir` to the target: on a later run of the same workspace only commits the host lacks
 * travel, plus the current overlay. Returns what finalize needs.
 */
export async function shipWorkspace(
  connection: SshConnection,
  localDir: string,
  options: {
    /** Files Hangar placed for the run: shipped, but never brought back. */
    placed?: readonly string[]
    /** The branch the host's worktree is on (the local one's name). */
    branch?: string | undefined
    /** The run being shipped for: the host copy is marked as holding its changes until they are back. */
    runId?: string
    /**
     * Whether the changes of the run that marked the host copy are known to be back (a release that
     * never reached the host). Without it, or when it says no, a marked host copy is never overwritten.
     */
    settled?: (runId: string) => Promise<boolean>
  } = {},
): Promise<{ shipped: ShippedWorkspace; stats: TransferStats }> {
  const started = Date.now()
  const target = connection.target
  const kind = (await isGitWorkspace(localDir)) ? 'git' : 'copy'
  const key = remoteKey(localDir)
  const excludes = [...(options.placed ?? [])]
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'hangar-ship-'))
  try {
    const out = path.join(scratch, 'pack')
    await mkdir(out)
    await writeExcludes(out, [])
    if (excludes.length > 0)
      await writeFile(path.join(out, 'include'), excludes.map((file) => `${file}\0`).join(''))
    let bases: string[] = []
    const listed = await connection.check(
      'listing what the host has',
      remoteShell(LIST_BASES, [target.dir, key]),
    )
    const lines = listed.stdout.toString('utf8').split('\n').filter(Boolean)
    const held = lines.find((line) => line.startsWith('mark '))?.slice('mark '.length)
    const settled = held ? await holderSettled(held, localDir, target.name, options.settled) : ''
    if (kind === 'git') {
      const candidates = [...new Set(lines.filter((line) => !line.startsWith('mark ')))]
      // Only commits this repository knows can bound the bundle.
      bases = (
        await Promise.all(
          candidates.map((commit) =>
            git(localDir, 'cat-file', '-e', `${commit}^{commit}`).then(
              () => commit,
              () => undefined,
            ),
          ),
        )
      ).filter((commit): commit is string => commit !== undefined)
    }
    const { head, fingerprint } = await localFingerprint(localDir, kind, excludes)
    await runLocal('sh', ['-c', PACK_LOCAL, 'sh', 'full', localDir, out, kind, ...bases]).catch(
      (error: Error) => {
        throw new AppError('invalid_request', `cannot pack workspace ${localDir}: ${error.message}`, {
          hint: 'a git workspace needs at least one commit',
        })
      },
    )
    const stats: TransferStats = {
      bytes: 0,
      bundled: await exists(path.join(out, 'bundle')),
      overlayFiles: kind === 'git' ? nulList(await readFile(path.join(out, 'changed'), 'utf8')).length : 0,
      deletions: kind === 'git' ? nulList(await readFile(path.join(out, 'deleted'), 'utf8')).length : 0,
      ms: 0,
    }
    const branch = options.branch ?? `hangar/${key}`
    const tarStream = spawn('tar', ['-czf', '-', '-C', out, '.'], { stdio: ['ignore', 'pipe', 'inherit'] })
    tarStream.stdout.on('data', (chunk: Buffer) => (stats.bytes += chunk.length))
    const received = await connection.run(
      remoteShell(RECEIVE, [target.dir, key, kind, branch, options.runId ?? '', settled]),
      { input: tarStream.stdout },
    )
    if (received.code === HELD_BY_ANOTHER_RUN) {
      const holder = /held:(\S+)/.exec(received.stderr)?.[1] ?? 'unknown'
      throw heldError(holder, localDir, target.name)
    }
    if (received.code !== 0) throw connection.failure('shipping the workspace', received)
    const [remoteRoot = '', remoteHome = ''] = received.stdout.toString('utf8').trim().split('\n')
    stats.ms = Date.now() - started
    return {
      shipped: {
        target: target.name,
        key,
        kind,
        remoteRoot,
        remoteDir: path.posix.join(remoteRoot, 'workspaces', key),
        remoteHome,
        localDir,
        head,
        fingerprint,
        excludes,
        ...(options.runId && { runId: options.runId }),
      },
      stats,
    }
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

function heldError(runId: string, localDir: string, target: string): AppError {
  return new AppError(
    'conflict',
    `the host copy of ${localDir} on ${target} holds changes of run ${runId} that were not brought back; bring them back with hangar runs finalize ${runId} (when that run has ended), then start again`,
    { details: { runId, target } },
  )
}

/** '' when nothing may clear the mark; else the holder, whose changes are known to be back. */
async function holderSettled(
  holder: string,
  localDir: string,
  target: string,
  settled: ((runId: string) => Promise<boolean>) | undefined,
): Promise<string> {
  if (settled && (await settled(holder))) return holder
  throw heldError(holder, localDir, target)
}

async function extract(archive: string, into: string): Promise<void> {
  await runLocal('tar', ['-xf', archive, '-C', into])
}

async function applyGit(localDir: string, pack: string, previousHead: string): Promise<void> {
  if (await exists(path.join(pack, 'bundle'))) {
    await git(localDir, 'bundle', 'verify', '-q', path.join(pack, 'bundle'))
    await git(localDir, 'fetch', '-q', path.join(pack, 'bundle'))
  }
  const head = (await readFile(path.join(pack, 'head'), 'utf8')).trim()
  await git(localDir, 'cat-file', '-e', `${head}^{commit}`)
  // Everything that can fail for want of data has been checked; now the worktree changes.
  const backup = await mkdtemp(path.join(os.tmpdir(), 'hangar-backup-'))
  try {
    await writeExcludes(backup, [])
    await runLocal('sh', ['-c', PACK_LOCAL, 'sh', 'overlay', localDir, backup, 'git'])
    try {
      await replaceGitState(localDir, head, pack)
    } catch (error) {
      await replaceGitState(localDir, previousHead, backup)
      throw error
    }
  } finally {
    await rm(backup, { recursive: true, force: true })
  }
}

async function replaceGitState(localDir: string, head: string, pack: string): Promise<void> {
  await git(localDir, 'reset', '-q', '--hard', head)
  await git(localDir, 'clean', '-q', '-fd')
  await extract(path.join(pack, 'overlay.tar'), localDir)
  for (const file of nulList(await readFile(path.join(pack, 'deleted'), 'utf8')))
    await rm(path.join(localDir, file), { force: true })
}

async function applyCopy(localDir: string, pack: string, excludes: readonly string[]): Promise<void> {
  const staging = await mkdtemp(path.join(path.dirname(localDir), '.hangar-staging-'))
  try {
    await extract(path.join(pack, 'tree.tar'), staging)
    const incoming = new Set(await walk(staging))
    const keep = new Set(excludes)
    for (const file of await walk(localDir))
      if (!incoming.has(file) && !keep.has(file)) await rm(path.join(localDir, file), { force: true })
    await extract(path.join(pack, 'tree.tar'), localDir)
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}

/**
 * Brings a run's changes back into its local workspace. Throws an AppError (the finalize failure reason)
 * and leaves the local workspace untouched when anything is missing, dropped or in conflict.
 */
export async function syncBack(connection: SshConnection, shipped: ShippedWorkspace): Promise<TransferStats> {
  const started = Date.now()
  return withWorkspaceLock(shipped.localDir, async () => {
    const scratch = await mkdtemp(path.join(os.tmpdir(), 'hangar-back-'))
    try {
      const pack = path.join(scratch, 'pack')
      await mkdir(pack)
      let bytes = 0
      await connection.check(
        "bringing the run's changes back",
        remoteShell(SEND_BACK, [
          shipped.remoteRoot,
          shipped.key,
          shipped.kind,
          shipped.head ?? '-',
          ...shipped.excludes,
        ]),
        {
          output: (stdout: Readable) => {
            stdout.on('data', (chunk: Buffer) => (bytes += chunk.length))
            return runLocal('tar', ['-xzf', '-', '-C', pack], { input: stdout }).then(() => undefined)
          },
        },
      )
      if (!(await exists(path.join(pack, 'complete'))))
        throw new AppError('unavailable', 'the changes from the host arrived incomplete', { retryable: true })
      const now = await localFingerprint(shipped.localDir, shipped.kind, shipped.excludes)
      if (now.head !== shipped.head || now.fingerprint !== shipped.fingerprint) {
        throw new AppError(
          'conflict',
          `the local workspace ${shipped.localDir} changed while the run was on ${shipped.target}; nothing was applied`,
          {
            hint: 'undo the local changes (or commit them elsewhere), then retry with hangar runs finalize',
          },
        )
      }
      if (shipped.kind === 'git') await applyGit(shipped.localDir, pack, shipped.head!)
      else await applyCopy(shipped.localDir, pack, shipped.excludes)
      // The changes are here now. A release lost on the way leaves a mark the next ship clears once
      // the store says this run's finalize is done.
      if (shipped.runId) {
        await connection
          .run(remoteShell(RELEASE, [shipped.remoteRoot, shipped.key, shipped.runId]))
          .catch(() => undefined)
      }
      return {
        bytes,
        bundled: await exists(path.join(pack, 'bundle')),
        overlayFiles:
          shipped.kind === 'git' ? nulList(await readFile(path.join(pack, 'changed'), 'utf8')).length : 0,
        deletions:
          shipped.kind === 'git' ? nulList(await readFile(path.join(pack, 'deleted'), 'utf8')).length : 0,
        ms: Date.now() - started,
      }
    } finally {
      await rm(scratch, { recursive: true, force: true })
    }
  })
}

/**
 * Removes a workspace's copy from the host, with the sandbox home kept for it (when its local workspace
 * is removed). `signal` stops a host that does not answer.
 */
export async function forgetRemoteWorkspace(
  connection: SshConnection,
  shipped: Pick<ShippedWorkspace, 'remoteRoot' | 'key'>,
  io: { signal?: AbortSignal } = {},
): Promise<void> {
  await connection.check(
    'removing the workspace',
    remoteShell(FORGET, [shipped.remoteRoot, shipped.key]),
    io.signal ? { signal: io.signal } : {},
  )
}
