import { z } from 'zod'
import {
  checkPrecondition,
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
import { writeWorkspaceFile } from './workspace-fs.js'

const editFileInput = z.object({
  path: z.string().describe('File to edit, relative to the workspace root.'),
  old_string: z
    .string()
    .min(1)
    .describe(
      'The exact text to replace, including whitespace and indentation. It must occur exactly once unless replace_all is true.',
    ),
  new_string: z.string().describe('The text to put in its place.'),
  replace_all: z
    .boolean()
    .default(false)
    .describe('Replace every occurrence of old_string instead of exactly one.'),
})

export type EditFileInput = z.infer<typeof editFileInput>

type EditResult = { ok: true; newText: string; replacements: number } | { ok: false; message: string }

function occurrences(text: string, search: string): number {
  let count = 0
  for (let index = text.indexOf(search); index !== -1; index = text.indexOf(search, index + search.length))
    count++
  return count
}

/**
 * The edit as a pure function of the file's text, so apply (on the same content, checked by hash)
 * makes exactly the change the proposal showed. Uses split/join, never String.replace, because `$&`
 * and friends in new_string must stay literal.
 */
export function computeEdit(text: string, input: EditFileInput, shownPath: string): EditResult {
  if (input.old_string === input.new_string) {
    return {
      ok: false,
      message:
        'old_string and new_string are identical, so there is nothing to change; give the new text in new_string.',
    }
  }
  let oldString = input.old_string
  let newString = input.new_string
  let count = occurrences(text, oldString)
  // Models write "\n"; a file with Windows line endings holds "\r\n". Match it in the file's own style.
  if (count === 0 && text.includes('\r\n') && oldString.includes('\n') && !oldString.includes('\r')) {
    oldString = oldString.replaceAll('\n', '\r\n')
    newString = newString.replaceAll('\n', '\r\n')
    count = occurrences(text, oldString)
  }
  if (count === 0) {
    return {
      ok: false,
      message: `old_string was not found in ${shownPath}. Read the file again and copy the exact text, including whitespace and indentation.`,
    }
  }
  if (count > 1 && !input.replace_all) {
    return {
      ok: false,
      message: `old_string occurs ${count} times in ${shownPath}; include more surrounding lines so it matches exactly once, or set replace_all to true to change every occurrence.`,
    }
  }
  if (input.replace_all)
    return { ok: true, newText: text.split(oldString).join(newString), replacements: count }
  const index = text.indexOf(oldString)
  return {
    ok: true,
    newText: text.slice(0, index) + newString + text.slice(index + oldString.length),
    replacements: 1,
  }
}

export const editFileTool: WriteTool<EditFileInput> = {
  kind: 'write',
  name: 'edit_file',
  description:
    'Replace exact text in a file: old_string must match the file exactly (read the file first) and occur ' +
    'once, unless replace_all is true. The change is proposed to the user and made once approved.',
  inputSchema: editFileInput,
  async propose(input, context) {
    const loaded = await loadExistingFile(context, input.path, {
      missing: 'does not exist; use write_file to create it.',
    })
    if (!loaded.ok) return loaded.output
    const { shown, state } = loaded
    if (looksBinary(state.content)) {
      return { content: `${shown} is a binary file; edit_file only edits text.`, isError: true }
    }
    const oldText = state.content.toString('utf8')
    const edit = computeEdit(oldText, input, shown)
    if (!edit.ok) return { content: edit.message, isError: true }
    const diff = createUnifiedDiff({ path: shown, oldText, newText: edit.newText })
    return {
      summary: `Edit ${shown} (${plural(edit.replacements, 'replacement')}, +${diff.added} −${diff.removed} lines)`,
      diff: diff.text,
      classification: 'safe_update',
      precondition: { path: shown, sha256: state.sha256 },
    }
  },
  async apply(input, context, proposal) {
    const target = await checkPrecondition(context, input.path, proposal, 'edit')
    if (target.state.kind !== 'file')
      return { content: `${target.relativePath} is not a file.`, isError: true }
    const edit = computeEdit(target.state.content.toString('utf8'), input, target.relativePath)
    if (!edit.ok) return { content: edit.message, isError: true }
    try {
      await writeWorkspaceFile(
        target.target,
        edit.newText,
        expectContent(target.relativePath, target.state.sha256, 'edit'),
        MAX_FILE_BYTES,
      )
    } catch (error) {
      if (error instanceof ToolConflict) throw error
      return { content: `Could not write ${target.relativePath}: ${describeError(error)}`, isError: true }
    }
    return { content: `Edited ${target.relativePath} (${plural(edit.replacements, 'replacement')}).` }
  },
}
