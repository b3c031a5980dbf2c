// One sync at a time per local workspace: in this process by a promise chain, across processes (a
// daemon and a `hangar run`) by a lock file holding the owner's pid; a lock whose owner is dead is stale.
import { createHash } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { open, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { AppError } from '../../core/errors.js'

const chains = new Map<string, Promise<unknown>>()

function lockFile(dir: string): string {
  const directory = path.join(os.tmpdir(), `hangar-locks-${process.getuid?.() ?? 'user'}`)
  mkdirSync(directory, { recursive: true, mode: 0o700 })
  return path.join(
    directory,
    `${createHash('sha256').update(path.resolve(dir)).digest('hex').slice(0, 24)}.lock`,
  )
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function acquire(file: string, dir: string): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, 'wx', 0o600)
      await handle.writeFile(String(process.pid))
      await handle.close()
      return
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const owner = Number(await readFile(file, 'utf8').catch(() => ''))
      if (Number.isInteger(owner) && owner > 0 && alive(owner))
        throw new AppError('conflict', `another Hangar process (pid ${owner}) is syncing ${dir}`, {
          retryable: true,
          hint: 'retry when it has finished',
        })
      await rm(file, { force: true })
    }
  }
  throw new AppError('conflict', `cannot lock ${dir} for syncing`, { retryable: true })
}

export async function withWorkspaceLock<T>(dir: string, work: () => Promise<T>): Promise<T> {
  const key = path.resolve(dir)
  const previous = chains.get(key) ?? Promise.resolve()
  const next = previous
    .catch(() => {})
    .then(async () => {
      const file = lockFile(key)
      await acquire(file, key)
      try {
        return await work()
      } finally {
        await rm(file, { force: true })
      }
    })
  chains.set(key, next)
  try {
    return await next
  } finally {
    if (chains.get(key) === next) chains.delete(key)
  }
}
