import { z } from 'zod'
import { describeError, looksBinary, readFileState, refuseNonFile } from './file-state.js'
import type { ReadTool } from './types.js'
import { resolveInWorkspace } from './workspace-paths.js'

export const READ_FILE_DEFAULT_LIMIT = 2000
/** Longer lines are usually minified or generated; their tail rarely helps and eats the context. */
export const READ_FILE_MAX_LINE_CHARACTERS = 2000
/** One read never returns more than this, whatever the limit, so a single call cannot flood the context. */
export const READ_FILE_MAX_OUTPUT_CHARACTERS = 100_000

const readFileInput = z.object({
  path: z.string().describe('File to read, relative to the workspace root.'),
  offset: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      'Line number to start at (1 = the first line). Use it with limit to read a long file in parts.',
    ),
  limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(`How many lines to return at most (default ${READ_FILE_DEFAULT_LIMIT}).`),
})

export type ReadFileInput = z.infer<typeof readFileInput>

function truncateLine(line: string): string {
  if (line.length <= READ_FILE_MAX_LINE_CHARACTERS) return line
  return `${line.slice(0, READ_FILE_MAX_LINE_CHARACTERS)}… [line truncated, ${line.length} characters]`
}

export const readFileTool: ReadTool<ReadFileInput> = {
  kind: 'read',
  name: 'read_file',
  description:
    'Read a text file of the workspace. Each line is prefixed with its line number and a tab (the prefix ' +
    `is not part of the file). Returns up to ${READ_FILE_DEFAULT_LIMIT} lines; use offset and limit for ` +
    'longer files. Binary files are refused.',
  inputSchema: readFileInput,
  async run(input, context) {
    const resolved = await resolveInWorkspace(context.workspace, input.path, { mustExist: true })
    if (!resolved.ok) return { content: resolved.message, isError: true }
    let state
    try {
      state = await readFileState(resolved)
    } catch (error) {
      return { content: `Could not read ${resolved.relativePath}: ${describeError(error)}`, isError: true }
    }
    const refusal = refuseNonFile(state, resolved.relativePath)
    if (refusal) return { content: refusal, isError: true }
    if (state.kind !== 'file') return { content: `${resolved.relativePath} does not exist.`, isError: true }
    if (looksBinary(state.content)) {
      return {
        content: `${resolved.relativePath} is a binary file (${state.content.length} bytes); read_file only reads text.`,
        isError: true,
      }
    }
    const text = state.content.toString('utf8')
    if (text === '') return { content: `${resolved.relativePath} is empty.` }
    const lines = text.split('\n')
    if (text.endsWith('\n')) lines.pop()

    const start = (input.offset ?? 1) - 1
    if (start >= lines.length) {
      return {
        content: `${resolved.relativePath} has ${lines.length} lines; offset ${input.offset} is past the end. Use an offset from 1 to ${lines.length}.`,
        isError: true,
      }
    }
    const end = Math.min(lines.length, start + (input.limit ?? READ_FILE_DEFAULT_LIMIT))
    const width = String(end).length
    const output: string[] = []
    let size = 0
    let lastShown = start
    for (let index = start; index < end; index++) {
      const line = `${String(index + 1).padStart(width)}\t${truncateLine(lines[index]!)}`
      if (size + line.length + 1 > READ_FILE_MAX_OUTPUT_CHARACTERS && output.length > 0) break
      output.push(line)
      size += line.length + 1
      lastShown = index + 1
    }
    if (lastShown < lines.length) {
      output.push(
        `(Showing lines ${start + 1}-${lastShown} of ${lines.length}. Call read_file with offset ${lastShown + 1} to read more.)`,
      )
    }
    return { content: output.join('\n') }
  },
}
