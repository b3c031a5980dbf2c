import { z } from 'zod'
import {
  checkPrecondition,
  countLines,
  describeError,
  expectContent,
  looksBinary,
  MAX_FILE_BYTES,
  plural,
  loadExistingFile,
} from './file-state.js'
import type { WriteTool } from './types.js'
import { ToolConflict } from './types.js'
import { createUnifiedDiff } from './unified-diff.js'
import { deleteWorkspaceFile } from './workspace-fs.js'

const deleteFileInput = z.object({
  path: z.string().describe('File to delete, relative to the workspace root.'),
})

export type DeleteFileInput = z.infer<typeof deleteFileInput>

/**
 * Deletes the file the path resolves to. A symlink inside the workspace is followed like every other
 * path, so deleting through one removes its target; a link pointing out of the workspace is refused.
 */
export const deleteFileTool: WriteTool<DeleteFileInput> = {
  kind: 'write',
  name: 'delete_file',
  description:
    'Delete one file (not a directory). The deletion is proposed to the user and made once approved.',
  inputSchema: deleteFileInput,
  async propose(input, context) {
    const loaded = await loadExistingFile(context, input.path, {
      missing: 'does not exist; nothing to delete.',
      directory: 'is a directory; delete_file deletes one file at a time.',
    })
    if (!loaded.ok) return loaded.output
    const { shown, state } = loaded
    const precondition = { path: shown, sha256: state.sha256 }
    if (looksBinary(state.content)) {
      return {
        summary: `Delete binary file ${shown} (${state.content.length} bytes)`,
        classification: 'destructive_delete',
        precondition,
      }
    }
    const oldText = state.content.toString('utf8')
    return {
      summary: `Delete ${shown} (${plural(countLines(oldText), 'line')})`,
      diff: createUnifiedDiff({ path: shown, oldText, newText: null }).text,
      classification: 'destructive_delete',
      precondition,
    }
  },
  async apply(input, context, proposal) {
    const target = await checkPrecondition(context, input.path, proposal, 'deletion')
    if (target.state.kind !== 'file')
      return { content: `${target.relativePath} is not a file.`, isError: true }
    try {
      // By name in the verified parent directory, never through a path a swapped symlink could redirect.
      await deleteWorkspaceFile(
        target.target,
        expectContent(target.relativePath, target.state.sha256, 'deletion'),
        MAX_FILE_BYTES,
      )
    } catch (error) {
      if (error instanceof ToolConflict) throw error
      return { content: `Could not delete ${target.relativePath}: ${describeError(error)}`, isError: true }
    }
    return { content: `Deleted ${target.relativePath}.` }
  },
}
