import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { resolveInWorkspace } from './workspace-paths.js'

describe('workspace-paths', () => {
  let root: string
  let workspace: string
  let outside: string

  beforeEach(async () => {
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hangar-paths-')))
    workspace = path.join(root, 'workspace')
    outside = path.join(root, 'outside')
    await mkdir(path.join(workspace, 'src'), { recursive: true })
    await mkdir(path.join(workspace, '.git'), { recursive: true })
    await mkdir(outside)
    await writeFile(path.join(workspace, 'src', 'a.ts'), 'export {}\n')
    await writeFile(path.join(outside, 'secret.txt'), 'secret\n')
  })

  afterEach(async () => {
    await rm(root, { recursive: true, force: true })
  })

  it('resolves a relative path to its real absolute path and a workspace-relative path', async () => {
    const resolved = await resolveInWorkspace(workspace, './src/../src/a.ts', { mustExist: true })
    expect(resolved).toEqual({
      ok: true,
      absolutePath: path.join(workspace, 'src', 'a.ts'),
      relativePath: 'src/a.ts',
      workspaceRoot: workspace,
      exists: true,
    })
  })

  it('accepts an absolute path inside the workspace and a path that does not exist yet', async () => {
    const absolute = await resolveInWorkspace(workspace, path.join(workspace, 'src', 'a.ts'))
    expect(absolute).toMatchObject({ ok: true, relativePath: 'src/a.ts' })
    const missing = await resolveInWorkspace(workspace, 'new/dir/file.ts', { forWrite: true })
    expect(missing).toMatchObject({ ok: true, relativePath: 'new/dir/file.ts', exists: false })
  })

  it('refuses ../ with a message that says what to do', async () => {
    const resolved = await resolveInWorkspace(workspace, '../outside/secret.txt')
    expect(resolved).toEqual({
      ok: false,
      message:
        'Path ../outside/secret.txt is outside the workspace; use a path relative to the workspace root.',
    })
  })

  it('refuses an absolute path elsewhere', async () => {
    const resolved = await resolveInWorkspace(workspace, '/etc/passwd')
    expect(resolved.ok).toBe(false)
    if (!resolved.ok) expect(resolved.message).toContain('outside the workspace')
  })

  it('refuses a symlinked directory pointing out, at any depth, also for files that do not exist', async () => {
    await symlink(outside, path.join(workspace, 'src', 'linked'))
    for (const requested of ['src/linked', 'src/linked/secret.txt', 'src/linked/new/file.txt']) {
      const resolved = await resolveInWorkspace(workspace, requested)
      expect(resolved.ok, requested).toBe(false)
      if (!resolved.ok) expect(resolved.message).toContain('outside the workspace through a symlink')
    }
  })

  it('refuses a symlinked file pointing out and a dangling symlink pointing out', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'file-link'))
    await symlink(path.join(outside, 'not-there.txt'), path.join(workspace, 'dangling'))
    await symlink('dangling', path.join(workspace, 'chained'))
    for (const requested of ['file-link', 'dangling', 'chained']) {
      const resolved = await resolveInWorkspace(workspace, requested, { forWrite: true })
      expect(resolved.ok, requested).toBe(false)
    }
  })

  it('allows a symlink inside the workspace that points inside, resolving to its target', async () => {
    await symlink('src', path.join(workspace, 'source'))
    await symlink('a.ts', path.join(workspace, 'src', 'alias.ts'))
    expect(await resolveInWorkspace(workspace, 'source/a.ts')).toMatchObject({
      ok: true,
      relativePath: 'src/a.ts',
    })
    expect(await resolveInWorkspace(workspace, 'src/alias.ts')).toMatchObject({
      ok: true,
      relativePath: 'src/a.ts',
    })
  })

  it('follows a dangling symlink inside to its missing target inside', async () => {
    await symlink('src/later.ts', path.join(workspace, 'later'))
    expect(await resolveInWorkspace(workspace, 'later', { forWrite: true })).toMatchObject({
      ok: true,
      relativePath: 'src/later.ts',
      exists: false,
    })
  })

  it('refuses writes into .git/ and to the root, but allows reading them', async () => {
    for (const requested of ['.git/config', '.git', 'src/../.git/hooks/pre-commit', '.']) {
      const resolved = await resolveInWorkspace(workspace, requested, { forWrite: true })
      expect(resolved.ok, requested).toBe(false)
    }
    await symlink('.git', path.join(workspace, 'git-alias'))
    expect((await resolveInWorkspace(workspace, 'git-alias/config', { forWrite: true })).ok).toBe(false)
    expect((await resolveInWorkspace(workspace, '.git')).ok).toBe(true)
  })

  it('refuses a missing path when it must exist, an empty path and a symlink loop', async () => {
    const missing = await resolveInWorkspace(workspace, 'nope.ts', { mustExist: true })
    expect(missing).toEqual({
      ok: false,
      message: 'Path nope.ts does not exist; use list_files or glob to find the right path.',
    })
    expect((await resolveInWorkspace(workspace, '  ')).ok).toBe(false)
    await symlink('loop-b', path.join(workspace, 'loop-a'))
    await symlink('loop-a', path.join(workspace, 'loop-b'))
    const loop = await resolveInWorkspace(workspace, 'loop-a')
    expect(loop.ok).toBe(false)
    if (!loop.ok) expect(loop.message).toContain('symlink loop')
  })

  it('works when the workspace itself is given through a symlink', async () => {
    const alias = path.join(root, 'alias')
    await symlink(workspace, alias)
    expect(await resolveInWorkspace(alias, 'src/a.ts')).toMatchObject({ ok: true, relativePath: 'src/a.ts' })
    expect((await resolveInWorkspace(alias, '../outside/secret.txt')).ok).toBe(false)
  })
})
