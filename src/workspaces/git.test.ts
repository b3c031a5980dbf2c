import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { currentBranch, git, gitBuffer, GitError, gitRoot } from './git.js'

const IDENTITY = {
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
}

async function withRepo(work: (dir: string) => Promise<void>): Promise<void> {
  const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hangar-git-')))
  try {
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir })
    execFileSync('git', ['commit', '-q', '--allow-empty', '-m', 'start'], {
      cwd: dir,
      env: { ...process.env, ...IDENTITY },
    })
    await work(dir)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

describe('git', () => {
  it('finds the root and the branch of a work tree, and says when there is none', async () => {
    await withRepo(async (dir) => {
      await mkdir(path.join(dir, 'sub'))
      expect(await gitRoot(path.join(dir, 'sub'))).toBe(dir)
      expect(await currentBranch(dir)).toBe('main')
      await git(['switch', '-q', '--detach'], { cwd: dir })
      expect(await currentBranch(dir)).toBeNull()
    })
    const plain = await mkdtemp(path.join(os.tmpdir(), 'hangar-plain-'))
    try {
      expect(await gitRoot(plain)).toBeUndefined()
    } finally {
      await rm(plain, { recursive: true, force: true })
    }
  })

  it('throws a GitError carrying the last stderr line', async () => {
    await withRepo(async (dir) => {
      const error = await git(['rev-parse', '--verify', 'no-such-ref'], { cwd: dir }).catch(
        (caught: unknown) => caught,
      )
      expect(error).toBeInstanceOf(GitError)
      expect((error as GitError).stderrLine).toBe('fatal: Needed a single revision')
      expect((error as GitError).message).toBe('git rev-parse failed: fatal: Needed a single revision')
    })
  })

  it('passes input on stdin, returns bytes, and ignores a GIT_DIR inherited from a hook', async () => {
    await withRepo(async (dir) => {
      const { stdout: id } = await git(['hash-object', '-w', '--stdin'], { cwd: dir, input: 'hello\n' })
      const { stdout: bytes } = await gitBuffer(['cat-file', 'blob', id.trim()], { cwd: dir })
      expect(bytes).toEqual(Buffer.from('hello\n'))
      const saved = process.env.GIT_DIR
      process.env.GIT_DIR = path.join(os.tmpdir(), 'not-a-repository')
      try {
        expect(await gitRoot(dir)).toBe(dir)
      } finally {
        if (saved === undefined) delete process.env.GIT_DIR
        else process.env.GIT_DIR = saved
      }
    })
  })
})
