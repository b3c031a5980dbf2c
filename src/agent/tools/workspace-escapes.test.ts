// Every path-taking tool refuses to leave the workspace: ../, absolute paths elsewhere, symlinked
// directories and files pointing out, dangling links pointing out, and (for writes) .git/.
import {
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  realpath,
  rename,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { deleteFileTool } from './delete-file-tool.js'
import { editFileTool } from './edit-file-tool.js'
import { globTool } from './glob-tool.js'
import { grepTool } from './grep-tool.js'
import { listFilesTool } from './list-files-tool.js'
import { readFileTool } from './read-file-tool.js'
import type { Proposal, ToolContext, ToolOutput } from './types.js'
import { ToolConflict } from './types.js'
import { writeFileTool } from './write-file-tool.js'

/** Every entry under a directory with its type and content (or link target), for byte-identity checks. */
async function snapshot(directory: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {}
  for (const name of await readdir(directory)) {
    const full = path.join(directory, name)
    const stats = await lstat(full)
    if (stats.isSymbolicLink()) result[full] = `link:${await readlink(full)}`
    else if (stats.isDirectory()) Object.assign(result, { [full]: 'dir' }, await snapshot(full))
    else result[full] = `file:${(await readFile(full)).toString('base64')}`
  }
  return result
}

function isRefusal(output: Proposal | ToolOutput): output is ToolOutput {
  return 'content' in output && output.isError === true
}

describe('workspace escapes', () => {
  let root: string
  let workspace: string
  let outside: string
  let context: ToolContext

  beforeEach(async () => {
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hangar-escapes-')))
    workspace = path.join(root, 'workspace')
    outside = path.join(root, 'outside')
    await mkdir(path.join(workspace, '.git'), { recursive: true })
    await mkdir(path.join(workspace, 'src'))
    await mkdir(outside)
    await writeFile(path.join(workspace, '.git', 'config'), '[core]\n')
    await writeFile(path.join(workspace, 'src', 'a.ts'), 'const inside = 1\n')
    await writeFile(path.join(outside, 'secret.txt'), 'TOP SECRET token\n')
    await symlink(outside, path.join(workspace, 'linked-dir'))
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'linked-file'))
    await symlink(path.join(outside, 'not-yet.txt'), path.join(workspace, 'dangling'))
    context = { workspace }
  })

  afterEach(async () => {
    await rm(root, { recursive: true, force: true })
  })

  const escapes = [
    '../outside/secret.txt',
    'ABSOLUTE',
    'linked-dir',
    'linked-dir/secret.txt',
    'linked-file',
    'dangling',
  ] as const
  const pathFor = (escape: (typeof escapes)[number]): string =>
    escape === 'ABSOLUTE' ? path.join(outside, 'secret.txt') : escape

  it.each(escapes)('read tools refuse %s', async (escape) => {
    const requested = pathFor(escape)
    const outputs = [
      await listFilesTool.run({ path: requested, recursive: true }, context),
      await readFileTool.run({ path: requested }, context),
      await globTool.run({ pattern: '**/*', path: requested }, context),
      await grepTool.run({ pattern: 'SECRET', path: requested, case_insensitive: false }, context),
    ]
    for (const output of outputs) {
      expect(output.isError).toBe(true)
      expect(output.content).toMatch(/outside the workspace/)
      expect(output.content).not.toContain('TOP SECRET')
    }
  })

  it.each(escapes)('write tools refuse %s and change nothing', async (escape) => {
    const requested = pathFor(escape)
    const before = await snapshot(root)
    const outputs = [
      await writeFileTool.propose({ path: requested, content: 'pwned\n' }, context),
      await editFileTool.propose(
        { path: requested, old_string: 'TOP', new_string: 'pwned', replace_all: false },
        context,
      ),
      await deleteFileTool.propose({ path: requested }, context),
    ]
    for (const output of outputs) {
      expect(isRefusal(output)).toBe(true)
      if (isRefusal(output)) expect(output.content).toMatch(/outside the workspace/)
    }
    expect(await snapshot(root)).toEqual(before)
  })

  it('write tools refuse paths inside .git/', async () => {
    const before = await snapshot(root)
    const outputs = [
      await writeFileTool.propose({ path: '.git/hooks/pre-commit', content: '#!/bin/sh\n' }, context),
      await editFileTool.propose(
        { path: '.git/config', old_string: 'core', new_string: 'x', replace_all: false },
        context,
      ),
      await deleteFileTool.propose({ path: '.git/config' }, context),
    ]
    for (const output of outputs) {
      expect(isRefusal(output)).toBe(true)
      if (isRefusal(output)) expect(output.content).toContain('.git/')
    }
    expect(await snapshot(root)).toEqual(before)
  })

  it('glob refuses a pattern that starts in a symlinked directory or climbs out', async () => {
    const throughLink = await globTool.run({ pattern: 'linked-dir/**', path: '.' }, context)
    expect(throughLink).toMatchObject({ isError: true })
    const climbing = await globTool.run({ pattern: '../**', path: '.' }, context)
    expect(climbing).toMatchObject({ isError: true })
  })

  it('walks over the whole workspace without following symlinks out', async () => {
    const listing = await listFilesTool.run({ path: '.', recursive: true }, context)
    expect(listing.content).toContain('linked-dir')
    expect(listing.content).not.toContain('secret.txt')
    const found = await globTool.run({ pattern: '**/*.txt', path: '.' }, context)
    expect(found.content).not.toContain('secret.txt')
    const grep = await grepTool.run({ pattern: 'SECRET', path: '.', case_insensitive: false }, context)
    expect(grep.content).not.toContain('TOP SECRET')
  })

  it('allows a symlink inside the workspace that points inside', async () => {
    await symlink('src', path.join(workspace, 'source'))
    const read = await readFileTool.run({ path: 'source/a.ts' }, context)
    expect(read).toEqual({ content: '1\tconst inside = 1' })
    const proposal = await editFileTool.propose(
      { path: 'source/a.ts', old_string: '1', new_string: '2', replace_all: false },
      context,
    )
    expect(proposal).toMatchObject({ classification: 'safe_update', precondition: { path: 'src/a.ts' } })
  })

  it('refuses at apply time a path that was swapped for a symlink out after the proposal', async () => {
    const input = { path: 'src/a.ts', content: 'new\n' }
    const proposal = await writeFileTool.propose(input, context)
    expect(isRefusal(proposal)).toBe(false)
    await rename(path.join(workspace, 'src'), path.join(workspace, 'src-moved'))
    await mkdir(path.join(outside, 'src'))
    await writeFile(path.join(outside, 'src', 'a.ts'), 'const inside = 1\n')
    await symlink(path.join(outside, 'src'), path.join(workspace, 'src'))
    const before = await snapshot(outside)
    await expect(writeFileTool.apply(input, context, proposal as Proposal)).rejects.toBeInstanceOf(
      ToolConflict,
    )
    expect(await snapshot(outside)).toEqual(before)
  })
})
