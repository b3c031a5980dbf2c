// Issue 17 item 9, deterministically: the state a racer creates between the path check and the operation
// (a checked directory or file replaced by a symlink) is set up before the call, and each operation must
// refuse it as a ToolConflict without touching the symlink's target. test/security/symlink-race.test.ts
// runs the real race.
import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ToolConflict } from './types.js'
import {
  deleteWorkspaceFile,
  listWorkspaceDirectory,
  readWorkspaceEntry,
  writeWorkspaceFile,
} from './workspace-fs.js'

const MAX = 1024 * 1024
const accept = (): void => undefined

describe('workspace-fs', () => {
  let root: string
  let workspaceRoot: string
  let outside: string

  beforeEach(async () => {
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hangar-workspace-fs-')))
    workspaceRoot = path.join(root, 'workspace')
    outside = path.join(root, 'outside')
    await mkdir(path.join(workspaceRoot, 'real'), { recursive: true })
    await mkdir(outside)
    await writeFile(path.join(outside, 'target.txt'), 'outside\n')
    // `swapped` stands where a checked directory was: the state a racer leaves after the check.
    await symlink(outside, path.join(workspaceRoot, 'swapped'))
    await symlink(path.join(workspaceRoot, 'real'), path.join(workspaceRoot, 'inner-link'))
  })

  afterEach(async () => {
    await rm(root, { recursive: true, force: true })
  })

  const target = (relativePath: string) => ({ workspaceRoot, relativePath })

  it('creates missing directories and writes through the descriptor', async () => {
    await writeWorkspaceFile(target('real/a/b/new.txt'), 'hello\n', null, MAX)
    expect(await readFile(path.join(workspaceRoot, 'real/a/b/new.txt'), 'utf8')).toBe('hello\n')
    const entry = await readWorkspaceEntry(target('real/a/b/new.txt'), MAX)
    expect(entry).toEqual({ kind: 'file', content: Buffer.from('hello\n') })
    expect(await readWorkspaceEntry(target('real/missing/x.txt'), MAX)).toEqual({ kind: 'missing' })
  })

  it('overwrites only after the precondition accepts the bytes it found', async () => {
    await writeFile(path.join(workspaceRoot, 'real/file.txt'), 'a much longer original line\n')
    await expect(
      writeWorkspaceFile(
        target('real/file.txt'),
        'new\n',
        () => {
          throw new ToolConflict('changed')
        },
        MAX,
      ),
    ).rejects.toThrow('changed')
    expect(await readFile(path.join(workspaceRoot, 'real/file.txt'), 'utf8')).toBe(
      'a much longer original line\n',
    )
    await writeWorkspaceFile(target('real/file.txt'), 'new\n', accept, MAX)
    expect(await readFile(path.join(workspaceRoot, 'real/file.txt'), 'utf8')).toBe('new\n')
  })

  it.each([
    ['a create', () => writeWorkspaceFile(target('swapped/new.txt'), 'x', null, MAX)],
    ['an overwrite', () => writeWorkspaceFile(target('swapped/target.txt'), 'x', accept, MAX)],
    ['a delete', () => deleteWorkspaceFile(target('swapped/target.txt'), accept, MAX)],
    ['a read', () => readWorkspaceEntry(target('swapped/target.txt'), MAX)],
    ['a listing', () => listWorkspaceDirectory(target('swapped'))],
    ['a listing below', () => listWorkspaceDirectory(target('swapped/sub'))],
  ])('refuses %s through a directory swapped for a symlink to outside', async (_name, operation) => {
    const error = await operation().then(
      () => undefined,
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(ToolConflict)
    expect((error as Error).message).toMatch(/^swapped(\/\S+)? was moved or replaced by a symlink/)
    expect(await readdir(outside)).toEqual(['target.txt'])
    expect(await readFile(path.join(outside, 'target.txt'), 'utf8')).toBe('outside\n')
  })

  it('refuses a symlink component even when it points inside: the checked real path had none', async () => {
    await writeFile(path.join(workspaceRoot, 'real/file.txt'), 'inside\n')
    await expect(writeWorkspaceFile(target('inner-link/file.txt'), 'x', accept, MAX)).rejects.toThrow(
      ToolConflict,
    )
    expect(await readFile(path.join(workspaceRoot, 'real/file.txt'), 'utf8')).toBe('inside\n')
  })

  it('refuses a file swapped for a symlink, and never writes through it', async () => {
    await symlink(path.join(outside, 'target.txt'), path.join(workspaceRoot, 'real/link.txt'))
    await expect(writeWorkspaceFile(target('real/link.txt'), 'x', accept, MAX)).rejects.toThrow(
      /moved or replaced by a symlink/,
    )
    // An exclusive create meets the link as an existing name: a conflict, never a write through it.
    await expect(writeWorkspaceFile(target('real/link.txt'), 'x', null, MAX)).rejects.toThrow(ToolConflict)
    await expect(readWorkspaceEntry(target('real/link.txt'), MAX)).rejects.toThrow(ToolConflict)
    expect(await readFile(path.join(outside, 'target.txt'), 'utf8')).toBe('outside\n')
  })

  it('reports a FIFO as special without blocking on it', async () => {
    execFileSync('mkfifo', [path.join(workspaceRoot, 'real/pipe')])
    expect(await readWorkspaceEntry(target('real/pipe'), MAX)).toEqual({ kind: 'special' })
  })
})
