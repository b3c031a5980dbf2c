import path from 'node:path'
import { z } from 'zod'
import { describeError } from './file-state.js'
import type { ReadTool } from './types.js'
import { resolveInWorkspace } from './workspace-paths.js'
import { globToRegExp, isLiteralSegment, WALK_MAX_ENTRIES, walkWorkspace } from './workspace-walk.js'

export const GLOB_MAX_RESULTS = 500

const globInput = z.object({
  pattern: z
    .string()
    .min(1)
    .describe('Glob pattern relative to path, such as "src/**/*.ts", "*.json" or "test/**/*.{ts,tsx}".'),
  path: z
    .string()
    .default('.')
    .describe('Directory to search from, relative to the workspace root. Defaults to the root.'),
})

export type GlobInput = z.infer<typeof globInput>

/** Splits `src/agent/**\/*.ts` into the literal directory to start from and the pattern for the rest. */
export function splitLiteralPrefix(pattern: string): { prefix: string; rest: string } {
  const segments = pattern.split('/')
  let literal = 0
  while (literal < segments.length - 1 && isLiteralSegment(segments[literal]!)) literal++
  return { prefix: segments.slice(0, literal).join('/'), rest: segments.slice(literal).join('/') }
}

export const globTool: ReadTool<GlobInput> = {
  kind: 'read',
  name: 'glob',
  description:
    'Find files whose path matches a glob pattern (* within a directory, ** across directories, ?, ' +
    `[abc], {a,b}). Returns workspace-relative paths sorted by name, at most ${GLOB_MAX_RESULTS}. ` +
    '.git and node_modules are skipped.',
  inputSchema: globInput,
  async run(input, context) {
    const pattern = input.pattern.replace(/^(\.\/)+/, '')
    if (pattern.startsWith('/') || pattern.split('/').includes('..')) {
      return {
        content: `The pattern ${input.pattern} must be relative and stay inside the search path; put the directory in path and use a pattern such as "**/*.ts".`,
        isError: true,
      }
    }
    const { prefix, rest } = splitLiteralPrefix(pattern)
    const matcher = globToRegExp(rest)
    if (!matcher) {
      return {
        content: `The pattern ${input.pattern} is malformed (check its braces and brackets); call glob again with a valid pattern.`,
        isError: true,
      }
    }
    const where = input.path === '.' || input.path === './' ? 'the workspace' : input.path
    const resolved = await resolveInWorkspace(
      context.workspace,
      prefix ? path.join(input.path, prefix) : input.path,
    )
    if (!resolved.ok) return { content: resolved.message, isError: true }
    if (!resolved.exists) return { content: `No files match ${input.pattern} in ${where}.` }

    const results: string[] = []
    let visited = 0
    let stoppedEarly: string | undefined
    try {
      for await (const entry of walkWorkspace({
        directory: resolved.absolutePath,
        workspaceRoot: resolved.workspaceRoot,
        recursive: rest.includes('/') || rest.includes('**'),
        ...(context.signal && { signal: context.signal }),
      })) {
        if (++visited > WALK_MAX_ENTRIES) {
          stoppedEarly = `(The search stopped after ${WALK_MAX_ENTRIES} entries; narrow path or the pattern.)`
          break
        }
        if (entry.type === 'directory') continue
        const relativeToBase = path
          .relative(resolved.absolutePath, entry.absolutePath)
          .split(path.sep)
          .join('/')
        if (!matcher.test(relativeToBase)) continue
        if (results.length >= GLOB_MAX_RESULTS) {
          stoppedEarly = `(Showing the first ${GLOB_MAX_RESULTS} matches; use a narrower pattern or path to see others.)`
          break
        }
        results.push(entry.relativePath)
      }
    } catch (error) {
      return { content: `Could not search ${input.path}: ${describeError(error)}`, isError: true }
    }
    if (results.length === 0) {
      return {
        content: `No files match ${input.pattern} in ${where}.${stoppedEarly ? ` ${stoppedEarly}` : ''}`,
      }
    }
    results.sort()
    if (stoppedEarly) results.push(stoppedEarly)
    return { content: results.join('\n') }
  },
}
