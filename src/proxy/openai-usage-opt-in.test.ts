import { describe, expect, it } from 'vitest'
import { applyEdits } from './json-spans.js'
import { createUsageChunkFilter, streamUsageEdit } from './openai-usage-opt-in.js'

/** The request as it goes upstream, and whether usage was asked for on the client's behalf. */
function optIn(raw: string) {
  const edit = streamUsageEdit(raw, JSON.parse(raw))
  return edit ? { raw: applyEdits(raw, [edit]), added: true } : { raw, added: false }
}

describe('streamUsageEdit', () => {
  it('inserts stream_options after the opening brace when there are none', () => {
    const raw = ' {\n  "model": "gpt-5", "stream": true, "seed": 12345678901234567890,\n  "messages": []\n}'
    const result = optIn(raw)
    expect(result.added).toBe(true)
    expect(result.raw).toBe(` {"stream_options":{"include_usage":true},${raw.slice(2)}`)
    expect(JSON.parse(result.raw).stream_options).toEqual({ include_usage: true })
  })

  it('turns include_usage false into true, touching only that value', () => {
    const raw = '{"stream": true, "stream_options": {"include_obfuscation": false, "include_usage" : false}}'
    const result = optIn(raw)
    expect(result).toEqual({
      raw: raw.replace('"include_usage" : false', '"include_usage" : true'),
      added: true,
    })
  })

  it('adds include_usage to stream_options that lack it, and replaces a null', () => {
    const other = optIn('{"stream":true,"stream_options":{"include_obfuscation":false}}')
    expect(other).toEqual({
      raw: '{"stream":true,"stream_options":{"include_usage":true,"include_obfuscation":false}}',
      added: true,
    })
    expect(optIn('{"stream":true,"stream_options":{ }}').raw).toBe(
      '{"stream":true,"stream_options":{"include_usage":true }}',
    )
    expect(optIn('{"stream":true,"stream_options":null}').raw).toBe(
      '{"stream":true,"stream_options":{"include_usage":true}}',
    )
  })

  it('leaves a request that already asks for usage, or does not stream, unchanged', () => {
    const asks = '{"stream":true,"stream_options":{"include_usage":true}}'
    expect(optIn(asks)).toEqual({ raw: asks, added: false })
    const notStreamed = '{"model":"gpt-5","messages":[]}'
    expect(optIn(notStreamed)).toEqual({ raw: notStreamed, added: false })
  })
})

const chunk = (choices: unknown[], usage: unknown = null) =>
  JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1741569952,
    model: 'gpt-4.1',
    choices,
    usage,
  })

const delta = (content: string, finish: string | null = null) => [
  { index: 0, delta: { content }, logprobs: null, finish_reason: finish },
]

const USAGE = {
  prompt_tokens: 19,
  completion_tokens: 10,
  total_tokens: 29,
  prompt_tokens_details: { cached_tokens: 0 },
}

function stream(newline: string): { full: string; expected: string } {
  const events = [
    `data: ${chunk(delta('H\u00e9llo \u{1F680} "usage":{'))}`,
    `data: ${chunk(delta('', 'stop'))}`,
    `: keep-alive comment`,
    `data: ${chunk([], USAGE)}`,
    'data: [DONE]',
  ].map((event) => `${event}${newline}${newline}`)
  return { full: events.join(''), expected: events.filter((_, index) => index !== 3).join('') }
}

function filterAll(chunks: Buffer[]): { parts: Buffer[]; output: string } {
  const filter = createUsageChunkFilter()
  const parts = chunks.map((part) => filter.push(part))
  parts.push(filter.end())
  return { parts, output: Buffer.concat(parts).toString('utf8') }
}

describe('createUsageChunkFilter', () => {
  for (const [name, newline] of [
    ['LF', '\n'],
    ['CRLF', '\r\n'],
  ] as const) {
    it(`drops only the usage chunk when fed one byte at a time (${name})`, () => {
      const { full, expected } = stream(newline)
      const bytes = Buffer.from(full)
      const { output } = filterAll(
        Array.from({ length: bytes.length }, (_, index) => bytes.subarray(index, index + 1)),
      )
      expect(output).toBe(expected)
      expect(output).not.toMatch(/"usage":\{"prompt_tokens/)
      expect(output).toContain('data: [DONE]')
    })
  }

  it('drops only the usage chunk for every cut of the stream in two', () => {
    const { full, expected } = stream('\n')
    const bytes = Buffer.from(full)
    for (let at = 0; at <= bytes.length; at++)
      expect(filterAll([bytes.subarray(0, at), bytes.subarray(at)]).output).toBe(expected)
  })

  it('passes each event on as soon as it is complete, keeping only a partial tail', () => {
    const first = `data: ${chunk(delta('one'))}\n\n`
    const second = `data: ${chunk(delta('two'))}\n\n`
    const filter = createUsageChunkFilter()
    expect(filter.push(Buffer.from(first + second.slice(0, 10))).toString()).toBe(first)
    expect(filter.push(Buffer.from(second.slice(10))).toString()).toBe(second)
    expect(filter.push(Buffer.from('data: [DO')).toString()).toBe('')
    expect(filter.end().toString()).toBe('data: [DO')
  })

  it('keeps usage that rides on a chunk with choices', () => {
    const withChoices = `data: ${chunk(delta('x', 'stop'), USAGE)}\n\ndata: [DONE]\n\n`
    expect(filterAll([Buffer.from(withChoices)]).output).toBe(withChoices)
  })

  it('drops a usage chunk left unterminated at the end', () => {
    const body = `data: ${chunk(delta('x'))}\n\ndata: ${chunk([], USAGE)}`
    expect(filterAll([Buffer.from(body)]).output).toBe(`data: ${chunk(delta('x'))}\n\n`)
  })
})
