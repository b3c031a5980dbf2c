// Copying a project's git-ignored files into a new workspace: only ignored files that match, never out
// of the project (globs, symlinks), never over the workspace's own.
import { existsSync } from 'node:fs'
import { mkdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { gitIn } from '../../../test/helpers/git-fixture.js'
import { makeTempDir } from '../../../test/helpers/store-engines.js'
import { copyIgnoredFiles, globToRegExp } from './copy-ignored-files.js'

describe('globToRegExp', () => {
  it('matches *, ?, ** and {a,b} over /-separated paths', () => {
    expect(globToRegExp('.env*').test('.env.local')).toBe(true)
    expect(globToRegExp('.env*').test('sub/.env')).toBe(false)
    expect(globToRegExp('**/.env').test('sub/deep/.env')).toBe(true)
    expect(globToRegExp('**/.env').test('.env')).toBe(true)
    expect(globToRegExp('config/*.{json,yaml}').test('config/local.yaml')).toBe(true)
    expect(globToRegExp('config/*.{json,yaml}').test('config/a/local.yaml')).toBe(false)
    expect(globToRegExp('a?.txt').test('ab.txt')).toBe(true)
    expect(globToRegExp('secrets/**').test('secrets/x/y')).toBe(true)
  })
})

describe('copyIgnoredFiles', () => {
  let root: string
  let project: string
  let workspace: string

  beforeEach(async () => {
    root = await realpath(await makeTempDir('hangar-copy-'))
    project = path.join(root, 'project')
    workspace = path.join(root, 'workspace')
    await mkdir(path.join(project, 'config'), { recursive: true })
    await mkdir(workspace)
    await writeFile(path.join(project, '.gitignore'), '.env*\n!.env.example\nconfig/local.json\nlinks/\n')
    await writeFile(path.join(project, '.env'), 'SECRET=1\n')
    await writeFile(path.join(project, '.env.local'), 'LOCAL=1\n')
    await writeFile(path.join(project, '.env.example'), 'SECRET=\n')
    await writeFile(path.join(project, 'config', 'local.json'), '{}\n')
    gitIn(project, 'init', '-q')
    gitIn(project, 'add', '-A')
    gitIn(project, 'commit', '-qm', 'first')
  })
  afterEach(async () => {
    await rm(root, { recursive: true, force: true })
  })

  it('copies the ignored files that match, and leaves tracked ones to git', async () => {
    const outcome = await copyIgnoredFiles(project, workspace, ['.env*', 'config/*.json'])
    expect(outcome.copied).toEqual(['.env', '.env.local', 'config/local.json'])
    expect(await readFile(path.join(workspace, '.env'), 'utf8')).toBe('SECRET=1\n')
    expect(existsSync(path.join(workspace, '.env.example'))).toBe(false)
  })

  it('copies from a plain folder however long the list git is asked about (git stops reading at once)', async () => {
    const folder = path.join(root, 'folder')
    const names = Array.from(
      { length: 1500 },
      (_, index) => `fixture-${String(index).padStart(4, '0')}-${'x'.repeat(40)}.env`,
    )
    await mkdir(path.join(folder, 'cache'), { recursive: true })
    for (const name of names) await writeFile(path.join(folder, 'cache', name), '1\n')
    const outcome = await copyIgnoredFiles(folder, workspace, ['cache/*.env'])
    expect(outcome.copied).toHaveLength(names.length)
    expect(existsSync(path.join(workspace, 'cache', names[0]!))).toBe(true)
  })

  it('never overwrites a file the workspace has', async () => {
    await writeFile(path.join(workspace, '.env'), 'MINE=1\n')
    const outcome = await copyIgnoredFiles(project, workspace, ['.env'])
    expect(outcome.copied).toEqual([])
    expect(outcome.skipped).toEqual([{ path: '.env', reason: 'the workspace has it already' }])
    expect(await readFile(path.join(workspace, '.env'), 'utf8')).toBe('MINE=1\n')
  })

  it('refuses absolute and ".." globs with a clear error', async () => {
    await expect(copyIgnoredFiles(project, workspace, ['/etc/passwd'])).rejects.toThrow(
      'copy glob "/etc/passwd": an absolute path is refused',
    )
    await expect(copyIgnoredFiles(project, workspace, ['../outside/.env'])).rejects.toThrow(
      'copy glob "../outside/.env": ".." is refused: copied files come from inside the project',
    )
  })

  it('does not follow symlinks out of the project, nor into linked directories', async () => {
    const outside = path.join(root, 'outside')
    await mkdir(outside)
    await writeFile(path.join(outside, 'stolen'), 'secret of another\n')
    await symlink(path.join(outside, 'stolen'), path.join(project, '.env.stolen'))
    await mkdir(path.join(project, 'links'))
    await symlink(outside, path.join(project, 'links', 'dir'))
    await symlink(path.join(project, '.env'), path.join(project, '.env.alias'))
    const outcome = await copyIgnoredFiles(project, workspace, ['.env*', 'links/**'])
    expect(outcome.copied).toEqual(['.env', '.env.alias', '.env.local'])
    expect(outcome.skipped).toEqual(
      expect.arrayContaining([
        { path: '.env.stolen', reason: 'a symlink pointing out of the project' },
        { path: 'links/dir', reason: 'a symlink pointing out of the project' },
      ]),
    )
    expect(existsSync(path.join(workspace, '.env.stolen'))).toBe(false)
    expect(existsSync(path.join(workspace, 'links'))).toBe(false)
    // A link inside the project is copied as the file it points to.
    expect(await readFile(path.join(workspace, '.env.alias'), 'utf8')).toBe('SECRET=1\n')
  })

  it('does not write through a directory of the workspace that links out of it', async () => {
    const outside = path.join(root, 'elsewhere')
    await mkdir(outside)
    await symlink(outside, path.join(workspace, 'config'))
    const outcome = await copyIgnoredFiles(project, workspace, ['config/local.json'])
    expect(outcome.copied).toEqual([])
    expect(existsSync(path.join(outside, 'local.json'))).toBe(false)
  })
})
