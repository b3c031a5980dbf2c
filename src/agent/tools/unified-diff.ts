// A small unified diff for proposals: what a person reads before approving a write. Lines are compared
// with their terminators, so a change of the final newline shows (as `\ No newline at end of file`),
// and the edit script is Myers' O(ND) algorithm after trimming the common prefix and suffix.

export interface UnifiedDiffOptions {
  /** Workspace-relative path, shown as `a/<path>` and `b/<path>`. */
  path: string
  /** The old content; null when the file does not exist yet (the header says /dev/null). */
  oldText: string | null
  /** The new content; null when the file is deleted. */
  newText: string | null
  /** Unchanged lines shown around each change. */
  context?: number
  /** The diff text is cut at a line boundary past this size, with a note saying so. */
  maxCharacters?: number
}

export interface UnifiedDiff {
  /** The diff text; empty when nothing changed. */
  text: string
  added: number
  removed: number
  truncated: boolean
}

const DEFAULT_CONTEXT = 3
const DEFAULT_MAX_CHARACTERS = 64_000
/**
 * Myers keeps one slice of its frontier per edit distance, about D² numbers in all. Past this budget
 * (an edit distance of about 2,000 lines) the middle is shown as one replacement: still a correct diff,
 * only not a minimal one, and computed in linear time.
 */
const MYERS_TRACE_BUDGET = 4_000_000

type OperationType = 'equal' | 'delete' | 'insert'

interface Operation {
  type: OperationType
  line: string
}

function splitLines(text: string): string[] {
  if (text === '') return []
  const lines = text.split('\n').map((line) => `${line}\n`)
  if (text.endsWith('\n')) lines.pop()
  else lines[lines.length - 1] = lines[lines.length - 1]!.slice(0, -1)
  return lines
}

/** The edit script from `a` to `b`, or null when it would cost more than the trace budget. */
function myers(a: readonly string[], b: readonly string[]): Operation[] | null {
  const n = a.length
  const m = b.length
  const max = n + m
  const offset = max + 1
  const frontier = new Int32Array(2 * max + 3)
  const trace: Int32Array[] = []
  let stored = 0
  for (let distance = 0; distance <= max; distance++) {
    stored += 2 * distance + 3
    if (stored > MYERS_TRACE_BUDGET) return null
    trace.push(frontier.slice(offset - distance - 1, offset + distance + 2))
    for (let diagonal = -distance; diagonal <= distance; diagonal += 2) {
      const down =
        diagonal === -distance ||
        (diagonal !== distance && frontier[offset + diagonal - 1]! < frontier[offset + diagonal + 1]!)
      let x = down ? frontier[offset + diagonal + 1]! : frontier[offset + diagonal - 1]! + 1
      let y = x - diagonal
      while (x < n && y < m && a[x] === b[y]) {
        x++
        y++
      }
      frontier[offset + diagonal] = x
      if (x >= n && y >= m) return backtrack(a, b, trace)
    }
  }
  return null
}

function backtrack(a: readonly string[], b: readonly string[], trace: readonly Int32Array[]): Operation[] {
  const reversed: Operation[] = []
  let x = a.length
  let y = b.length
  for (let distance = trace.length - 1; distance >= 0; distance--) {
    const frontier = trace[distance]!
    const at = (diagonal: number): number => frontier[diagonal + distance + 1]!
    const diagonal = x - y
    const down = diagonal === -distance || (diagonal !== distance && at(diagonal - 1) < at(diagonal + 1))
    const previousDiagonal = down ? diagonal + 1 : diagonal - 1
    const previousX = at(previousDiagonal)
    const previousY = previousX - previousDiagonal
    while (x > previousX && y > previousY) {
      reversed.push({ type: 'equal', line: a[x - 1]! })
      x--
      y--
    }
    if (distance > 0) {
      if (x === previousX) reversed.push({ type: 'insert', line: b[y - 1]! })
      else reversed.push({ type: 'delete', line: a[x - 1]! })
    }
    x = previousX
    y = previousY
  }
  return reversed.reverse()
}

