// One short line for a tool call, as Claude Code shows its own: `Bash(npm test)`, `Write(hello.txt)`.
// Claude's tools already have such names; Codex reports items (`command_execution`, `file_change`, …)
// whose input is JSON, so those are said in the same words here. The events keep what the agent sent.
import path from 'node:path'

/** One line of at most `limit` characters, whitespace folded. */
export function brief(value: unknown, limit = 80): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  const single = (text ?? '').replace(/\s+/g, ' ').trim()
  return single.length > limit ? `${single.slice(0, limit - 1)}…` : single
}

/** `bash -lc 'npm test'` (how Codex wraps every command) → `npm test`. */
export function unwrapShell(command: string): string {
  const wrapped = /^(?:\S*\/)?(?:ba|z)?sh\s+-l?c\s+(['"])([\s\S]*)\1$/.exec(command.trim())
  if (!wrapped) return command
  return wrapped[1] === "'" ? wrapped[2]!.replace(/'\\''/g, "'") : wrapped[2]!.replace(/\\(["\\$`])/g, '$1')
}

function shown(file: string, cwd: string | undefined): string {
  if (!cwd || !path.isAbsolute(file)) return file
  const relative = path.relative(cwd, file)
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file
}

const CHANGE_VERBS: Record<string, string> = { add: 'Write', update: 'Edit', delete: 'Delete' }

/** Codex's own items, named as Claude names the same tools. */
function codexSummary(name: string, input: Record<string, unknown>, cwd: string | undefined): string | null {
  switch (name) {
    case 'command_execution':
      return typeof input.command === 'string' ? `Bash(${brief(unwrapShell(input.command), 60)})` : null
    case 'file_change': {
      if (!Array.isArray(input.changes)) return null
      const changes = input.changes.filter(
        (change): change is { path: string; kind?: unknown } =>
          typeof change === 'object' && change !== null && typeof change.path === 'string',
      )
      if (changes.length === 0) return null
      const kinds = new Set(changes.map((change) => String(change.kind ?? 'update')))
      const verb = kinds.size === 1 ? (CHANGE_VERBS[[...kinds][0]!] ?? 'Edit') : 'Edit'
      return `${verb}(${brief(changes.map((change) => shown(change.path, cwd)).join(', '), 60)})`
    }
    case 'web_search':
      return typeof input.query === 'string' ? `WebSearch(${brief(input.query, 60)})` : null
    case 'todo_list':
      return Array.isArray(input.items) ? `TodoWrite(${input.items.length} items)` : null
    default:
      return null
  }
}

/** The line `hangar run` prints for a tool call (after ⏺). */
export function toolCallSummary(name: string, input: unknown, cwd?: string): string {
  if (input && typeof input === 'object' && !Array.isArray(input)) {
    const record = input as Record<string, unknown>
    const codex = codexSummary(name, record, cwd)
    if (codex) return codex
    for (const key of ['file_path', 'filePath', 'path', 'command', 'cmd', 'pattern', 'url', 'query']) {
      const value = record[key]
      if (typeof value === 'string')
        return `${name}(${brief(key.endsWith('ath') ? shown(value, cwd) : value, 60)})`
    }
  }
  return `${name}(${brief(input, 60)})`
}
