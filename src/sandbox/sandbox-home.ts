// The HOME a sandboxed agent gets: a directory of its own (kept per agent and workspace under the data
// dir, so the CLI's sessions carry over from turn to turn), holding only what its CLI
// needs from the user's home — its sign-in and settings files, copied (never bound), so nothing the agent
// does reaches the originals — and no ~/.ssh, no shell history, no other tool's credentials.
// The list per adapter follows what each adapter's sign-in check reads (adapters/defs/*.ts `probeAuth`,
// recorded by adapters/auth-inputs.ts), plus the settings file the CLI reads at start. Whole directories are
// never copied: a CLI's config dir also holds its sessions and history of every other project.
import { copyFile, mkdir, stat } from 'node:fs/promises'
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
