import { describe, expect, it } from 'vitest'
import type { ProxyFamily } from './families.js'
import { createUsageMeter, type MeteredUsage } from './usage-meter.js'

const sse = (events: [name: string | undefined, data: unknown][], newline = '\n') =>
  events
    .map(([name, data]) => {
      const payload = typeof data === 'string' ? data : JSON.stringify(data)
      return `${name ? `event: ${name}${newline}` : ''}data: ${payload}${newline}${newline}`
    })
    .join('')

function meter(
  family: ProxyFamily,
  stream: boolean,
  chunks: Buffer[],
  model: string | undefined = undefined,
): MeteredUsage | undefined {
  const usageMeter = createUsageMeter(family, stream, model)
  for (const chunk of chunks) usageMeter.push(chunk)
  return usageMeter.result()
}

/** Every way of cutting the body in two, and one byte at a time. */
function splits(body: string): Buffer[][] {
  const bytes = Buffer.from(body, 'utf8')
  const cuts: Buffer[][] = []
  for (let at = 0; at <= bytes.length; at++) cuts.push([bytes.subarray(0, at), bytes.subarray(at)])
  cuts.push(Array.from({ length: bytes.length }, (_, index) => bytes.subarray(index, index + 1)))
  return cuts
}

function expectEverySplit(family: ProxyFamily, body: string, expected: MeteredUsage) {
  for (const chunks of splits(body)) expect(meter(family, true, chunks)).toEqual(expected)
}

const ANTHROPIC_STREAM = sse([
  [
    'message_start',
    {
      type: 'message_start',
      message: {
        id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5-20250929',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: 12,
          cache_creation_input_tokens: 2048,
          cache_read_input_tokens: 30000,
          cache_creation: { ephemeral_5m_input_tokens: 2048, ephemeral_1h_input_tokens: 0 },
          output_tokens: 1,
          service_tier: 'standard',
        },
      },
    },
  ],
  [
    'content_block_start',
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  ],
  ['ping', { type: 'ping' }],
  [
    'content_block_delta',
    {
      type: 'content_block_delta',
      index: 0,
      delta: {
        type: 'text_delta',
        text: 'H\u00e9llo \u{1F680} "usage": {"output_tokens": 999} message_delta',
      },
    },
  ],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  [
    'message_delta',
    {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 87 },
    },
  ],
  ['message_stop', { type: 'message_stop' }],
])

const chatChunk = (delta: unknown, usage: unknown = null, finish: string | null = null) => ({
  id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
  object: 'chat.completion.chunk',
  created: 1741569952,
  model: 'gpt-4.1-2025-04-14',
  system_fingerprint: 'fp_eb9dce56a8',
  choices: delta === undefined ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  usage,
})

const OPENAI_CHAT_USAGE = {
  prompt_tokens: 1200,
  completion_tokens: 50,
  total_tokens: 1250,
  prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
}

const OPENAI_CHAT_STREAM = sse([
  [undefined, chatChunk({ role: 'assistant', content: '', refusal: null })],
  [undefined, chatChunk({ content: 'caf\u00e9 \\"usage\\": {' })],
  [undefined, chatChunk({}, null, 'stop')],
  [undefined, chatChunk(undefined, OPENAI_CHAT_USAGE)],
  [undefined, '[DONE]'],
])

const RESPONSES_USAGE = {
  input_tokens: 5000,
  input_tokens_details: { cached_tokens: 4096 },
  output_tokens: 300,
  output_tokens_details: { reasoning_tokens: 128 },
  total_tokens: 5300,
}

const responseObject = (status: string, usage: unknown) => ({
  id: 'resp_67ccd2bed1ec8190b14f964abc054267',
  object: 'response',
  created_at: 1741476542,
  status,
  model: 'gpt-5-codex',
  output: [],
  usage,
})

const RESPONSES_STREAM = sse([
  [
    'response.created',
    { type: 'response.created', sequence_number: 0, response: responseObject('in_progress', null) },
  ],
  [
    'response.output_text.delta',
    {
      type: 'response.output_text.delta',
      sequence_number: 1,
      item_id: 'msg_1',
      output_index: 0,
      content_index: 0,
      delta: 'Done \u2014 "response.completed"',
    },
  ],
  [
    'response.completed',
    {
      type: 'response.completed',
      sequence_number: 2,
      response: responseObject('completed', RESPONSES_USAGE),
    },
  ],
])

