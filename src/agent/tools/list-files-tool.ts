import { stat } from 'node:fs/promises'
import { z } from 'zod'
import { describeError } from './file-state.js'
import type { ReadTool } from './types.js'
import { resolveInWorkspace } from './workspace-paths.js'
import { walkWorkspace } from './workspace-walk.js'

/** Enough to orient in a project; beyond it the model should list a subdirectory instead. */
export const LIST_FILES_MAX_ENTRIES = 1000

const listFilesInput = z.object({
  path: z
    .string()
    .default('.')
    .describe('Directory to list, relative to the workspace root. Defaults to the root.'),
  recursive: z
    .boolean()
    .default(false)
    .describe(
      `List subdirectories too (up to ${LIST_FILES_MAX_ENTRIES} entries; .git and node_modules are skipped).`,
    ),
})

export type ListFilesInput = z.infer<typeof listFilesInput>

export const listFilesTool: ReadTool<ListFilesInput> = {
  kind: 'read',
  name: 'list_files',
  description:
    'List the entries of a directory in the workspace. Directories end with "/". Paths are relative to the ' +
    'workspace root. Set recursive to walk subdirectories; .git and node_modules are never listed.',
  inputSchema: listFilesInput,
  async run(input, context) {
    const resolved = await resolveInWorkspace(context.workspace, input.path, { mustExist: true })
    if (!resolved.ok) return { content: resolved.message, isError: true }
    const isDirectory = await stat(resolved.absolutePath).then(
      (stats) => stats.isDirectory(),
      () => false,
    )
    if (!isDirectory) {
      return {
        content: `${resolved.relativePath} is not a directory; use read_file to read a file.`,
        isError: true,
      }
    }
    const lines: string[] = []
    let truncated = false
    try {
      for await (const entry of walkWorkspace({
        directory: resolved.absolutePath,
        workspaceRoot: resolved.workspaceRoot,
        recursive: input.recursive,
        ...(context.signal && { signal: context.signal }),
      })) {
        if (lines.length >= LIST_FILES_MAX_ENTRIES) {
          truncated = true
          break
        }
        lines.push(entry.type === 'directory' ? `${entry.relativePath}/` : entry.relativePath)
      }
    } catch (error) {
      return { content: `Could not list ${input.path}: ${describeError(error)}`, isError: true }
    }
    if (lines.length === 0) {
      return {
        content:
          resolved.relativePath === '.' ? 'The workspace is empty.' : `${resolved.relativePath} is empty.`,
      }
    }
    if (truncated) {
      lines.push(
        `(Listing stopped at ${LIST_FILES_MAX_ENTRIES} entries; list a subdirectory, or use glob, to see the rest.)`,
      )
    }
    return { content: lines.join('\n') }
  },
}
