// What a run changed in its workspace, from git rather than from the agent's word: OpenClaw reports no
// file changes, and no adapter reports an edit made through a shell tool. At run start the workspace's
// state (index + worktree, untracked files included, ignored ones not) is snapshotted as a git tree —
// as `git stash create` would, through a private index so the user's index is never touched; at run
// end it is snapshotted again and every path that differs and that the stream did not already report
// becomes a `file-change` event. A file that was dirty before the run and untouched by it is therefore
// not claimed. Outside git there is nothing to compare with, and nothing is synthesised.
import { access, copyFile, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { AgentEvent, FileChangeEvent } from '../core/events.js'
import { git } from './git.js'

/** A diff longer than this is left out of its event (the path and kind still go). */
export const SYNTHESISED_DIFF_MAX_CHARS = 64 * 1024
/** At most this many synthesised events per run; a run that rewrote a whole tree gets the first ones. */
export const SYNTHESISED_CHANGES_MAX = 500
/** A snapshot that takes longer is given up (a huge untracked tree): the run goes on without it. */
const SNAPSHOT_TIMEOUT_MS = 120_000

export interface RunChanges {
  /** Sees each event the run's parser emitted, to know which paths the stream already reported. */
  note(event: AgentEvent): void
  /** Snapshots the workspace again and emits a file-change for each unreported path that changed. */
  report(emit: (event: AgentEvent) => void): Promise<void>
}

const NOTHING: RunChanges = { note: () => {}, report: async () => {} }

/**
 * False when neither `dir` nor a folder above it holds a `.git`: git (run without GIT_DIR, see git.ts)
 * would find no work tree there. Checked first because starting git blocks the event loop for a moment
 * (fork and exec happen on it), which every streaming run feels, and a run outside git needs no snapshot.
 */
async function mayBeInGit(dir: string): Promise<boolean> {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    try {
      await access(path.join(current, '.git'))
      return true
    } catch {
      if (path.dirname(current) === current) return false
    }
  }
}

/** The tree of the workspace as it is now, or null when it is not in git or git refused. */
export async function snapshotTree(cwd: string): Promise<string | null> {
  if (!(await mayBeInGit(cwd))) return null
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'hangar-snapshot-'))
  try {
    const indexFile = path.join(scratch, 'index')
    const { stdout } = await git(['rev-parse', '--git-path', 'index'], { cwd })
    // Starting from the real index lets git skip hashing every file whose stat data did not change.
    await copyFile(path.resolve(cwd, stdout.trim()), indexFile).catch(() => {})
    const options = { cwd, env: { GIT_INDEX_FILE: indexFile }, timeoutMs: SNAPSHOT_TIMEOUT_MS }
    await git(['add', '--all', '--ignore-errors', '--', '.'], options)
    return (await git(['write-tree'], options)).stdout.trim()
  } catch {
    return null
  } finally {
    await rm(scratch, { recursive: true, force: true }).catch(() => {})
  }
}

const KINDS: Record<string, FileChangeEvent['kind']> = { A: 'create', M: 'modify', T: 'modify', D: 'delete' }

/** `git diff`'s text for one path, from its `---` line on (the form the parsers' diffs have). */
async function diffOf(cwd: string, before: string, after: string, file: string): Promise<string | undefined> {
  const { stdout } = await git(
    ['diff', '--relative', '--no-renames', '--no-color', before, after, '--', file],
    {
      cwd,
    },
  ).catch(() => ({ stdout: '' }))
  if (stdout === '' || stdout.length > SYNTHESISED_DIFF_MAX_CHARS) return undefined
  const start = stdout.indexOf('\n--- ')
  return start === -1 ? undefined : stdout.slice(start + 1)
}

/** Takes the baseline of `cwd` now; the returned tracker reports what changed when asked. */
export async function startRunChanges(cwd: string): Promise<RunChanges> {
  const before = await snapshotTree(cwd)
  if (!before) return NOTHING
  const reported = new Set<string>()
  return {
    note(event) {
      if (event.type === 'file-change') reported.add(path.normalize(event.path))
    },
    async report(emit) {
      const after = await snapshotTree(cwd)
      if (!after || after === before) return
      const { stdout } = await git(
        ['diff', '--relative', '--no-renames', '--name-status', '-z', before, after],
        { cwd },
      ).catch(() => ({ stdout: '' }))
      const fields = stdout.split('\0')
      let emitted = 0
      for (let index = 0; index + 1 < fields.length; index += 2) {
        const kind = KINDS[fields[index]!.charAt(0)]
        const file = fields[index + 1]!
        if (!kind || reported.has(path.normalize(file))) continue
        if (emitted++ >= SYNTHESISED_CHANGES_MAX) break
        const diff = kind === 'delete' ? undefined : await diffOf(cwd, before, after, file)
        emit({ type: 'file-change', path: file, kind, ...(diff !== undefined && { diff }) })
      }
    },
  }
}
