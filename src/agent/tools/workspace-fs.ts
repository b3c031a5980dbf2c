// The file operations of the tools, made safe against a directory swapped for a symlink between the
// path check (workspace-paths.ts) and the operation. Node has no openat(), so on Linux every step goes
// through the previous step's descriptor as `/proc/self/fd/<fd>/<name>`: the kernel resolves that like
// openat(fd, name), and O_NOFOLLOW keeps `name` itself from being followed. Walking the real relative path
// one component at a time from the workspace root therefore never leaves it, and the opened file's real
// path (read back from /proc/self/fd) is compared with the expected one before a byte is written. A
// symlink met on the way, or a path that moved, is a ToolConflict: the change is refused, not retried.
// Elsewhere (no /proc) the same walk runs on absolute paths and re-checks real paths: a narrower window,
// not a closed one.
import { constants, existsSync } from 'node:fs'
import type { Dirent } from 'node:fs'
import { lstat, mkdir, open, readdir, readlink, realpath, unlink, type FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { ToolConflict } from './types.js'

/** Where a tool operates: the real workspace root and a path relative to it (`/`-separated, `.` = root). */
export interface WorkspaceTarget {
  workspaceRoot: string
  relativePath: string
}

const PROC_FD = '/proc/self/fd'
const useProcFd = process.platform === 'linux' && existsSync(PROC_FD)

const { O_RDONLY, O_RDWR, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK } = constants
/** O_NONBLOCK: opening a FIFO to look at it must not wait for a writer; it is refused after fstat. */
const DIRECTORY_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW
const READ_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK

function errorCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined
}

function segments(relativePath: string): string[] {
  return relativePath === '.' || relativePath === '' ? [] : relativePath.split('/')
}

function absoluteOf(target: WorkspaceTarget): string {
  return path.join(target.workspaceRoot, ...segments(target.relativePath))
}

function swapped(shown: string): ToolConflict {
  return new ToolConflict(
    `${shown} was moved or replaced by a symlink while it was being used, so it could leave the workspace; nothing was changed. Check the path and try again.`,
  )
}

/** An open directory of the walk, and how to name an entry of it without following anything above. */
interface OpenDirectory {
  handle: FileHandle
  absolutePath: string
  entry(name: string): string
}

function openDirectoryAt(handle: FileHandle, absolutePath: string): OpenDirectory {
  return {
    handle,
    absolutePath,
    entry: (name) => (useProcFd ? `${PROC_FD}/${handle.fd}/${name}` : path.join(absolutePath, name)),
  }
}

/** The real path of an open descriptor, or undefined where the platform cannot tell. */
async function realPathOf(handle: FileHandle, fallbackPath: string): Promise<string | undefined> {
  if (useProcFd) return readlink(`${PROC_FD}/${handle.fd}`).catch(() => undefined)
  return realpath(fallbackPath).catch(() => undefined)
}

/** Refuses unless the descriptor is still the expected path: a rename or swap since the open shows here. */
async function verify(handle: FileHandle, expected: string, shown: string): Promise<void> {
  if ((await realPathOf(handle, expected)) !== expected) throw swapped(shown)
}

/**
 * One directory component, opened without following it. A symlink there (ENOTDIR or ELOOP, told apart
 * from a plain file by lstat, which does not follow either) means it was swapped in after the check.
 */
async function openComponent(
  parent: OpenDirectory,
  name: string,
  shown: string,
): Promise<FileHandle | 'missing' | 'not-directory'> {
  try {
    return await open(parent.entry(name), DIRECTORY_FLAGS)
  } catch (error) {
    const code = errorCode(error)
    if (code === 'ENOENT') return 'missing'
    if (code !== 'ENOTDIR' && code !== 'ELOOP') throw error
    const stats = await lstat(parent.entry(name)).catch(() => undefined)
    if (stats && !stats.isSymbolicLink() && !stats.isDirectory()) return 'not-directory'
    throw swapped(shown)
  }
}

/**
 * Opens the directory that holds `target`, one component at a time from the root with O_NOFOLLOW, and
 * creates missing ones when `create` is set. Undefined when a component is missing (and not created).
 */
