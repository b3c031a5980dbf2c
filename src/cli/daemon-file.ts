// `<data-dir>/daemon.json` (mode 0600): how the CLI finds a running daemon and authenticates to it as the
// owner. Written atomically by `hangar up`, removed on a clean stop; a file whose pid is gone is stale.
import { randomBytes } from 'node:crypto'
import { readFile, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { processAlive } from '../adapters/supervisor.js'

export interface DaemonFile {
  url: string
  pid: number
  bootId: string
  nodeId: string
  version: string
  startedAt: string
  /** A CLI session secret (hgs_…) for the owner: a day long, renewed while running, revoked at stop. */
  token: string
}

export function daemonFilePath(dataDir: string): string {
  return path.join(dataDir, 'daemon.json')
}

export async function writeDaemonFile(dataDir: string, contents: DaemonFile): Promise<void> {
  const file = daemonFilePath(dataDir)
  const temporary = `${file}.${randomBytes(4).toString('hex')}.tmp`
  await writeFile(temporary, `${JSON.stringify(contents, null, 2)}\n`, { mode: 0o600 })
  await rename(temporary, file)
}

/** The running daemon for this data dir, or null (no file, unreadable, or its process is gone). */
export async function readDaemonFile(dataDir: string): Promise<DaemonFile | null> {
  let parsed: Partial<DaemonFile>
  try {
    parsed = JSON.parse(await readFile(daemonFilePath(dataDir), 'utf8')) as Partial<DaemonFile>
  } catch {
    return null
  }
  if (typeof parsed.url !== 'string' || typeof parsed.pid !== 'number' || typeof parsed.token !== 'string')
    return null
  if (!processAlive(parsed.pid)) return null
  return parsed as DaemonFile
}

/**
 * The CLI session of a daemon.json whatever its pid says: a daemon that died without stopping left it
 * valid, and the next start revokes it.
 */
export async function readStaleDaemonToken(dataDir: string): Promise<string | null> {
  try {
    const parsed = JSON.parse(await readFile(daemonFilePath(dataDir), 'utf8')) as Partial<DaemonFile>
    return typeof parsed.token === 'string' ? parsed.token : null
  } catch {
    return null
  }
}

/** Removes the file only if it still belongs to this process (a newer daemon may have replaced it). */
export async function removeDaemonFile(dataDir: string, bootId: string): Promise<void> {
  try {
    const current = JSON.parse(await readFile(daemonFilePath(dataDir), 'utf8')) as Partial<DaemonFile>
    if (current.bootId === bootId) await rm(daemonFilePath(dataDir), { force: true })
  } catch {
    // Already gone.
  }
}
