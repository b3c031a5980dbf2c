import { existsSync } from 'node:fs'
import { lstat, mkdir, mkdtemp, readFile, readlink, realpath, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { AppError } from '../core/errors.js'
import { currentBranch } from './git.js'
import {
  changedFileCount,
  createCopy,
  createWorktree,
  removeWorkspaceFiles,
  repositoryState,
  verifyWorkspace,
  workspaceCwd,
} from './local-workspaces.js'
import { gitIn } from '../../test/helpers/git-fixture.js'

interface Scratch {
  /** A git repository with one commit (README.md), or a plain directory. */
  project: string
  /** Where workspaces go (`<data-dir>/workspaces`). */
  root: string
  base: string
}

/** A temp project and workspace root, removed afterwards (HOUSE_STYLE #27). */
async function withScratch(
  kind: 'git' | 'empty-git' | 'plain',
  work: (scratch: Scratch) => Promise<void>,
): Promise<void> {
  const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hangar-ws-')))
  const project = path.join(base, 'project')
  await mkdir(project)
  await writeFile(path.join(project, 'README.md'), '# project\n')
  if (kind !== 'plain') gitIn(project, 'init', '-q', '-b', 'main')
  if (kind === 'git') {
    gitIn(project, 'add', '.')
    gitIn(project, 'commit', '-q', '-m', 'first')
  }
  try {
    await work({ project, root: path.join(base, 'data', 'workspaces'), base })
  } finally {
    await rm(base, { recursive: true, force: true })
  }
}

async function errorOf(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(AppError)
  return error as AppError
}

describe('local-workspaces', () => {
  it('makes a worktree of HEAD on hangar/<id> under the root', async () => {
    await withScratch('git', async ({ project, root }) => {
      const head = gitIn(project, 'rev-parse', 'HEAD')
      const created = await createWorktree({
        projectDir: project,
        root,
        name: 'conv_1',
        branch: 'hangar/conv_1',
      })
      expect(created).toMatchObject({
        kind: 'worktree',
        path: path.join(root, 'conv_1'),
        projectPath: project,
        branch: 'hangar/conv_1',
        baseRef: head,
        createdBranch: true,
        cwd: path.join(root, 'conv_1'),
      })
      expect(await currentBranch(created.path)).toBe('hangar/conv_1')
      expect(await readFile(path.join(created.path, 'README.md'), 'utf8')).toBe('# project\n')
      await verifyWorkspace({ ...created, id: 'ws_1' })
      // Nothing of Hangar's talks to a remote: none exists in the project or in the worktree.
      expect(gitIn(project, 'remote')).toBe('')
      expect(gitIn(created.path, 'remote')).toBe('')
    })
  })

  it('makes the worktree from a chosen ref, and works in the project subdirectory inside it', async () => {
    await withScratch('git', async ({ project, root }) => {
      const first = gitIn(project, 'rev-parse', 'HEAD')
      gitIn(project, 'tag', 'v1')
      await mkdir(path.join(project, 'app'))
      await writeFile(path.join(project, 'README.md'), '# changed\n')
      await writeFile(path.join(project, 'app', 'hangar.yaml'), 'agents: {}\n')
      gitIn(project, 'commit', '-q', '-am', 'second')
      const created = await createWorktree({
        projectDir: project,
        root,
        name: 'conv_2',
        branch: 'hangar/conv_2',
        baseRef: 'v1',
      })
      expect(created.baseRef).toBe(first)
      expect(await readFile(path.join(created.path, 'README.md'), 'utf8')).toBe('# project\n')
      const unknown = await errorOf(
        createWorktree({ projectDir: project, root, name: 'x', branch: 'hangar/x', baseRef: 'nope' }),
      )
      expect(unknown).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('"nope"') })

      gitIn(project, 'add', 'app')
      gitIn(project, 'commit', '-q', '-m', 'app')
      const nested = await createWorktree({ projectDir: path.join(project, 'app'), root, name: 'one-off' })
      expect(nested.cwd).toBe(path.join(nested.path, 'app'))
      expect(await workspaceCwd(nested)).toBe(path.join(nested.path, 'app'))
    })
  })

  it('keeps uncommitted changes between uses of the worktree', async () => {
    await withScratch('git', async ({ project, root }) => {
      const created = await createWorktree({
        projectDir: project,
        root,
        name: 'conv_3',
        branch: 'hangar/conv_3',
      })
      await writeFile(path.join(created.path, 'draft.txt'), 'work in progress\n')
      await writeFile(path.join(created.path, 'README.md'), '# edited\n')
      await verifyWorkspace(created)
      expect(await readFile(path.join(created.path, 'draft.txt'), 'utf8')).toBe('work in progress\n')
      expect(await changedFileCount(created)).toBe(2)
      expect(existsSync(path.join(project, 'draft.txt'))).toBe(false)
    })
  })

  it('reports a worktree switched to another branch behind our back, naming both branches', async () => {
    await withScratch('git', async ({ project, root }) => {
      const created = await createWorktree({
        projectDir: project,
        root,
        name: 'conv_4',
        branch: 'hangar/conv_4',
      })
      gitIn(created.path, 'switch', '-q', '-c', 'feature/elsewhere')
      const error = await errorOf(verifyWorkspace({ ...created, id: 'ws_4' }))
      expect(error.code).toBe('conflict')
      expect(error.message).toBe(
        `workspace ws_4 at ${created.path} is on branch feature/elsewhere, not hangar/conv_4 — it was changed outside Hangar`,
      )
      expect(error.hint).toContain(`git -C ${created.path} switch hangar/conv_4`)
      expect(error.hint).toContain('hangar workspaces remove ws_4')

      const oneOff = await createWorktree({ projectDir: project, root, name: 'run-1' })
      expect(oneOff).toMatchObject({ branch: null, createdBranch: false })
      expect(await currentBranch(oneOff.path)).toBeNull()
      await verifyWorkspace(oneOff)
      gitIn(oneOff.path, 'switch', '-q', '-c', 'taken-over')
      expect((await errorOf(verifyWorkspace(oneOff))).message).toContain(
        'is on branch taken-over, not a detached HEAD',
      )
    })
  })

  it('reports a workspace whose directory was removed outside Hangar', async () => {
    await withScratch('git', async ({ project, root }) => {
      const created = await createWorktree({
        projectDir: project,
        root,
        name: 'conv_5',
        branch: 'hangar/conv_5',
      })
      await rm(created.path, { recursive: true, force: true })
      const error = await errorOf(verifyWorkspace({ ...created, id: 'ws_5' }))
      expect(error).toMatchObject({
        code: 'conflict',
        message: `workspace ws_5 at ${created.path} is missing — it was removed outside Hangar`,
      })
      expect(error.hint).toContain('hangar workspaces remove ws_5')
      // Removing it anyway prunes git's record and deletes the branch Hangar made.
      expect(await removeWorkspaceFiles(created)).toEqual({
        removedFiles: false,
        branch: { name: 'hangar/conv_5', deleted: true, reason: null },
      })
      expect(gitIn(project, 'worktree', 'list', '--porcelain')).not.toContain(created.path)
    })
  })

  it('deletes the branch on removal only when Hangar created it, and is idempotent', async () => {
    await withScratch('git', async ({ project, root }) => {
      const created = await createWorktree({
        projectDir: project,
        root,
        name: 'conv_6',
        branch: 'hangar/conv_6',
      })
      await writeFile(path.join(created.path, 'uncommitted.txt'), 'x')
      expect(await removeWorkspaceFiles(created)).toEqual({
        removedFiles: true,
        branch: { name: 'hangar/conv_6', deleted: true, reason: null },
      })
      expect(existsSync(created.path)).toBe(false)
      expect(gitIn(project, 'branch', '--list', 'hangar/conv_6')).toBe('')
      expect(await removeWorkspaceFiles(created)).toEqual({
        removedFiles: false,
        branch: { name: 'hangar/conv_6', deleted: false, reason: 'it was already deleted' },
      })

      // A branch that existed before (someone's, or kept from an earlier workspace) is reused and kept.
      gitIn(project, 'branch', 'hangar/conv_7')
      gitIn(project, 'commit', '-q', '--allow-empty', '-m', 'main moves on')
      const reused = await createWorktree({
        projectDir: project,
        root,
        name: 'conv_7',
        branch: 'hangar/conv_7',
      })
      expect(reused.createdBranch).toBe(false)
      expect(reused.baseRef).toBe(gitIn(project, 'rev-parse', 'hangar/conv_7'))
      expect(await removeWorkspaceFiles(reused)).toEqual({
        removedFiles: true,
        branch: { name: 'hangar/conv_7', deleted: false, reason: 'not created by Hangar' },
      })
      expect(gitIn(project, 'branch', '--list', 'hangar/conv_7')).toContain('hangar/conv_7')
    })
  })

  it('keeps a branch Hangar created when another worktree has it checked out', async () => {
    await withScratch('git', async ({ project, root, base }) => {
      const created = await createWorktree({
        projectDir: project,
        root,
        name: 'conv_8',
        branch: 'hangar/conv_8',
      })
      gitIn(project, 'worktree', 'remove', created.path)
      const elsewhere = path.join(base, 'elsewhere')
      gitIn(project, 'worktree', 'add', '-q', elsewhere, 'hangar/conv_8')
      expect(await removeWorkspaceFiles(created)).toEqual({
        removedFiles: false,
        branch: { name: 'hangar/conv_8', deleted: false, reason: `it is checked out at ${elsewhere}` },
      })
      expect(gitIn(elsewhere, 'branch', '--show-current')).toBe('hangar/conv_8')
      const again = await errorOf(
        createWorktree({ projectDir: project, root, name: 'conv_8b', branch: 'hangar/conv_8' }),
      )
      expect(again).toMatchObject({
        code: 'conflict',
        message: expect.stringContaining('already checked out'),
      })
    })
  })

  it('refuses a repository with no commit yet, with a hint to commit first', async () => {
    await withScratch('empty-git', async ({ project, root }) => {
      expect(await repositoryState(project)).toBe('no_commit')
      const error = await errorOf(
        createWorktree({ projectDir: project, root, name: 'c', branch: 'hangar/c' }),
      )
      expect(error.code).toBe('conflict')
      expect(error.message).toContain('has no commit yet')
      expect(error.hint).toContain('commit first')
    })
  })

  it('copies a project that is not a git repository, with the same lifecycle', async () => {
    await withScratch('plain', async ({ project }) => {
      expect(await repositoryState(project)).toBe('none')
      await mkdir(path.join(project, 'src', 'deep'), { recursive: true })
      await writeFile(path.join(project, 'src', 'deep', 'main.txt'), 'code\n')
      await symlink('src/deep/main.txt', path.join(project, 'link'))
      await mkdir(path.join(project, '.hangar', 'skills'), { recursive: true })
      const dataInside = path.join(project, 'hangar-data')
      await mkdir(dataInside)
      await writeFile(path.join(dataInside, 'hangar.db'), 'db')
      const insideRoot = path.join(dataInside, 'workspaces')
      const created = await createCopy({
        projectDir: project,
        root: insideRoot,
        name: 'conv_9',
        exclude: [dataInside],
      })
      expect(created).toMatchObject({
        kind: 'copy',
        branch: null,
        createdBranch: false,
        projectPath: project,
      })
      expect(await readFile(path.join(created.path, 'src', 'deep', 'main.txt'), 'utf8')).toBe('code\n')
      expect((await lstat(path.join(created.path, 'link'))).isSymbolicLink()).toBe(true)
      expect(await readlink(path.join(created.path, 'link'))).toBe('src/deep/main.txt')
      expect(existsSync(path.join(created.path, '.hangar'))).toBe(false)
      expect(existsSync(path.join(created.path, 'hangar-data'))).toBe(false)
      await writeFile(path.join(created.path, 'new.txt'), 'agent work\n')
      await verifyWorkspace(created)
      expect(existsSync(path.join(project, 'new.txt'))).toBe(false)
      expect(await removeWorkspaceFiles(created)).toEqual({ removedFiles: true, branch: null })
      expect(existsSync(created.path)).toBe(false)
      expect((await errorOf(verifyWorkspace(created))).message).toContain('is missing')
      expect(existsSync(path.join(project, 'src', 'deep', 'main.txt'))).toBe(true)
    })
  })

  it('never removes the project of a workspace in place', async () => {
    await withScratch('plain', async ({ project }) => {
      const inPlace = {
        kind: 'in_place' as const,
        path: project,
        projectPath: project,
        branch: null,
        createdBranch: false,
      }
      expect(await removeWorkspaceFiles(inPlace)).toEqual({ removedFiles: false, branch: null })
      expect(existsSync(path.join(project, 'README.md'))).toBe(true)
      const wrong = { ...inPlace, kind: 'copy' as const, path: path.dirname(project) }
      expect((await errorOf(removeWorkspaceFiles(wrong))).message).toContain('refusing to remove')
    })
  })
})
