#!/usr/bin/env node
// Runtime code never pushes: the workspace is the only cross-run state. This check (run by `npm run static`)
// flags every line under src/ (tests there included) that invokes `git push`, unless that line or the one
// above carries `// hangar:allow-git-push: <reason>` with a non-empty reason.
//
// Caught, per line, outside comments: `git push` (or `git -C dir push`) in a string or shell command, and a
// quoted 'push' argv element (`['push'`, `, "push"`) on a line that mentions git (`'git'`, `runGit(`, …).
// Not caught, by design: a push spelled across lines or through variables, e.g. `git ${'push'}`.
//
// Usage: node scripts/check-no-git-push.mjs [ROOT]   (ROOT defaults to <repo>/src; paths print relative to cwd)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

export const MESSAGE =
  'git push invocation (runtime code never pushes: the workspace is the only cross-run state; allow with // hangar:allow-git-push: <reason>)'

const ALLOW = /\/\/\s*hangar:allow-git-push:\s*\S/
// `git push`, `git -C "$dir" push`, `git --no-pager push`: options (each with an optional value) between.
const SHELL_PUSH = /\bgit(?:\s+-[^\s]+(?:\s+[^\s-][^\s]*)?)*\s+push\b/
// A quoted push as an argv element: `['push'`, `, "push"`, `('push')`.
const ARGV_PUSH = /[[(,]\s*(['"`])push\1\s*[,\])]/
const MENTIONS_GIT = /git/i

/**
 * The text with comments blanked out (same length, newlines kept), so lines stay aligned and string
 * contents stay visible. A small lexer: strings, template literals, regex literals, line and block comments.
 */
export function stripComments(text) {
  let out = ''
  let index = 0
  let previous = '' // last significant code character, to tell a regex literal from a division
  const blank = (chunk) => chunk.replace(/[^\n]/g, ' ')
  while (index < text.length) {
    const char = text[index]
    const next = text[index + 1]
    if (char === '/' && next === '/') {
      const end = text.indexOf('\n', index)
      const stop = end === -1 ? text.length : end
      out += blank(text.slice(index, stop))
      index = stop
    } else if (char === '/' && next === '*') {
      const end = text.indexOf('*/', index + 2)
      const stop = end === -1 ? text.length : end + 2
      out += blank(text.slice(index, stop))
      index = stop
    } else if (char === "'" || char === '"' || char === '`') {
      const stop = stringEnd(text, index, char)
      out += text.slice(index, stop)
      index = stop
      previous = char
    } else if (char === '/' && (previous === '' || /[(,=:[!&|?{};+\-*%<>~^]/.test(previous))) {
      const stop = regexEnd(text, index)
      out += text.slice(index, stop)
      index = stop
      previous = '/'
    } else {
      out += char
      if (!/\s/.test(char)) previous = char
      index += 1
    }
  }
  return out
}

/** Index just past the string that opens at `start`; '…' and "…" end at the line's end at the latest. */
function stringEnd(text, start, quote) {
  let index = start + 1
  while (index < text.length) {
    const char = text[index]
    if (char === '\\') index += 2
    else if (char === quote) return index + 1
    else if (char === '\n' && quote !== '`') return index
    else index += 1
  }
  return text.length
}

/** Index just past the regex literal that opens at `start` (never past the line's end). */
function regexEnd(text, start) {
  let index = start + 1
  let inClass = false
  while (index < text.length) {
    const char = text[index]
    if (char === '\n') return index
    if (char === '\\') index += 2
    else {
      if (char === '[') inClass = true
      else if (char === ']') inClass = false
      else if (char === '/' && !inClass) return index + 1
      index += 1
    }
  }
  return text.length
}

/** The lines of `text` that invoke git push without an allow marker: `{ file, line, source }`, line 1-based. */
export function findGitPush(text, file) {
  const raw = text.split('\n')
  const code = stripComments(text).split('\n')
  const findings = []
  code.forEach((line, index) => {
    const invokes = SHELL_PUSH.test(line) || (ARGV_PUSH.test(line) && MENTIONS_GIT.test(line))
    if (!invokes) return
    if (ALLOW.test(raw[index]) || (index > 0 && ALLOW.test(raw[index - 1]))) return
    findings.push({ file, line: index + 1, source: raw[index].trim() })
  })
  return findings
}

function walk(directory) {
  return readdirSync(directory).flatMap((entry) => {
    const full = path.join(directory, entry)
    if (entry === 'node_modules' || entry === 'dist') return []
    return statSync(full).isDirectory() ? walk(full) : [full]
  })
}

/** Every finding under `root` (.ts, .js, .mjs, .cjs), with paths relative to `base`. */
export function scanDirectory(root, base = process.cwd()) {
  return walk(root)
    .filter((file) => /\.(ts|js|mjs|cjs)$/.test(file))
    .sort()
    .flatMap((file) => findGitPush(readFileSync(file, 'utf8'), path.relative(base, file)))
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
  const root = path.resolve(process.argv[2] ?? path.join(repo, 'src'))
  if (!existsSync(root)) {
    console.error(
      `check-no-git-push: ${root} does not exist (usage: node scripts/check-no-git-push.mjs [ROOT])`,
    )
    process.exit(2)
  }
  const findings = scanDirectory(root)
  for (const finding of findings) console.error(`${finding.file}:${finding.line}: ${MESSAGE}`)
  if (findings.length > 0) process.exitCode = 1
}
