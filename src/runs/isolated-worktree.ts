// `hangar run --isolate`: a fresh detached git worktree of the project's HEAD under the data dir, so the
// agent cannot touch the user's working tree. (The workspaces milestone generalises this: branches per
// conversation, copies for non-git projects, SSH targets.)
import { execFile } from 'node:child_process'
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { AppError } from '../core/errors.js'

const execFileAsync = promisify(execFile)

export async function createIsolatedWorktree(
  projectDir: string,
  dataDir: string,
  name: string,
): Promise<string> {
  let root: string
  try {
    root = (await execFileAsync('git', ['rev-parse', '--show-toplevel'], { cwd: projectDir })).stdout.trim()
  } catch {
    throw new AppError('usage', `--isolate needs a git repository, and ${projectDir} is not in one`, {
      hint: 'run without --isolate to work in place, or git init the project first',
    })
  }
  const target = path.join(dataDir, 'worktrees', name)
  await mkdir(path.dirname(target), { recursive: true })
  try {
    await execFileAsync('git', ['worktree', 'add', '--detach', target, 'HEAD'], { cwd: root })
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim().split('\n').at(-1) ?? ''
    throw new AppError('unavailable', `cannot create an isolated worktree of ${root}: ${stderr}`, {
      retryable: false,
      hint: 'a repository with no commit yet cannot be isolated; commit first',
    })
  }
  return target
}
