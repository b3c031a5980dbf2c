// OpenAI Chat Completions streams carry usage only when the request asks for it
// (`stream_options.include_usage`). The proxy needs usage for cost and budgets, so it asks on the client's
// behalf — and then hides the extra usage-only chunk from a client that never asked for it (some clients
// choke on a chunk with an empty `choices`). Both sides work on raw bytes: the request is spliced, the
// response is filtered event by event and passed on as soon as each event is complete.
import { type JsonEdit, memberSpan, rootSpan, valueSpan } from './json-spans.js'

type JsonObject = Record<string, unknown>

function asObject(value: unknown): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as JsonObject)
    : undefined
}

/**
 * For a streamed Chat Completions request that does not ask for usage, the edit that makes it ask;
 * otherwise undefined. Only the bytes that must change are touched.
 */
export function streamUsageEdit(raw: string, parsed: unknown): JsonEdit | undefined {
  const body = asObject(parsed)
  if (!body || body.stream !== true) return undefined
  const streamOptions = asObject(body.stream_options)
  if (streamOptions?.include_usage === true) return undefined

  const optionsSpan = valueSpan(raw, 'stream_options')
  if (!optionsSpan) {
    const at = rootSpan(raw).start + 1
    return { start: at, end: at, text: '"stream_options":{"include_usage":true},' }
  }
  // `null` or some other non-object: the whole value is replaced.
  if (!streamOptions) return { ...optionsSpan, text: '{"include_usage":true}' }
  const includeSpan = memberSpan(raw, optionsSpan, 'include_usage')
  if (includeSpan) return { ...includeSpan, text: 'true' }
  const separator = Object.keys(streamOptions).length > 0 ? ',' : ''
  const at = optionsSpan.start + 1
  return { start: at, end: at, text: `"include_usage":true${separator}` }
}

const LF_BOUNDARY = Buffer.from('\n\n')
const CRLF_BOUNDARY = Buffer.from('\n\r\n')
const USAGE_KEY = Buffer.from('"usage"')
const EMPTY = Buffer.alloc(0)

/** The index just past the last blank line (the end of the last complete event), or 0 when there is none. */
function completeLength(buffer: Buffer): number {
  const lf = buffer.lastIndexOf(LF_BOUNDARY)
  const crlf = buffer.lastIndexOf(CRLF_BOUNDARY)
  return Math.max(lf === -1 ? 0 : lf + 2, crlf === -1 ? 0 : crlf + 3)
}

/** Whether `"usage"` is followed by an object anywhere (every chunk carries `"usage":null` once opted in). */
function hasUsageObject(buffer: Buffer): boolean {
  for (let at = buffer.indexOf(USAGE_KEY); at !== -1; at = buffer.indexOf(USAGE_KEY, at + 1)) {
    let index = at + USAGE_KEY.length
    // Skip the colon and any whitespace around it.
    while (index < buffer.length && (buffer[index] === 0x3a || buffer[index]! <= 0x20)) index++
    if (buffer[index] === 0x7b) return true
  }
  return false
}

/** True for the event we added: data JSON with an empty `choices` and a non-null `usage`. */
function isUsageOnlyEvent(event: string): boolean {
  const data = event
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5))
    .join('\n')
  if (!data.includes('"usage"')) return false
  try {
    const chunk = asObject(JSON.parse(data))
    return Array.isArray(chunk?.choices) && chunk.choices.length === 0 && asObject(chunk.usage) !== undefined
  } catch {
    return false
  }
}

/** Splits complete events into the bytes to pass on, without the usage-only one. */
function withoutUsageEvent(events: Buffer): { out: Buffer; dropped: boolean } {
  const text = events.toString('utf8')
  const pattern = /\r?\n\r?\n/g
  let start = 0
  let match: RegExpExecArray | null
  while ((match = pattern.exec(text)) !== null) {
    const end = match.index + match[0].length
    if (isUsageOnlyEvent(text.slice(start, match.index))) {
      const before = Buffer.byteLength(text.slice(0, start))
      const after = Buffer.byteLength(text.slice(0, end))
      return { out: Buffer.concat([events.subarray(0, before), events.subarray(after)]), dropped: true }
    }
    start = end
  }
  return { out: events, dropped: false }
}

/**
 * A filter over the raw SSE bytes sent to the client that drops the one usage-only chunk. It keeps only
 * an incomplete trailing event; everything complete is returned at once. `end()` flushes the tail.
 */
export function createUsageChunkFilter(): { push(chunk: Buffer): Buffer; end(): Buffer } {
  let tail: Buffer = EMPTY
  let dropped = false

  return {
    push(chunk: Buffer): Buffer {
      const buffer = tail.length === 0 ? chunk : Buffer.concat([tail, chunk])
      if (dropped) {
        tail = EMPTY
        return buffer
      }
      const complete = completeLength(buffer)
      tail = complete === buffer.length ? EMPTY : Buffer.from(buffer.subarray(complete))
      const events = buffer.subarray(0, complete)
      if (!hasUsageObject(events)) return events
      const filtered = withoutUsageEvent(events)
      dropped = filtered.dropped
      return filtered.out
    },
    end(): Buffer {
      const rest = tail
      tail = EMPTY
      // A stream may end without the final blank line; its last event is still complete JSON.
      if (!dropped && isUsageOnlyEvent(rest.toString('utf8').trimEnd())) return EMPTY
      return rest
    },
  }
}
