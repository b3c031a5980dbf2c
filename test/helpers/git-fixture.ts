// git for tests: a fixed author and committer, so commits work on a machine with no git identity.
import { execFileSync } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'

export const GIT_TEST_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
}

/** Runs git in `dir` and returns its trimmed stdout (throws on failure). */
export function gitIn(dir: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: dir, env: GIT_TEST_ENV, encoding: 'utf8' }).trim()
}

/** Makes `dir` a git repository on `main` with `files` (default: a README) in its first commit. */
export async function initRepo(
  dir: string,
  files: Record<string, string> = { 'README.md': '# project\n' },
): Promise<void> {
  await mkdir(dir, { recursive: true })
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text)
  gitIn(dir, 'init', '-q', '-b', 'main')
  gitIn(dir, 'add', '.')
  gitIn(dir, 'commit', '-q', '-m', 'first')
}
