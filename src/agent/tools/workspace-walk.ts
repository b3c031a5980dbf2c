// Walking the workspace for list_files, glob and grep, and matching glob patterns. Node 20 has no
// fs.glob (it arrived in Node 22), so patterns are compiled to regular expressions here.
import type { Dirent } from 'node:fs'
import path from 'node:path'
import { listWorkspaceDirectory } from './workspace-fs.js'

/** Never descended into: version-control internals and installed dependencies are noise for a model. */
export const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set(['.git', 'node_modules'])

/** A bound on a walk, so a search over a huge tree answers in time even when little matches. */
export const WALK_MAX_ENTRIES = 100_000

export interface WalkEntry {
  /** Relative to the workspace root, with `/` separators. */
  relativePath: string
  absolutePath: string
  type: 'file' | 'directory' | 'symlink' | 'other'
}

export interface WalkOptions {
  /** Where the walk starts (a real, absolute directory inside the workspace). */
  directory: string
  workspaceRoot: string
  /** Descend into subdirectories. */
  recursive: boolean
  signal?: AbortSignal
}

function entryType(entry: Dirent): WalkEntry['type'] {
  if (entry.isSymbolicLink()) return 'symlink'
  if (entry.isDirectory()) return 'directory'
  if (entry.isFile()) return 'file'
  return 'other'
}

/**
 * Depth-first, sorted by name, so output is stable. Symlinks are reported but never followed: following
 * them could leave the workspace or loop. Unreadable directories are skipped rather than failing the walk.
 */
export async function* walkWorkspace(options: WalkOptions): AsyncGenerator<WalkEntry> {
  const pending = [options.directory]
  while (pending.length > 0) {
    if (options.signal?.aborted) return
    const directory = pending.pop()!
    let entries: Dirent[]
    try {
      // Through a verified descriptor: a directory swapped for a symlink mid-walk is not listed.
      const relativePath = path.relative(options.workspaceRoot, directory).split(path.sep).join('/')
      entries = await listWorkspaceDirectory({
        workspaceRoot: options.workspaceRoot,
        relativePath: relativePath === '' ? '.' : relativePath,
      })
    } catch {
      continue
    }
    entries.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0))
    const subdirectories: string[] = []
    for (const entry of entries) {
      const type = entryType(entry)
      if (type === 'directory' && SKIPPED_DIRECTORIES.has(entry.name)) continue
      const absolutePath = path.join(directory, entry.name)
      const relativePath = path.relative(options.workspaceRoot, absolutePath).split(path.sep).join('/')
      yield { relativePath, absolutePath, type }
      if (type === 'directory' && options.recursive) subdirectories.push(absolutePath)
    }
    // Reversed onto the stack so the first subdirectory is walked first.
    pending.push(...subdirectories.reverse())
  }
}

const GLOB_SPECIAL = /[*?[\]{}]/

/** True when the pattern segment is plain text with no glob syntax. */
export function isLiteralSegment(segment: string): boolean {
  return !GLOB_SPECIAL.test(segment)
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
}

/**
 * Compiles a glob (`*`, `?`, `**`, `[abc]`, `[!abc]`, `{a,b}`) into an anchored RegExp over `/`-separated
 * paths, or returns null when the pattern is malformed. `*` matches dotfiles too: a model asking for
 * `*.json` means every JSON file.
 */
export function globToRegExp(pattern: string): RegExp | null {
  let source = ''
  let braceDepth = 0
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index]!
    if (character === '*') {
      const atSegmentStart = index === 0 || pattern[index - 1] === '/'
      if (pattern[index + 1] === '*' && atSegmentStart) {
        const after = pattern[index + 2]
        if (after === '/') {
          source += '(?:[^/]*/)*'
          index += 2
          continue
        }
        if (after === undefined) {
          source += '.*'
          index += 1
          continue
        }
      }
      while (pattern[index + 1] === '*') index++
      source += '[^/]*'
    } else if (character === '?') {
      source += '[^/]'
    } else if (character === '[') {
      const close = pattern.indexOf(']', index + 2)
      if (close === -1) {
        source += '\\['
        continue
      }
      let body = pattern.slice(index + 1, close)
      const negated = body.startsWith('!') || body.startsWith('^')
      if (negated) body = body.slice(1)
      source += `[${negated ? '^' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`
      index = close
    } else if (character === '{') {
      braceDepth++
      source += '(?:'
    } else if (character === '}' && braceDepth > 0) {
      braceDepth--
      source += ')'
    } else if (character === ',' && braceDepth > 0) {
      source += '|'
    } else if (character === '\\' && index + 1 < pattern.length) {
      index++
      source += escapeRegExp(pattern[index]!)
    } else {
      source += escapeRegExp(character)
    }
  }
  if (braceDepth !== 0) return null
  try {
    return new RegExp(`^${source}$`)
  } catch {
    return null
  }
}