async function openParent(target: WorkspaceTarget, create: boolean): Promise<OpenDirectory | undefined> {
  const shown = target.relativePath
  const rootHandle = await open(target.workspaceRoot, O_RDONLY | O_DIRECTORY)
  let current = openDirectoryAt(rootHandle, target.workspaceRoot)
  try {
    await verify(rootHandle, target.workspaceRoot, shown)
    for (const name of segments(target.relativePath).slice(0, -1)) {
      const absolutePath = path.join(current.absolutePath, name)
      let handle = await openComponent(current, name, shown)
      if (handle === 'missing' && create) {
        // mkdir never follows a symlink in the last component; EEXIST means it appeared meanwhile.
        await mkdir(current.entry(name)).catch((error: unknown) => {
          if (errorCode(error) !== 'EEXIST') throw error
        })
        handle = await openComponent(current, name, shown)
      }
      if (handle === 'missing' || handle === 'not-directory') {
        if (create && handle === 'not-directory') {
          throw new ToolConflict(
            `${path.relative(target.workspaceRoot, absolutePath)} is not a directory, so ${shown} cannot be created under it.`,
          )
        }
        await current.handle.close()
        return undefined
      }
      await current.handle.close()
      current = openDirectoryAt(handle, absolutePath)
    }
    await verify(current.handle, current.absolutePath, shown)
    return current
  } catch (error) {
    await current.handle.close().catch(() => undefined)
    throw error
  }
}

/** The last component of the target, opened (never followed) in its verified parent directory. */
async function openEntry(
  target: WorkspaceTarget,
  flags: number,
  options: { create?: boolean; mode?: number } = {},
): Promise<FileHandle | undefined> {
  const names = segments(target.relativePath)
  if (names.length === 0) {
    const root = await open(target.workspaceRoot, O_RDONLY | O_DIRECTORY)
    await verify(root, target.workspaceRoot, '.').catch(async (error: unknown) => {
      await root.close()
      throw error
    })
    return root
  }
  const parent = await openParent(target, options.create ?? false)
  if (!parent) return undefined
  let handle: FileHandle
  try {
    handle = await open(parent.entry(names.at(-1)!), flags | O_NOFOLLOW, options.mode)
  } catch (error) {
    const code = errorCode(error)
    if (code === 'ELOOP') throw swapped(target.relativePath)
    if (code === 'ENOTDIR') {
      // O_DIRECTORY refuses a symlink with ENOTDIR before O_NOFOLLOW gets to say ELOOP.
      const stats = await lstat(parent.entry(names.at(-1)!)).catch(() => undefined)
      if (stats?.isSymbolicLink()) throw swapped(target.relativePath)
      return undefined
    }
    if (code === 'ENOENT') return undefined
    throw error
  } finally {
    await parent.handle.close()
  }
  try {
    await verify(handle, absoluteOf(target), target.relativePath)
  } catch (error) {
    await handle.close()
    throw error
  }
  return handle
}

async function readAll(handle: FileHandle, size: number): Promise<Buffer> {
  const content = Buffer.alloc(size)
  let filled = 0
  while (filled < size) {
    const { bytesRead } = await handle.read(content, filled, size - filled, filled)
    if (bytesRead === 0) break
    filled += bytesRead
  }
  return content.subarray(0, filled)
}

export type EntryContent =
  | { kind: 'missing' }
  | { kind: 'directory' }
  | { kind: 'special' }
  | { kind: 'too-large'; size: number }
  | { kind: 'file'; content: Buffer }

async function contentOf(handle: FileHandle, maxBytes: number): Promise<EntryContent> {
  const stats = await handle.stat()
  if (stats.isDirectory()) return { kind: 'directory' }
  if (!stats.isFile()) return { kind: 'special' }
  if (stats.size > maxBytes) return { kind: 'too-large', size: stats.size }
  return { kind: 'file', content: await readAll(handle, stats.size) }
}

