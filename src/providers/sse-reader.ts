// A small Server-Sent Events reader (the WHATWG grammar, minus reconnection): lines end in `\n`, `\r\n`
// or a lone `\r`, possibly split across network chunks; `data:` lines of one event are joined with `\n`;
// lines starting with `:` are comments (keep-alives from OpenRouter and proxies) and are skipped; a blank
// line ends the event. `[DONE]` is passed through as data: ending the stream is the format's decision.

export interface SseEvent {
  /** The `event:` field, absent for the default `message` type. */
  event: string | undefined
  data: string
}

const LINE_BREAK = /\r\n|\r|\n/

class SseParser {
  #buffer = ''
  #data: string[] = []
  #event: string | undefined

  push(text: string): SseEvent[] {
    this.#buffer += text
    const events: SseEvent[] = []
    for (;;) {
      const match = LINE_BREAK.exec(this.#buffer)
      if (!match) break
      // A `\r` at the very end may be the first half of a `\r\n` still in flight.
      if (match[0] === '\r' && match.index === this.#buffer.length - 1) break
      const line = this.#buffer.slice(0, match.index)
      this.#buffer = this.#buffer.slice(match.index + match[0].length)
      const event = this.#line(line)
      if (event) events.push(event)
    }
    return events
  }

  /**
   * At end of input a complete last event is delivered even without its blank line (some servers close
   * right after it), but an unterminated last line is dropped: it may be a truncated chunk.
   */
  end(): SseEvent[] {
    const events: SseEvent[] = []
    if (this.#buffer.endsWith('\r')) events.push(...this.push('\n'))
    this.#buffer = ''
    const last = this.#line('')
    if (last) events.push(last)
    return events
  }

  #line(line: string): SseEvent | undefined {
    if (line === '') {
      if (this.#data.length === 0) {
        this.#event = undefined
        return undefined
      }
      const event = { event: this.#event, data: this.#data.join('\n') }
      this.#data = []
      this.#event = undefined
      return event
    }
    if (line.startsWith(':')) return undefined
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'data') this.#data.push(value)
    else if (field === 'event') this.#event = value
    return undefined
  }
}

/** Reads events until the body ends; stopping early (break, throw) cancels the body. */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader()
  // TextDecoder strips a leading BOM and, with `stream: true`, keeps multi-byte characters split
  // across chunks intact.
  const decoder = new TextDecoder()
  const parser = new SseParser()
  let finished = false
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      yield* parser.push(decoder.decode(value, { stream: true }))
    }
    yield* parser.push(decoder.decode())
    yield* parser.end()
    finished = true
  } finally {
    if (finished) reader.releaseLock()
    else await reader.cancel().catch(() => undefined)
  }
}
