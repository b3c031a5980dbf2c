#!/usr/bin/env node
// `npm start` builds only what changed since the last build: the daemon (tsc → dist/src, bundled to dist/bin) when anything it
// compiles from changed, the web UI (vite → dist/web) when the UI or what it imports changed. A full
// `npm run build` took 10–23 s on every start; with nothing changed this takes well under a second.
//
// How it knows: dist/.build-stamp.json records, per part, the newest modification time among its inputs
// as they were when that part's build began. A part is built again when its output is missing, when no
// stamp says it was built, or when an input (file or directory — a deleted file changes its directory)
// is newer than the stamp. A file changed while a build runs is newer than the stamp, so the next start
// builds again. `npm run build` always builds everything (and leaves a stamp behind).
//
// Usage: node scripts/build-if-changed.mjs [--force]   (`npm run build` is this with --force)
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const SKIPPED_DIRECTORIES = new Set(['node_modules', 'dist', '.git', 'coverage', 'test-artifacts'])

/** Each part: what it is built from, the output it must have, and the command that builds it. */
export const PARTS = {
  daemon: {
    inputs: ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'],
    output: 'dist/bin/hangar.js',
    // tsc to dist/src, then the CLI bundled to dist/bin.
    command: [process.execPath, ['scripts/build-daemon.mjs']],
  },
  web: {
    // The UI imports src/core (types and pure helpers), so a change there rebuilds it too.
    inputs: ['web', 'src/core', 'package.json', 'package-lock.json'],
    output: 'dist/web/index.html',
    command: ['node_modules/.bin/vite', ['build', '--config', 'web/vite.config.ts', '--logLevel', 'warn']],
  },
}

export const STAMP_FILE = 'dist/.build-stamp.json'

/** The newest mtime (ms) among `entry` and, for a directory, everything under it; 0 when it is absent. */
export function newestMtime(entry) {
  let stats
  try {
    stats = statSync(entry)
  } catch {
    return 0
  }
  let newest = stats.mtimeMs
  if (!stats.isDirectory()) return newest
  for (const child of readdirSync(entry)) {
    if (SKIPPED_DIRECTORIES.has(child)) continue
    newest = Math.max(newest, newestMtime(path.join(entry, child)))
  }
  return newest
}

/** The newest input mtime of each part, under `root`. */
export function inputTimes(root, parts = PARTS) {
  return Object.fromEntries(
    Object.entries(parts).map(([name, part]) => [
      name,
      Math.max(...part.inputs.map((input) => newestMtime(path.join(root, input)))),
    ]),
  )
}

export function readStamp(root) {
  try {
    const stamp = JSON.parse(readFileSync(path.join(root, STAMP_FILE), 'utf8'))
    return stamp && typeof stamp === 'object' ? stamp : {}
  } catch {
    return {}
  }
}

/**
 * The decision, on facts only: which parts to build. `times` are the inputs' newest mtimes now, `stamp`
 * what the last builds recorded, `outputs` whether each part's output exists.
 */
export function partsToBuild({ times, stamp, outputs, force = false }) {
  return Object.keys(times).filter(
    (name) => force || !outputs[name] || typeof stamp[name] !== 'number' || times[name] > stamp[name],
  )
}

/** Builds what changed under `root`; returns the parts it built. */
export function buildIfChanged(root, { force = false, run = defaultRun, log = () => {} } = {}) {
  const times = inputTimes(root)
  const stamp = readStamp(root)
  const outputs = Object.fromEntries(
    Object.entries(PARTS).map(([name, part]) => [name, existsSync(path.join(root, part.output))]),
  )
  const parts = partsToBuild({ times, stamp, outputs, force })
  for (const name of parts) {
    log(`building ${name} (sources changed since the last build)`)
    const [command, args] = PARTS[name].command
    run(command, args, root)
    // Written after each part, so a failure in the next one keeps this one's stamp.
    mkdirSync(path.dirname(path.join(root, STAMP_FILE)), { recursive: true })
    writeFileSync(
      path.join(root, STAMP_FILE),
      `${JSON.stringify({ ...readStamp(root), [name]: times[name] }, null, 2)}\n`,
    )
  }
  return parts
}

function defaultRun(command, args, cwd) {
  execFileSync(path.resolve(cwd, command), args, { cwd, stdio: 'inherit' })
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
  try {
    buildIfChanged(root, {
      force: process.argv.includes('--force'),
      log: (line) => process.stderr.write(`${line}\n`),
    })
  } catch (error) {
    process.stderr.write(`hangar: error: the build failed; fix the errors above and run npm start again\n`)
    process.exitCode = typeof error?.status === 'number' ? error.status : 1
  }
}