function editScript(a: readonly string[], b: readonly string[]): Operation[] {
  let prefix = 0
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++
  let suffix = 0
  while (
    suffix < a.length - prefix &&
    suffix < b.length - prefix &&
    a[a.length - 1 - suffix] === b[b.length - 1 - suffix]
  ) {
    suffix++
  }
  const middleOld = a.slice(prefix, a.length - suffix)
  const middleNew = b.slice(prefix, b.length - suffix)
  const middle = myers(middleOld, middleNew) ?? [
    ...middleOld.map((line): Operation => ({ type: 'delete', line })),
    ...middleNew.map((line): Operation => ({ type: 'insert', line })),
  ]
  return [
    ...a.slice(0, prefix).map((line): Operation => ({ type: 'equal', line })),
    ...middle,
    ...a.slice(a.length - suffix).map((line): Operation => ({ type: 'equal', line })),
  ]
}

/** `start,count` as diff(1) prints it: a one-line range is just its line, an empty one names the line before. */
function formatRange(startIndex: number, count: number): string {
  if (count === 0) return `${startIndex},0`
  if (count === 1) return `${startIndex + 1}`
  return `${startIndex + 1},${count}`
}

function formatLine(operation: Operation): string[] {
  const prefix = operation.type === 'equal' ? ' ' : operation.type === 'delete' ? '-' : '+'
  if (operation.line.endsWith('\n')) return [`${prefix}${operation.line.slice(0, -1)}`]
  return [`${prefix}${operation.line}`, '\\ No newline at end of file']
}

/** Groups of operation indexes [start, end) that form hunks, changes closer than 2×context merged. */
function hunkRanges(operations: readonly Operation[], context: number): Array<[number, number]> {
  const ranges: Array<[number, number]> = []
  for (let index = 0; index < operations.length; index++) {
    if (operations[index]!.type === 'equal') continue
    const start = Math.max(0, index - context)
    let end = index + 1
    while (end < operations.length) {
      let nextChange = end
      while (nextChange < operations.length && operations[nextChange]!.type === 'equal') nextChange++
      if (nextChange === operations.length || nextChange - end > 2 * context) break
      end = nextChange + 1
    }
    ranges.push([start, Math.min(operations.length, end + context)])
    index = end - 1
  }
  return ranges
}

export function createUnifiedDiff(options: UnifiedDiffOptions): UnifiedDiff {
  const context = options.context ?? DEFAULT_CONTEXT
  const maxCharacters = options.maxCharacters ?? DEFAULT_MAX_CHARACTERS
  const operations = editScript(splitLines(options.oldText ?? ''), splitLines(options.newText ?? ''))
  const added = operations.filter((operation) => operation.type === 'insert').length
  const removed = operations.filter((operation) => operation.type === 'delete').length
  // Creating or deleting an empty file changes no line, but it is still a change worth a header.
  const fileAppearsOrGoes = (options.oldText === null) !== (options.newText === null)
  if (added === 0 && removed === 0 && !fileAppearsOrGoes)
    return { text: '', added, removed, truncated: false }

  const lines = [
    options.oldText === null ? '--- /dev/null' : `--- a/${options.path}`,
    options.newText === null ? '+++ /dev/null' : `+++ b/${options.path}`,
  ]
  // Line positions before each operation, so a hunk knows where it starts in both files.
  const oldPositions: number[] = []
  const newPositions: number[] = []
  let oldPosition = 0
  let newPosition = 0
  for (const operation of operations) {
    oldPositions.push(oldPosition)
    newPositions.push(newPosition)
    if (operation.type !== 'insert') oldPosition++
    if (operation.type !== 'delete') newPosition++
  }
  for (const [start, end] of hunkRanges(operations, context)) {
    const hunk = operations.slice(start, end)
    const oldCount = hunk.filter((operation) => operation.type !== 'insert').length
    const newCount = hunk.filter((operation) => operation.type !== 'delete').length
    lines.push(
      `@@ -${formatRange(oldPositions[start]!, oldCount)} +${formatRange(newPositions[start]!, newCount)} @@`,
      ...hunk.flatMap(formatLine),
    )
  }

  let size = 0
  for (let index = 0; index < lines.length; index++) {
    size += lines[index]!.length + 1
    if (size > maxCharacters && index > 1) {
      const kept = lines.slice(0, index)
      kept.push(
        `... diff truncated: ${lines.length - index} more lines not shown (the change itself is complete)`,
      )
      return { text: `${kept.join('\n')}\n`, added, removed, truncated: true }
    }
  }
  return { text: `${lines.join('\n')}\n`, added, removed, truncated: false }
}
