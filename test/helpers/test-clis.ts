// Where the pinned real agent CLIs are: `scripts/install-test-clis.mjs` installs them once into a cache
// outside the clone and prints the directory (it returns at once when they are already there).
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
let cached: string | undefined

/** The install directory (runs the installer the first time; that can take minutes when nothing is cached). */
export function testClisDir(): string {
  if (cached !== undefined) return cached
  const output = execFileSync(
    process.execPath,
    [path.join(repositoryRoot, 'scripts/install-test-clis.mjs')],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      timeout: 30 * 60 * 1000,
    },
  )
  const directory = output.trim().split('\n').at(-1)?.trim()
  if (!directory || !existsSync(path.join(directory, '.complete'))) {
    throw new Error(`install-test-clis.mjs printed no complete install directory: ${JSON.stringify(output)}`)
  }
  cached = directory
  return directory
}

/** `node_modules/.bin/<name>` of the main install (claude, codex, gemini, opencode, copilot). */
export function testCliBin(name: string): string {
  return path.join(testClisDir(), 'main', 'node_modules', '.bin', name)
}

/** OpenClaw's entry script. */
export function openclawScript(): string {
  return path.join(testClisDir(), 'openclaw', 'node_modules', 'openclaw', 'openclaw.mjs')
}

/** The Node 24 the installer fetched from the npm registry (its bin/node link may point at the staging dir). */
export function node24Binary(): string {
  const linked = path.join(testClisDir(), 'node24', 'bin', 'node')
  if (existsSync(linked)) return linked
  return path.join(
    testClisDir(),
    'node24',
    'node_modules',
    `node-${process.platform}-${process.arch}`,
    'bin',
    'node',
  )
}
