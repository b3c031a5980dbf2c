import { describe, expect, it } from 'vitest'
import { readSse, type SseEvent } from './sse-reader.js'

function bodyOf(chunks: Array<string | Uint8Array>, onCancel?: () => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  let next = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[next]
      next += 1
      if (chunk === undefined) controller.close()
      else controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk)
    },
    cancel() {
      onCancel?.()
    },
  })
}

async function collect(chunks: Array<string | Uint8Array>): Promise<SseEvent[]> {
  const events: SseEvent[] = []
  for await (const event of readSse(bodyOf(chunks))) events.push(event)
  return events
}

describe('sse-reader', () => {
  it('splits events on blank lines with \\n, \\r\\n and lone \\r line ends', async () => {
    const events = await collect(['data: one\n\n', 'data: two\r\n\r\n', 'data: three\r\r'])
    expect(events.map((event) => event.data)).toEqual(['one', 'two', 'three'])
  })

  it('joins a \\r\\n split across two chunks without inventing an empty line', async () => {
    const events = await collect(['data: a\r', '\ndata: b\r', '\n\r', '\n'])
    expect(events).toEqual([{ event: undefined, data: 'a\nb' }])
  })

  it('joins multi-line data with \\n and reads the event name', async () => {
    const events = await collect(['event: message_start\ndata: {"a":\ndata: 1}\n\n'])
    expect(events).toEqual([{ event: 'message_start', data: '{"a":\n1}' }])
  })

  it('skips comment lines and unknown fields', async () => {
    const events = await collect([
      ': OPENROUTER PROCESSING\n\n',
      'id: 7\nretry: 10\n:keep-alive\ndata: x\n\n',
    ])
    expect(events).toEqual([{ event: undefined, data: 'x' }])
  })

  it('keeps a value without the optional space after the colon and a field without a colon', async () => {
    const events = await collect(['data:tight\ndata\n\n'])
    expect(events).toEqual([{ event: undefined, data: 'tight\n' }])
  })

  it('decodes a multi-byte character split across chunks', async () => {
    const bytes = new TextEncoder().encode('data: héllo ✓\n\n')
    const events = await collect([bytes.slice(0, 8), bytes.slice(8, 15), bytes.slice(15)])
    expect(events.map((event) => event.data)).toEqual(['héllo ✓'])
  })

  it('passes [DONE] through as data', async () => {
    const events = await collect(['data: {"x":1}\n\ndata: [DONE]\n\n'])
    expect(events.map((event) => event.data)).toEqual(['{"x":1}', '[DONE]'])
  })

  it('delivers a complete last event without its blank line at end of input', async () => {
    expect(await collect(['data: last\n'])).toEqual([{ event: undefined, data: 'last' }])
  })

  it('drops an unterminated last line at end of input', async () => {
    expect(await collect(['data: whole\n\ndata: {"trunc'])).toEqual([{ event: undefined, data: 'whole' }])
  })

  it('cancels the body when the reader stops early', async () => {
    let cancelled = false
    const body = bodyOf(['data: 1\n\n', 'data: 2\n\n', 'data: 3\n\n'], () => {
      cancelled = true
    })
    for await (const event of readSse(body)) {
      expect(event.data).toBe('1')
      break
    }
    expect(cancelled).toBe(true)
  })
})