/** Reads the target without following a symlink anywhere below the workspace root. */
export async function readWorkspaceEntry(target: WorkspaceTarget, maxBytes: number): Promise<EntryContent> {
  const handle = await openEntry(target, READ_FLAGS)
  if (!handle) return { kind: 'missing' }
  try {
    return await contentOf(handle, maxBytes)
  } finally {
    await handle.close()
  }
}

/**
 * The entries of a directory, listed through its verified descriptor: a directory swapped for a symlink
 * is a ToolConflict; a missing one (or a file in its place) is ENOENT.
 */
export async function listWorkspaceDirectory(target: WorkspaceTarget): Promise<Dirent[]> {
  const handle = await openEntry(target, O_RDONLY | O_DIRECTORY)
  if (!handle) {
    throw Object.assign(new Error(`${target.relativePath} is not a directory of the workspace`), {
      code: 'ENOENT',
    })
  }
  try {
    return await readdir(useProcFd ? `${PROC_FD}/${handle.fd}` : absoluteOf(target), { withFileTypes: true })
  } finally {
    await handle.close()
  }
}

/**
 * Writes `content` to the target through its descriptor. `expected` is the precondition checked on the
 * same descriptor: null = create (exclusive; a file that appeared is a conflict), otherwise a predicate
 * over the current bytes that throws a ToolConflict when they changed.
 */
export async function writeWorkspaceFile(
  target: WorkspaceTarget,
  content: string,
  expected: null | ((current: Buffer) => void),
  maxBytes: number,
): Promise<void> {
  const shown = target.relativePath
  let handle: FileHandle | undefined
  if (expected === null) {
    try {
      handle = await openEntry(target, O_WRONLY | O_CREAT | O_EXCL, { create: true, mode: 0o666 })
    } catch (error) {
      if (errorCode(error) === 'EEXIST') {
        throw new ToolConflict(
          `${shown} was created since the proposal; read it and propose the write again.`,
        )
      }
      throw error
    }
    if (!handle) throw swapped(shown)
  } else {
    handle = await openEntry(target, O_RDWR | O_NONBLOCK)
    if (!handle)
      throw new ToolConflict(`${shown} was deleted since the proposal; read it again and propose again.`)
  }
  try {
    if (expected !== null) {
      const current = await contentOf(handle, maxBytes)
      if (current.kind !== 'file')
        throw new ToolConflict(`${shown} is no longer a regular file; nothing was changed.`)
      expected(current.content)
      await handle.truncate(0)
    }
    const bytes = Buffer.from(content)
    let written = 0
    while (written < bytes.length) {
      const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, written)
      written += bytesWritten
    }
  } finally {
    await handle.close()
  }
}

/**
 * Deletes the target by name in its verified parent directory (unlink never follows the last component),
 * after `expected` accepted the bytes of the file that name holds.
 */
export async function deleteWorkspaceFile(
  target: WorkspaceTarget,
  expected: (current: Buffer) => void,
  maxBytes: number,
): Promise<void> {
  const shown = target.relativePath
  const names = segments(target.relativePath)
  if (names.length === 0) throw new ToolConflict('The workspace root itself cannot be deleted.')
  const parent = await openParent(target, false)
  if (!parent) throw new ToolConflict(`${shown} was deleted since the proposal; nothing to delete.`)
  try {
    const name = names.at(-1)!
    let handle: FileHandle
    try {
      handle = await open(parent.entry(name), READ_FLAGS)
    } catch (error) {
      if (errorCode(error) === 'ELOOP') throw swapped(shown)
      if (errorCode(error) === 'ENOENT') {
        throw new ToolConflict(`${shown} was deleted since the proposal; nothing to delete.`)
      }
      throw error
    }
    try {
      const current = await contentOf(handle, maxBytes)
      if (current.kind !== 'file')
        throw new ToolConflict(`${shown} is no longer a regular file; nothing was deleted.`)
      expected(current.content)
    } finally {
      await handle.close()
    }
    // The parent is checked once more right before the unlink: a directory moved out since the walk shows here.
    await verify(parent.handle, parent.absolutePath, shown)
    await unlink(parent.entry(name))
  } finally {
    await parent.handle.close()
  }
}
