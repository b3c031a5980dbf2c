import { stat } from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { describeError, looksBinary, readFileState } from './file-state.js'
import type { ReadTool } from './types.js'
import { resolveInWorkspace } from './workspace-paths.js'
import type { WalkEntry } from './workspace-walk.js'
import { globToRegExp, WALK_MAX_ENTRIES, walkWorkspace } from './workspace-walk.js'

export const GREP_MAX_MATCHES = 200
/** Matching lines are shown up to this length; a minified file would otherwise fill the answer. */
export const GREP_MAX_LINE_CHARACTERS = 300

const grepInput = z.object({
  pattern: z
    .string()
    .min(1)
    .describe(
      'JavaScript regular expression searched for in each line, such as "function\\s+main" or "TODO".',
    ),
  path: z
    .string()
    .default('.')
    .describe('File or directory to search, relative to the workspace root. Defaults to the root.'),
  glob: z
    .string()
    .optional()
    .describe(
      'Only search files matching this glob: "*.ts" matches file names anywhere, "src/**/*.ts" whole paths.',
    ),
  case_insensitive: z.boolean().default(false).describe('Ignore letter case.'),
})

export type GrepInput = z.infer<typeof grepInput>

/** A file-name glob ("*.ts") applies at any depth, the way ripgrep's --glob does; a path glob to the whole path. */
function fileFilter(
  glob: string | undefined,
  searchRoot: string,
): ((entry: WalkEntry) => boolean) | null | undefined {
  if (glob === undefined) return undefined
  const matcher = globToRegExp(glob.replace(/^(\.\/)+/, ''))
  if (!matcher) return null
  if (!glob.includes('/')) return (entry) => matcher.test(path.basename(entry.absolutePath))
  return (entry) => matcher.test(path.relative(searchRoot, entry.absolutePath).split(path.sep).join('/'))
}

function showLine(line: string): string {
  const trimmed = line.endsWith('\r') ? line.slice(0, -1) : line
  if (trimmed.length <= GREP_MAX_LINE_CHARACTERS) return trimmed
  return `${trimmed.slice(0, GREP_MAX_LINE_CHARACTERS)}…`
}

export const grepTool: ReadTool<GrepInput> = {
  kind: 'read',
  name: 'grep',
  description:
    'Search file contents with a regular expression. Returns matching lines as "path:line: text", at most ' +
    `${GREP_MAX_MATCHES}. Binary files, files over 10 MB, symlinks, .git and node_modules are skipped.`,
  inputSchema: grepInput,
  async run(input, context) {
    let regex: RegExp
    try {
      regex = new RegExp(input.pattern, input.case_insensitive ? 'i' : '')
    } catch (error) {
      return {
        content: `The pattern is not a valid regular expression (${describeError(error)}); escape special characters such as ( [ { . * + ? with a backslash and call grep again.`,
        isError: true,
      }
    }
    const resolved = await resolveInWorkspace(context.workspace, input.path, { mustExist: true })
    if (!resolved.ok) return { content: resolved.message, isError: true }
    const filter = fileFilter(input.glob, resolved.absolutePath)
    if (filter === null) {
      return {
        content: `The glob ${input.glob} is malformed; fix its braces or brackets, or leave it out.`,
        isError: true,
      }
    }

    const results: string[] = []
    let filesSearched = 0
    let visited = 0
    let note: string | undefined
    // Note: a pathological pattern can still backtrack for a long time on one line; JavaScript offers no
    // way to interrupt a running RegExp, and the per-line cap keeps the common cases fast.
    const searchFile = async (entry: WalkEntry): Promise<void> => {
      const state = await readFileState({
        workspaceRoot: resolved.workspaceRoot,
        relativePath: entry.relativePath,
      }).catch(() => undefined)
      if (state?.kind !== 'file' || looksBinary(state.content)) return
      filesSearched++
      const lines = state.content.toString('utf8').split('\n')
      for (let index = 0; index < lines.length; index++) {
        if (!regex.test(lines[index]!)) continue
        if (results.length >= GREP_MAX_MATCHES) {
          note = `(Showing the first ${GREP_MAX_MATCHES} matches; narrow the pattern, path or glob to see others.)`
          return
        }
        results.push(`${entry.relativePath}:${index + 1}: ${showLine(lines[index]!)}`)
      }
    }

    try {
      if (!(await stat(resolved.absolutePath)).isDirectory()) {
        await searchFile({ ...resolved, type: 'file' })
      } else {
        for await (const entry of walkWorkspace({
          directory: resolved.absolutePath,
          workspaceRoot: resolved.workspaceRoot,
          recursive: true,
          ...(context.signal && { signal: context.signal }),
        })) {
          if (++visited > WALK_MAX_ENTRIES) {
            note = `(The search stopped after ${WALK_MAX_ENTRIES} entries; narrow path or glob.)`
            break
          }
          // Symlinks are not followed: the target may be outside the workspace (read it by its path).
          if (entry.type !== 'file' || (filter && !filter(entry))) continue
          await searchFile(entry)
          if (note) break
        }
      }
    } catch (error) {
      return { content: `Could not search ${input.path}: ${describeError(error)}`, isError: true }
    }
    if (results.length === 0) {
      const searched = `${filesSearched} file${filesSearched === 1 ? '' : 's'} searched`
      return {
        content: `No matches for /${input.pattern}/ in ${resolved.relativePath === '.' ? 'the workspace' : resolved.relativePath} (${searched}).${note ? ` ${note}` : ''}`,
      }
    }
    if (note) results.push(note)
    return { content: results.join('\n') }
  },
}
