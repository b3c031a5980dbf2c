// What Hangar placed in a workspace for a run (skill folders, an instruction file, assets) and the
// `.git/info/exclude` block that hides them, recorded outside the workspace before anything is copied.
// A run removes them in its `finally`; a daemon that died mid-run never gets there, so start-up recovery
// reads the records left behind and removes what their (now ended) runs placed. The record lives in the
// data dir (`<data-dir>/runs/<run-id>.skills.json`), on the machine that holds the workspace.
import { execFile } from 'node:child_process'
import { mkdir, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { isTerminalRunStatus } from '../core/events.js'

const execFileAsync = promisify(execFile)

export interface PlacementRecord {
  /** The workspace the paths are relative to. */
  workspace: string
  /** The tag of the exclude block (the run id). */
  marker: string
  placed: string[]
}

const RECORD_SUFFIX = '.skills.json'

export function placementRecordFile(root: string, runId: string): string {
  return path.join(root, `${runId}${RECORD_SUFFIX}`)
}

export async function writePlacementRecord(file: string, record: PlacementRecord): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 })
  await writeFile(file, `${JSON.stringify(record)}\n`, { mode: 0o600 })
}

/** The git exclude file of a workspace (worktrees included), or null outside git. */
export async function gitExcludeFile(workspace: string): Promise<string | null> {
  try {
    const { stdout } = await execFileAsync('git', ['rev-parse', '--git-path', 'info/exclude'], {
      cwd: workspace,
    })
    return path.resolve(workspace, stdout.trim())
  } catch {
    return null
  }
}

export const excludeMarkers = (marker: string) => ({
  begin: `# hangar:${marker}`,
  end: `# /hangar:${marker}`,
})

/** Removes the block tagged `marker` from the workspace's exclude file, if it is there. */
export async function removeExcludeBlock(workspace: string, marker: string): Promise<void> {
  const file = await gitExcludeFile(workspace)
  if (!file) return
  const { begin, end } = excludeMarkers(marker)
  const lines = (await readFile(file, 'utf8').catch(() => '')).split('\n')
  const first = lines.indexOf(begin)
  const last = lines.indexOf(end, first)
  if (first === -1 || last === -1) return
  lines.splice(first, last - first + 1)
  await writeFile(file, lines.join('\n'))
}

/** Removes placed paths and the folders Hangar made on the way, those only once empty. */
export async function removePlacedFiles(workspace: string, placed: readonly string[]): Promise<void> {
  for (const entry of placed) {
    await rm(path.join(workspace, entry), { recursive: true, force: true })
    // Another run may use the same parent folders: a non-empty one stays.
    for (let parent = path.dirname(entry); parent !== '.'; parent = path.dirname(parent)) {
      if (
        !(await rmdir(path.join(workspace, parent)).then(
          () => true,
          () => false,
        ))
      )
        break
    }
  }
}

function parseRecord(text: string): PlacementRecord | null {
  try {
    const value = JSON.parse(text) as Partial<PlacementRecord>
    const placed = Array.isArray(value.placed)
      ? value.placed.filter((entry) => typeof entry === 'string')
      : []
    if (typeof value.workspace !== 'string' || typeof value.marker !== 'string') return null
    // Only relative paths inside the workspace: a damaged record must not reach elsewhere.
    const inside = placed.filter(
      (entry) => !path.isAbsolute(entry) && !path.normalize(entry).startsWith('..') && entry !== '',
    )
    return { workspace: value.workspace, marker: value.marker, placed: inside }
  } catch {
    return null
  }
}

/**
 * Cleans up after runs that ended without their own cleanup (a crash): every record in `root` whose run
 * has ended — or is unknown to the store — has its paths and exclude block removed, then the record.
 * Runs still going (another process on this data dir) are left alone. Returns the run ids cleaned up.
 */
export async function removeLeftoverPlacements(
  root: string,
  statuses: (runIds: string[]) => Promise<Map<string, { status: string }>>,
): Promise<string[]> {
  const files = (await readdir(root).catch(() => [] as string[])).filter((file) =>
    file.endsWith(RECORD_SUFFIX),
  )
  if (files.length === 0) return []
  const runIds = files.map((file) => file.slice(0, -RECORD_SUFFIX.length))
  const known = await statuses(runIds)
  const cleaned: string[] = []
  for (const runId of runIds) {
    const status = known.get(runId)?.status
    if (status !== undefined && !isTerminalRunStatus(status)) continue
    const file = placementRecordFile(root, runId)
    const record = parseRecord(await readFile(file, 'utf8').catch(() => ''))
    if (record) {
      await removePlacedFiles(record.workspace, record.placed)
      await removeExcludeBlock(record.workspace, record.marker)
    }
    await rm(file, { force: true })
    cleaned.push(runId)
  }
  return cleaned
}
