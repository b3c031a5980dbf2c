// Claude's file tools report what they wrote in the user line's `tool_use_result` (`type`, `filePath`,
// `structuredPatch`, `content`, `originalFile`); this turns that report into one `file-change`.
import type { FileChangeEvent } from '../../core/events.js'
import { isObject, type JsonObject, numberField, stringField, workspaceRelative } from './parse-helpers.js'

/** The tools whose success means a file in the workspace changed. */
export const CLAUDE_FILE_TOOLS: ReadonlySet<string> = new Set(['Write', 'Edit', 'MultiEdit', 'NotebookEdit'])

export function claudeFileChange(
  cwd: string,
  toolName: string,
  input: JsonObject | undefined,
  result: JsonObject | undefined,
): FileChangeEvent | undefined {
  const filePath =
    stringField(result, 'filePath') ??
    stringField(input, 'file_path') ??
    stringField(input, 'notebook_path') ??
    stringField(result, 'notebook_path')
  if (!filePath) return undefined
  const path = workspaceRelative(cwd, filePath)
  const kind = changeKind(toolName, input, result)
  const diff = patchDiff(path, kind, result)
  return { type: 'file-change', path, kind, ...(diff ? { diff } : {}) }
}

function changeKind(
  toolName: string,
  input: JsonObject | undefined,
  result: JsonObject | undefined,
): FileChangeEvent['kind'] {
  const reported = stringField(result, 'type')
  if (reported === 'create') return 'create'
  if (reported === 'update') return 'modify'
  const original = result?.originalFile
  if (result && 'originalFile' in result && original === null) return 'create'
  // Under --bare there is no Write: Edit with an empty old_string creates the file.
  if (toolName === 'Edit' && stringField(input, 'old_string') === '' && !original) return 'create'
  return 'modify'
}

function patchDiff(
  path: string,
  kind: FileChangeEvent['kind'],
  result: JsonObject | undefined,
): string | undefined {
  const hunks = Array.isArray(result?.structuredPatch) ? result.structuredPatch.filter(isObject) : []
  const from = kind === 'create' ? '/dev/null' : `a/${path}`
  if (hunks.length > 0) {
    const body = hunks.map((hunk) => {
      const lines = Array.isArray(hunk.lines) ? hunk.lines.filter((line) => typeof line === 'string') : []
      const header = `@@ -${range(hunk, 'oldStart', 'oldLines')} +${range(hunk, 'newStart', 'newLines')} @@`
      return [header, ...lines].join('\n')
    })
    return [`--- ${from}`, `+++ b/${path}`, ...body].join('\n') + '\n'
  }
  // A created file comes with an empty patch and its whole content.
  const content = stringField(result, 'content')
  if (kind !== 'create' || content === undefined || content === '') return undefined
  const lines = content.split('\n')
  if (lines.at(-1) === '') lines.pop()
  return [
    `--- /dev/null`,
    `+++ b/${path}`,
    `@@ -0,0 +1,${lines.length} @@`,
    ...lines.map((line) => `+${line}`),
  ]
    .join('\n')
    .concat('\n')
}

function range(hunk: JsonObject, startKey: string, countKey: string): string {
  return `${numberField(hunk, startKey) ?? 0},${numberField(hunk, countKey) ?? 0}`
}
