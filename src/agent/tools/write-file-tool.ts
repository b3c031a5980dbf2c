import { stat } from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import {
  checkPrecondition,
  countLines,
  describeError,
  expectContent,
  looksBinary,
  MAX_FILE_BYTES,
  plural,
  readFileState,
  refuseNonFile,
} from './file-state.js'
import type { FileState } from './file-state.js'
import type { WriteTool } from './types.js'
import { ToolConflict } from './types.js'
import { createUnifiedDiff } from './unified-diff.js'
import { writeWorkspaceFile, type WorkspaceTarget } from './workspace-fs.js'
import { resolveInWorkspace } from './workspace-paths.js'

const writeFileInput = z.object({
  path: z
    .string()
    .describe(
      'File to create or overwrite, relative to the workspace root. Missing directories are created.',
    ),
  content: z.string().describe('The complete new content of the file.'),
})

export type WriteFileInput = z.infer<typeof writeFileInput>

/** The nearest existing ancestor must be a directory, or the file can never be created under it. */
async function blockingAncestor(absolutePath: string, workspaceRoot: string): Promise<string | undefined> {
  let current = path.dirname(absolutePath)
  while (current.startsWith(workspaceRoot)) {
    const stats = await stat(current).catch(() => undefined)
    if (stats)
      return stats.isDirectory() ? undefined : path.relative(workspaceRoot, current).split(path.sep).join('/')
    const parent = path.dirname(current)
    if (parent === current) return undefined
    current = parent
  }
  return undefined
}

async function currentState(target: WorkspaceTarget): Promise<FileState | string> {
  try {
    return await readFileState(target)
  } catch (error) {
    return describeError(error)
  }
}

export const writeFileTool: WriteTool<WriteFileInput> = {
  kind: 'write',
  name: 'write_file',
  description:
    'Create a file, or replace the whole content of an existing one. Prefer edit_file for changes to part ' +
    'of an existing file. The change is proposed to the user and made once approved.',
  inputSchema: writeFileInput,
  async propose(input, context) {
    const resolved = await resolveInWorkspace(context.workspace, input.path, { forWrite: true })
    if (!resolved.ok) return { content: resolved.message, isError: true }
    const shown = resolved.relativePath
    if (Buffer.byteLength(input.content) > MAX_FILE_BYTES) {
      return {
        content: `The content is over the ${MAX_FILE_BYTES / 1024 / 1024} MB limit of write_file; write a smaller file.`,
        isError: true,
      }
    }
    const state = await currentState(resolved)
    if (typeof state === 'string') return { content: `Could not read ${shown}: ${state}`, isError: true }
    const refusal = refuseNonFile(state, shown)
    if (refusal) return { content: refusal, isError: true }
    const newLines = countLines(input.content)

    if (state.kind === 'missing') {
      const blocker = await blockingAncestor(resolved.absolutePath, resolved.workspaceRoot)
      if (blocker) {
        return {
          content: `${blocker} is a file, so ${shown} cannot be created under it; choose another path.`,
          isError: true,
        }
      }
      const diff = createUnifiedDiff({ path: shown, oldText: null, newText: input.content })
      return {
        summary: `Create ${shown} (${plural(newLines, 'line')})`,
        diff: diff.text,
        classification: 'safe_create',
        precondition: { path: shown, sha256: null },
      }
    }
    if (state.kind !== 'file') return { content: `${shown} cannot be written.`, isError: true }
    // The same bytes again changes nothing: no proposal to decide (and nothing destructive about it).
    if (state.content.equals(Buffer.from(input.content))) {
      return { content: `${shown} already has exactly this content; nothing was written.` }
    }
    const precondition = { path: shown, sha256: state.sha256 }
    if (looksBinary(state.content)) {
      return {
        summary: `Overwrite binary file ${shown} (${state.content.length} bytes) with ${plural(newLines, 'line')} of text`,
        classification: 'destructive_update',
        precondition,
      }
    }
    const oldText = state.content.toString('utf8')
    const diff = createUnifiedDiff({ path: shown, oldText, newText: input.content })
    return {
      summary: `Overwrite ${shown} (${plural(newLines, 'line')}, was ${countLines(oldText)}; +${diff.added} −${diff.removed})`,
      ...(diff.text !== '' && { diff: diff.text }),
      classification: 'destructive_update',
      precondition,
    }
  },
  async apply(input, context, proposal) {
    const target = await checkPrecondition(context, input.path, proposal, 'write')
    const creating = target.state.kind === 'missing'
    const expected =
      target.state.kind === 'file' ? expectContent(target.relativePath, target.state.sha256, 'write') : null
    try {
      // Through the descriptor, never the path: a create is exclusive (a file that appeared since the check
      // is a conflict) and no symlink swapped into the path is followed (see workspace-fs.ts).
      await writeWorkspaceFile(target.target, input.content, expected, MAX_FILE_BYTES)
    } catch (error) {
      if (error instanceof ToolConflict) throw error
      return { content: `Could not write ${target.relativePath}: ${describeError(error)}`, isError: true }
    }
    const lines = plural(countLines(input.content), 'line')
    return { content: `${creating ? 'Created' : 'Overwrote'} ${target.relativePath} (${lines}).` }
  },
}
