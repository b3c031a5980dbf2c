// Byte positions of values inside raw JSON text, so the proxy can splice into a request body without
// re-serializing it (re-serializing would change whitespace, key order of duplicates, escapes and big
// integers, and cost a full stringify). The text is known to be valid JSON: JSON.parse already accepted
// it, so the scanner only skips, it never validates. Strings are skipped with indexOf, not char by char.

/** A half-open range [start, end) of raw JSON text. */
export interface JsonSpan {
  start: number
  end: number
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const COMMA = 0x2c
const COLON = 0x3a

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09
}

function skipWhitespace(raw: string, index: number): number {
  while (index < raw.length && isWhitespace(raw.charCodeAt(index))) index++
  return index
}

/** The index just past the closing quote of the string whose opening quote is at `start`. */
function stringEnd(raw: string, start: number): number {
  let quote = raw.indexOf('"', start + 1)
  while (quote !== -1) {
    let backslashes = 0
    for (let index = quote - 1; raw.charCodeAt(index) === BACKSLASH; index--) backslashes++
    if (backslashes % 2 === 0) return quote + 1
    quote = raw.indexOf('"', quote + 1)
  }
  return raw.length
}

/** The index just past the value that starts at `start` (a non-whitespace character). */
function valueEnd(raw: string, start: number): number {
  const first = raw.charCodeAt(start)
  if (first === QUOTE) return stringEnd(raw, start)
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0
    let index = start
    while (index < raw.length) {
      const code = raw.charCodeAt(index)
      if (code === QUOTE) {
        index = stringEnd(raw, index)
        continue
      }
      if (code === OPEN_BRACE || code === OPEN_BRACKET) depth++
      else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
        depth--
        if (depth === 0) return index + 1
      }
      index++
    }
    return raw.length
  }
  // A number, true, false or null: it runs to the next delimiter.
  let index = start + 1
  while (index < raw.length) {
    const code = raw.charCodeAt(index)
    if (code === COMMA || code === CLOSE_BRACE || code === CLOSE_BRACKET || isWhitespace(code)) break
    index++
  }
  return index
}

/** The span of the whole top-level value (leading and trailing whitespace excluded). */
export function rootSpan(raw: string): JsonSpan {
  // Valid JSON holds one value: it ends where the trailing whitespace starts, with no scan through it.
  let end = raw.length
  while (end > 0 && isWhitespace(raw.charCodeAt(end - 1))) end--
  return { start: skipWhitespace(raw, 0), end }
}

/** A change to raw JSON text: [start, end) (character offsets) becomes `text`. */
export interface JsonEdit extends JsonSpan {
  text: string
}

/** `raw` with `edits` (in order, not overlapping) applied. */
export function applyEdits(raw: string, edits: readonly JsonEdit[]): string {
  let out = ''
  let at = 0
  for (const edit of edits) {
    out += raw.slice(at, edit.start) + edit.text
    at = edit.end
  }
  return out + raw.slice(at)
}

/**
 * `bytes` (the UTF-8 that `raw` was decoded from) with `edits` applied, without encoding the text again:
 * only the edits' own text is encoded, the rest is copied. When every character came from one byte (ASCII,
 * most model requests) offsets are the same in both; otherwise the edited text is encoded whole.
 */
export function applyEditsToBytes(raw: string, bytes: Buffer, edits: readonly JsonEdit[]): Buffer {
  if (edits.length === 0) return bytes
  if (bytes.length !== raw.length) return Buffer.from(applyEdits(raw, edits), 'utf8')
  // Sized first, then filled in place: one allocation, no intermediate buffers or views.
  let size = bytes.length
  for (const edit of edits) size += Buffer.byteLength(edit.text, 'utf8') - (edit.end - edit.start)
  const out = Buffer.allocUnsafe(size)
  let at = 0
  let written = 0
  for (const edit of edits) {
    written += bytes.copy(out, written, at, edit.start)
    written += out.write(edit.text, written, 'utf8')
    at = edit.end
  }
  bytes.copy(out, written, at)
  return out
}

function keyMatches(raw: string, keyStart: number, keyEnd: number, key: string): boolean {
  const length = keyEnd - keyStart - 2
  if (length === key.length) return raw.startsWith(key, keyStart + 1)
  // Only escapes make a key's raw text longer than the key it stands for.
  if (length < key.length) return false
  const keyText = raw.slice(keyStart, keyEnd)
  return keyText.includes('\\') && JSON.parse(keyText) === key
}

/**
 * The span of the value of member `key` of the object at `objectSpan`: the last one when the key is
 * duplicated, as JSON.parse does. Keys are compared after unescaping. Undefined when the span is not an
 * object or has no such member.
 */
export function memberSpan(raw: string, objectSpan: JsonSpan, key: string): JsonSpan | undefined {
  if (raw.charCodeAt(objectSpan.start) !== OPEN_BRACE) return undefined
  let found: JsonSpan | undefined
  let index = skipWhitespace(raw, objectSpan.start + 1)
  while (index < objectSpan.end && raw.charCodeAt(index) === QUOTE) {
    const keyEnd = stringEnd(raw, index)
    const matches = keyMatches(raw, index, keyEnd, key)
    index = skipWhitespace(raw, keyEnd)
    if (raw.charCodeAt(index) !== COLON) return found
    const start = skipWhitespace(raw, index + 1)
    const end = valueEnd(raw, start)
    if (matches) found = { start, end }
    index = skipWhitespace(raw, end)
    if (raw.charCodeAt(index) !== COMMA) break
    index = skipWhitespace(raw, index + 1)
  }
  return found
}

/** The span of the value of top-level member `key` (the last one when duplicated). */
export function valueSpan(raw: string, key: string): JsonSpan | undefined {
  return memberSpan(raw, rootSpan(raw), key)
}

/**
 * The span of element `index` of the array at `arraySpan`; undefined when it has no such element or is not
 * an array. Only the elements before it are scanned, and nothing is kept of them.
 */
export function elementSpan(raw: string, arraySpan: JsonSpan, index: number): JsonSpan | undefined {
  if (raw.charCodeAt(arraySpan.start) !== OPEN_BRACKET) return undefined
  let at = skipWhitespace(raw, arraySpan.start + 1)
  for (let element = 0; at < arraySpan.end && raw.charCodeAt(at) !== CLOSE_BRACKET; element++) {
    const end = valueEnd(raw, at)
    if (element === index) return { start: at, end }
    at = skipWhitespace(raw, end)
    if (raw.charCodeAt(at) !== COMMA) break
    at = skipWhitespace(raw, at + 1)
  }
  return undefined
}
