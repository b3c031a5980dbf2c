// What the file tools know about a target: missing, a readable file (with its bytes and hash), or
// something they refuse to touch. The hash is the proposal's precondition; apply compares it again.
import { createHash } from 'node:crypto'
import type { Proposal, ToolContext } from './types.js'
import { ToolConflict } from './types.js'
import { readWorkspaceEntry, type WorkspaceTarget } from './workspace-fs.js'
import { resolveInWorkspace } from './workspace-paths.js'

/** Files above this size are not loaded by any tool: they are not source code a model should read or rewrite. */
export const MAX_FILE_BYTES = 10 * 1024 * 1024

export type FileState =
  | { kind: 'missing' }
  | { kind: 'file'; content: Buffer; sha256: string }
  | { kind: 'directory' }
  | { kind: 'too-large'; size: number }
  /** A FIFO, socket or device: opening one could block or read forever. */
  | { kind: 'special' }

export function sha256(content: Buffer | string): string {
  return createHash('sha256').update(content).digest('hex')
}

/** A NUL byte in the first 8 KB is the same heuristic git and grep use to call a file binary. */
export function looksBinary(content: Buffer): boolean {
  return content.subarray(0, 8000).includes(0)
}

export function countLines(text: string): number {
  if (text === '') return 0
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length
}

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`
}

export function errorCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined
}

export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * Reads the target through workspace-fs: no symlink below the workspace root is followed, so a directory
 * swapped for one after the path check is a ToolConflict instead of a read outside.
 */
export async function readFileState(target: WorkspaceTarget): Promise<FileState> {
  const entry = await readWorkspaceEntry(target, MAX_FILE_BYTES)
  return entry.kind === 'file' ? { ...entry, sha256: sha256(entry.content) } : entry
}

/**
 * The precondition as a check over the bytes apply finds on the descriptor it writes or deletes through:
 * a different hash is a ToolConflict, so what was approved is exactly what gets replaced.
 */
export function expectContent(
  shown: string,
  expectedSha256: string,
  change: string,
): (current: Buffer) => void {
  return (current) => {
    if (sha256(current) !== expectedSha256) {
      throw new ToolConflict(
        `${shown} changed since the proposal; read it again and propose the ${change} again.`,
      )
    }
  }
}

/** What a tool says when the target is not a regular file it can work with; undefined when it is one. */
export function refuseNonFile(state: FileState, shownPath: string): string | undefined {
  switch (state.kind) {
    case 'directory':
      return `${shownPath} is a directory, not a file; use list_files to see what it contains.`
    case 'too-large':
      return `${shownPath} is ${(state.size / 1024 / 1024).toFixed(1)} MB, over the ${MAX_FILE_BYTES / 1024 / 1024} MB limit of the file tools; use grep to find what you need, or run_command.`
    case 'special':
      return `${shownPath} is not a regular file (a pipe, socket or device); the file tools do not open those.`
    default:
      return undefined
  }
}

/**
 * Re-resolves the target and compares it with the proposal's precondition. Anything different — the
 * path now resolves elsewhere, the file appeared, vanished or changed — is a ToolConflict telling the
 * model to read again and re-propose; nothing is written in that case.
 */
export async function checkPrecondition(
  context: ToolContext,
  requestedPath: string,
  proposal: Proposal,
  change: string,
): Promise<{ target: WorkspaceTarget; relativePath: string; state: FileState }> {
  const resolved = await resolveInWorkspace(context.workspace, requestedPath, { forWrite: true })
  if (!resolved.ok) throw new ToolConflict(`${requestedPath} can no longer be changed: ${resolved.message}`)
  const expected = proposal.precondition
  if (!expected || expected.path !== resolved.relativePath) {
    throw new ToolConflict(
      `${requestedPath} now resolves to a different file than when the ${change} was proposed; read it again and propose the ${change} again.`,
    )
  }
  const target = { workspaceRoot: resolved.workspaceRoot, relativePath: resolved.relativePath }
  const state = await readFileState(target)
  const current = state.kind === 'file' ? state.sha256 : state.kind === 'missing' ? null : state.kind
  if (current !== expected.sha256) {
    const what = expected.sha256 === null ? 'was created' : current === null ? 'was deleted' : 'changed'
    throw new ToolConflict(
      `${resolved.relativePath} ${what} since the proposal; read it again and propose the ${change} again.`,
    )
  }
  return { target, relativePath: resolved.relativePath, state }
}

/**
 * The existing regular file a tool is about to change: resolved inside the workspace and read, or the
 * model-readable refusal (outside, unreadable, a directory, too large, missing — `missingMessage`).
 */
export async function loadExistingFile(
  context: ToolContext,
  requested: string,
  messages: { missing: string; directory?: string },
): Promise<
  | { ok: true; shown: string; state: Extract<FileState, { kind: 'file' }> }
  | { ok: false; output: { content: string; isError: true } }
> {
  const refuse = (content: string) => ({ ok: false as const, output: { content, isError: true as const } })
  const resolved = await resolveInWorkspace(context.workspace, requested, { forWrite: true, mustExist: true })
  if (!resolved.ok) return refuse(resolved.message)
  const shown = resolved.relativePath
  let state: FileState
  try {
    state = await readFileState(resolved)
  } catch (error) {
    return refuse(`Could not read ${shown}: ${describeError(error)}`)
  }
  if (state.kind === 'directory' && messages.directory) return refuse(`${shown} ${messages.directory}`)
  const refusal = refuseNonFile(state, shown)
  if (refusal) return refuse(refusal)
  if (state.kind !== 'file') return refuse(`${shown} ${messages.missing}`)
  return { ok: true, shown, state }
}
