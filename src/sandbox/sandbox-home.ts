// The HOME a sandboxed agent gets: a directory of its own (kept per agent and workspace under the data
// dir, so the CLI's sessions carry over from turn to turn), holding only what its CLI
// needs from the user's home — its sign-in and settings files, copied (never bound), so nothing the agent
// does reaches the originals — and no ~/.ssh, no shell history, no other tool's credentials.
// The list per adapter follows what each adapter's sign-in check reads (adapters/defs/*.ts `probeAuth`,
// recorded by adapters/auth-inputs.ts), plus the settings file the CLI reads at start. Whole directories are
// never copied: a CLI's config dir also holds its sessions and history of every other project.
import { createHash } from 'node:crypto'
import { copyFile, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'

/** Files (relative to HOME) copied into a sandboxed run's home when the profile uses the user's login. */
export const SANDBOX_HOME_FILES: Readonly<Record<string, readonly string[]>> = {
  'claude-code': ['.claude.json', '.claude/.credentials.json', '.claude/settings.json'],
  codex: ['.codex/auth.json', '.codex/config.toml'],
  gemini: ['.gemini/settings.json', '.gemini/oauth_creds.json', '.gemini/google_accounts.json'],
  opencode: ['.local/share/opencode/auth.json', '.config/opencode/opencode.json'],
  copilot: ['.copilot/config.json'],
  'cursor-agent': ['.cursor/cli-config.json'],
  openclaw: ['.openclaw/openclaw.json'],
  builtin: [],
}

/** Copied for every adapter: who commits (git identity), nothing else of git's config is secret-bearing. */
const COMMON_FILES = ['.gitconfig']

/**
 * Makes `home` (when missing) and copies the adapter's files into it (when `useLogin`); returns the directory and
 * the files copied (relative names), for the run's record.
 */
export async function prepareSandboxHome(options: {
  /** The sandbox home: per run, or kept per agent and workspace so a CLI's sessions carry over. */
  home: string
  adapterId: string
  userHome: string
  useLogin: boolean
}): Promise<{ home: string; copied: string[] }> {
  const home = options.home
  await mkdir(home, { recursive: true, mode: 0o700 })
  const wanted = [...COMMON_FILES, ...(options.useLogin ? (SANDBOX_HOME_FILES[options.adapterId] ?? []) : [])]
  const copied: string[] = []
  for (const relative of wanted) {
    const source = path.join(options.userHome, relative)
    const info = await stat(source).catch(() => null)
    if (!info?.isFile()) continue
    const target = path.join(home, relative)
    await mkdir(path.dirname(target), { recursive: true, mode: 0o700 })
    await copyFile(source, target)
    copied.push(relative)
  }
  return { home, copied }
}

const HOMES = 'sandbox-homes'

/**
 * The home kept for an agent in a working directory: `<data-dir>/sandbox-homes/<key>`, with `<key>.cwd`
 * beside it (outside what the agent can write) naming the directory, so the home can go when that does.
 */
export async function keptSandboxHome(dataDir: string, agent: string, cwd: string): Promise<string> {
  const key = createHash('sha256').update(`${agent}\0${cwd}`).digest('hex').slice(0, 24)
  const homes = path.join(dataDir, HOMES)
  await mkdir(homes, { recursive: true, mode: 0o700 })
  await writeFile(path.join(homes, `${key}.cwd`), cwd, { mode: 0o600 })
  return path.join(homes, key)
}

/**
 * Removes the kept homes whose working directory is gone (a removed workspace): after a removal and at
 * start-up. A home without its `.cwd` record (made before it existed) is left alone. Returns how many went.
 */
export async function pruneSandboxHomes(dataDir: string): Promise<number> {
  const homes = path.join(dataDir, HOMES)
  const entries = await readdir(homes).catch(() => [] as string[])
  let removed = 0
  for (const entry of entries) {
    if (!entry.endsWith('.cwd')) continue
    const record = path.join(homes, entry)
    const cwd = await readFile(record, 'utf8').catch(() => undefined)
    if (cwd === undefined || (await stat(cwd).catch(() => null))) continue
    await rm(path.join(homes, entry.slice(0, -'.cwd'.length)), { recursive: true, force: true })
    await rm(record, { force: true })
    removed++
  }
  return removed
}
