#!/usr/bin/env node
// Static checks that keep the architecture honest (run by `npm test` through `npm run check`):
// - no git remote use in runtime code (the workspace is the only cross-run state; git push is
//   scripts/check-no-git-push.mjs's, line by line);
// - dependencies point inward (ARCHITECTURE.md): core imports nothing of ours and no Node I/O;
//   adapters and providers never import server or store; only main.ts imports server; main never imports cli;
// - the web UI imports nothing of ours but src/core;
// - no skipped, todo or focused tests;
// - files stay small (800 lines at most);
// - better-sqlite3 is loaded only by src/store/sqlite-driver.ts, which picks 12 or 13 for the running Node.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
const problems = []

function walk(directory) {
  let entries
  try {
    entries = readdirSync(directory)
  } catch {
    return []
  }
  return entries.flatMap((entry) => {
    const full = path.join(directory, entry)
    if (entry === 'node_modules' || entry === 'dist') return []
    return statSync(full).isDirectory() ? walk(full) : [full]
  })
}

const sources = ['src', 'test', 'web/src', 'scripts']
  .flatMap((folder) => walk(path.join(root, folder)))
  .filter((file) => /\.(ts|tsx|mjs|js)$/.test(file))
const relative = (file) => path.relative(root, file)

const IMPORT = /(?:^|\n)\s*(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g

function importsOf(text) {
  return [...text.matchAll(IMPORT)].map((match) => match[1] ?? match[2])
}

/** The src/ folder an import resolves into ('core', 'server', 'main.ts', …), or null when outside src. */
function targetArea(file, specifier) {
  if (!specifier.startsWith('.')) return null
  const resolved = path.relative(path.join(root, 'src'), path.resolve(path.dirname(file), specifier))
  if (resolved.startsWith('..')) return null
  return resolved.split(path.sep)[0].replace(/\.js$/, '.ts')
}

for (const file of sources) {
  const text = readFileSync(file, 'utf8')
  const name = relative(file)
  const lines = text.split('\n').length
  if (lines > 800) problems.push(`${name}: ${lines} lines (the cap is 800: split it by concern)`)
  if (
    name !== 'src/store/sqlite-driver.ts' &&
    (/(?:^|\n)\s*import\s+(?!type\b)[^'"]*?from\s+['"]better-sqlite3['"]/.test(text) ||
      /require\(\s*['"]better-sqlite3['"]\s*\)/.test(text))
  )
    problems.push(
      `${name}: loads better-sqlite3 itself (use openSqliteFile of src/store/sqlite-driver.ts: on Node 22+ the driver is better-sqlite3 13)`,
    )

  if (name.startsWith('src/') && !name.endsWith('.test.ts')) {
    if (/['"`]remote['"`]\s*,\s*['"`](add|set-url)/.test(text) || /git remote (add|set-url)/.test(text)) {
      problems.push(`${name}: configures a git remote (never use a git remote in runtime code)`)
    }
  }

  if (
    /\b(it|test|describe)\.(skip|todo|only)\(|\bx(it|describe)\(|\bf(it|describe)\(/.test(text) &&
    !name.startsWith('scripts/')
  ) {
    problems.push(`${name}: a skipped, todo or focused test (make it pass, or delete it with a reason)`)
  }

  // The browser never holds the loop or a key: the web UI reaches the daemon over HTTP only, and of our
  // code imports nothing but src/core (types and pure constants).
  if (name.startsWith('web/')) {
    for (const specifier of importsOf(text)) {
      const target = targetArea(file, specifier)
      if (target && target !== 'core')
        problems.push(`${name}: the web UI imports only src/core (${specifier})`)
    }
    continue
  }

  if (!name.startsWith('src/') || name.endsWith('.test.ts')) continue
  const area = name.split('/')[1]
  for (const specifier of importsOf(text)) {
    const target = targetArea(file, specifier)
    if (area === 'core') {
      if (/^(node:|fs$|child_process$|hono)/.test(specifier))
        problems.push(`${name}: core stays pure, but imports ${specifier}`)
      if (target && target !== 'core')
        problems.push(`${name}: core imports nothing of ours, but imports ${specifier}`)
    }
    if ((area === 'adapters' || area === 'providers') && (target === 'server' || target === 'store')) {
      problems.push(`${name}: ${area} must not import ${target} (${specifier})`)
    }
    if (target === 'server' && area !== 'server' && area !== 'main.ts') {
      problems.push(`${name}: only src/main.ts may import server (${specifier})`)
    }
    if (target === 'cli' && area !== 'cli' && area !== 'bin')
      problems.push(`${name}: only bin imports cli (${specifier})`)
  }
}

if (problems.length > 0) {
  console.error(
    `static checks: ${problems.length} problem(s)\n${problems.map((problem) => `  ${problem}`).join('\n')}`,
  )
  process.exit(1)
}
console.log(`static checks: ${sources.length} files ok`)