const geminiChunk = (text: string, usage: Record<string, number>) => ({
  candidates: [{ content: { parts: [{ text }], role: 'model' }, index: 0 }],
  usageMetadata: usage,
  modelVersion: 'gemini-2.5-pro',
  responseId: 'mKdNaK-2Ls6MnvgP7_T54Qs',
})

const GEMINI_CHUNKS = [
  geminiChunk('Hel', { promptTokenCount: 9000, cachedContentTokenCount: 8000, totalTokenCount: 9000 }),
  geminiChunk('lo \u{1F680}', {
    promptTokenCount: 9000,
    cachedContentTokenCount: 8000,
    candidatesTokenCount: 40,
    thoughtsTokenCount: 100,
    totalTokenCount: 9140,
  }),
]

// Gemini's SSE uses CRLF line endings.
const GEMINI_STREAM = sse(
  GEMINI_CHUNKS.map((chunk) => [undefined, chunk]),
  '\r\n',
)

describe('createUsageMeter', () => {
  it('reads Anthropic SSE: message_start buckets and the cumulative message_delta output, split anywhere', () => {
    expectEverySplit('anthropic', ANTHROPIC_STREAM, {
      model: 'claude-sonnet-4-5-20250929',
      inputTokens: 12,
      outputTokens: 87,
      cacheReadTokens: 30000,
      cacheWriteTokens: 2048,
    })
  })

  it('lets message_delta override any usage field it carries', () => {
    const stream = ANTHROPIC_STREAM.replace(
      '"usage":{"output_tokens":87}',
      '"usage":{"input_tokens":15,"cache_read_input_tokens":30001,"output_tokens":90}',
    )
    expect(meter('anthropic', true, [Buffer.from(stream)])).toEqual({
      model: 'claude-sonnet-4-5-20250929',
      inputTokens: 15,
      outputTokens: 90,
      cacheReadTokens: 30001,
      cacheWriteTokens: 2048,
    })
  })

  it('reads an Anthropic JSON body', () => {
    const body = JSON.stringify({
      id: 'msg_01',
      type: 'message',
      role: 'assistant',
      model: 'claude-haiku-4-5-20251001',
      content: [{ type: 'text', text: 'Hi' }],
      stop_reason: 'end_turn',
      usage: {
        input_tokens: 5,
        cache_creation_input_tokens: 7,
        cache_read_input_tokens: 100,
        output_tokens: 20,
      },
    })
    const half = body.length >> 1
    expect(
      meter('anthropic', false, [Buffer.from(body.slice(0, half)), Buffer.from(body.slice(half))]),
    ).toEqual({
      model: 'claude-haiku-4-5-20251001',
      inputTokens: 5,
      outputTokens: 20,
      cacheReadTokens: 100,
      cacheWriteTokens: 7,
    })
  })

  it('reads a count that is no whole number, or beyond what the request log holds, as one it can store', () => {
    const body = JSON.stringify({
      model: 'claude-haiku-4-5-20251001',
      usage: { input_tokens: 5.6, output_tokens: 1e30, cache_read_input_tokens: 0.2 },
    })
    expect(meter('anthropic', false, [Buffer.from(body)])).toEqual({
      model: 'claude-haiku-4-5-20251001',
      inputTokens: 6,
      outputTokens: 2_147_483_647,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    })
  })

  it('reads OpenAI Chat SSE from the usage chunk, cached tokens taken out of the input, split anywhere', () => {
    expectEverySplit('openai-chat', OPENAI_CHAT_STREAM, {
      model: 'gpt-4.1-2025-04-14',
      inputTokens: 176,
      outputTokens: 50,
      cacheReadTokens: 1024,
      cacheWriteTokens: 0,
    })
  })

  it('reads an OpenAI Chat JSON body with an OpenRouter cost and cache writes', () => {
    const body = JSON.stringify({
      id: 'gen-1760000000-abc',
      object: 'chat.completion',
      model: 'anthropic/claude-sonnet-4.5',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage: {
        prompt_tokens: 3000,
        completion_tokens: 12,
        total_tokens: 3012,
        cost: 0.0123,
        prompt_tokens_details: { cached_tokens: 2000, cache_write_tokens: 900 },
      },
    })
    expect(meter('openai-chat', false, [Buffer.from(body)])).toEqual({
      model: 'anthropic/claude-sonnet-4.5',
      inputTokens: 100,
      outputTokens: 12,
      cacheReadTokens: 2000,
      cacheWriteTokens: 900,
      providerCostUsd: 0.0123,
    })
  })

  it('reads OpenAI Responses SSE from response.completed, split anywhere', () => {
    expectEverySplit('openai-responses', RESPONSES_STREAM, {
      model: 'gpt-5-codex',
      inputTokens: 904,
      outputTokens: 300,
      cacheReadTokens: 4096,
      cacheWriteTokens: 0,
    })
  })

  it('reads an OpenAI Responses JSON body', () => {
    const body = JSON.stringify(responseObject('completed', RESPONSES_USAGE))
    expect(meter('openai-responses', false, [Buffer.from(body)])).toEqual({
      model: 'gpt-5-codex',
      inputTokens: 904,
      outputTokens: 300,
      cacheReadTokens: 4096,
      cacheWriteTokens: 0,
    })
  })

  const geminiUsage: MeteredUsage = {
    model: 'gemini-2.5-pro',
    inputTokens: 1000,
    outputTokens: 140,
    cacheReadTokens: 8000,
    cacheWriteTokens: 0,
  }

  it('reads Gemini SSE (CRLF), the last usageMetadata winning and thoughts counted as output, split anywhere', () => {
    expectEverySplit('gemini', GEMINI_STREAM, geminiUsage)
  })

  it('reads a Gemini stream that is a JSON array, and a Gemini JSON body', () => {
    const array = `[${JSON.stringify(GEMINI_CHUNKS[0])}\r\n,\r\n${JSON.stringify(GEMINI_CHUNKS[1])}\r\n]`
    const bytes = Buffer.from(array)
    expect(meter('gemini', true, [bytes.subarray(0, 10), bytes.subarray(10)])).toEqual(geminiUsage)
    expect(meter('gemini', false, [Buffer.from(JSON.stringify(GEMINI_CHUNKS[1]))])).toEqual(geminiUsage)
  })

  it('falls back to the model it was given when the response names none', () => {
    const body = JSON.stringify({ usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 3 } })
    expect(meter('gemini', false, [Buffer.from(body)], 'gemini-2.5-flash')).toEqual({
      model: 'gemini-2.5-flash',
      inputTokens: 12,
      outputTokens: 3,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    })
    const anonymous = meter('gemini', false, [Buffer.from(body)])
    expect(anonymous).toBeDefined()
    expect(anonymous).not.toHaveProperty('model')
  })

  it('reads an SSE body the request did not announce as a stream', () => {
    expect(meter('openai-chat', false, [Buffer.from(OPENAI_CHAT_STREAM)])?.inputTokens).toBe(176)
  })

  it('returns undefined when no usage was seen', () => {
    const withoutUsage = OPENAI_CHAT_STREAM.split('\n\n')
      .filter((event) => !event.includes('"choices":[]'))
      .join('\n\n')
    expect(withoutUsage).toContain('"usage":null')
    expect(meter('openai-chat', true, [Buffer.from(withoutUsage)])).toBeUndefined()
    expect(meter('anthropic', false, [Buffer.from('{"type":"message","content":[]}')])).toBeUndefined()
    expect(meter('gemini', true, [])).toBeUndefined()
  })

  it('never throws on garbage', () => {
    const garbage = [
      Buffer.from([0xff, 0xfe, 0x00, 0xc3]),
      Buffer.from('data: {"type":"message_start","message":{"usage":'),
      Buffer.from('\n\ndata: {"type":"message_delta","usage":"nope"}\n\n'),
    ]
    for (const family of ['anthropic', 'openai-chat', 'openai-responses', 'gemini'] as const) {
      for (const stream of [true, false]) {
        expect(() => meter(family, stream, garbage)).not.toThrow()
        expect(meter(family, stream, garbage)).toBeUndefined()
        expect(meter(family, stream, [Buffer.from('{"usage": {"input_tokens": ')])).toBeUndefined()
      }
    }
  })

  it('stops keeping a JSON body past 16 MiB', () => {
    const head = Buffer.from(
      '{"model":"claude-haiku-4-5","usage":{"input_tokens":1,"output_tokens":2},"pad":"',
    )
    const usageMeter = createUsageMeter('anthropic', false, undefined)
    usageMeter.push(head)
    usageMeter.push(Buffer.alloc(16 * 1024 * 1024, 0x61))
    usageMeter.push(Buffer.from('"}'))
    expect(usageMeter.result()).toBeUndefined()
  })
})
