// Reading Anthropic streams: the mock model server for scripted replies, a tiny raw server for wire
// shapes the mock cannot script (a stream that just ends, unknown stop reasons, error event types).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  httpError,
  reply,
  startMockModelServer,
  type MockModelServer,
  type StopReason as MockStopReason,
} from '../../test/fixtures/mock-model-server.js'
import { abortMidStream, collect, failure, startRawServer } from '../../test/helpers/llm-test-support.js'
import { AppError } from '../core/errors.js'
import type { Message, StopReason } from '../core/messages.js'
import { createAnthropicProvider } from './anthropic-provider.js'
import type { LlmClient, LlmRequest, LlmStreamEvent } from './types.js'

let server: MockModelServer
let client: LlmClient

beforeAll(async () => {
  server = await startMockModelServer()
  client = createAnthropicProvider({ baseURL: server.url, apiKey: 'sk-ant-test-key-0000000000' })
})
afterAll(() => server.close())
beforeEach(() => server.reset())

const hello: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }]
const request = (extra: Partial<LlmRequest> = {}): LlmRequest => ({
  model: 'claude-mock',
  messages: hello,
  tools: [],
  ...extra,
})

function frames(...events: Array<Record<string, unknown>>): string {
  return events.map((event) => `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`).join('')
}

const messageStart = {
  type: 'message_start',
  message: {
    id: 'msg_raw',
    type: 'message',
    role: 'assistant',
    model: 'claude-mock',
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 3, output_tokens: 1 },
  },
}
const messageDelta = (stopReason: string) => ({
  type: 'message_delta',
  delta: { stop_reason: stopReason, stop_sequence: null },
  usage: { output_tokens: 2 },
})

/** A raw server answering every request with these SSE bytes, then closing the stream. */
async function withRawStream(body: string, run: (raw: LlmClient) => Promise<void>): Promise<void> {
  const raw = await startRawServer((_incoming, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' })
    response.end(body)
  })
  try {
    await run(createAnthropicProvider({ baseURL: raw.url, apiKey: 'sk-ant-test-key-0000000000' }))
  } finally {
    await raw.close()
  }
}

describe('anthropic-provider', () => {
  it('streams text and parallel tool calls whose arguments arrive in fragments', async () => {
    server.enqueue(
      reply()
        .text('Reading both.')
        .tool('read_file', { path: 'src/a.ts', range: { start: 1, end: 20 } }, { id: 'toolu_a' })
        .tool('read_file', { path: 'src/b.ts' }, { id: 'toolu_b' }),
    )
    const events = await collect(client.stream(request()))
    expect(events.filter((event) => event.type !== 'usage' && event.type !== 'finish')).toEqual([
      { type: 'text-delta', text: 'Reading both.' },
      {
        type: 'tool-call',
        id: 'toolu_a',
        name: 'read_file',
        input: { path: 'src/a.ts', range: { start: 1, end: 20 } },
      },
      { type: 'tool-call', id: 'toolu_b', name: 'read_file', input: { path: 'src/b.ts' } },
    ])
    const finish = events.at(-1)
    expect(finish).toMatchObject({
      type: 'finish',
      message: {
        role: 'assistant',
        content: [{ type: 'text', text: 'Reading both.' }],
        toolCalls: [
          { id: 'toolu_a', name: 'read_file' },
          { id: 'toolu_b', name: 'read_file' },
        ],
        stopReason: 'tool_use',
      },
    })
  })

  it('parses a tool call with no arguments as an empty object', async () => {
    server.enqueue(reply().tool('list_agents', {}))
    const message = await client.generate(request())
    expect(message.toolCalls).toEqual([{ id: expect.any(String), name: 'list_agents', input: {} }])
  })

  it('parses a tool call whose argument stream is empty as an empty object', async () => {
    const body = frames(
      messageStart,
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'toolu_empty', name: 'list_agents', input: {} },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } },
      { type: 'content_block_stop', index: 0 },
      messageDelta('tool_use'),
      { type: 'message_stop' },
    )
    await withRawStream(body, async (raw) => {
      const message = await raw.generate(request())
      expect(message.toolCalls).toEqual([{ id: 'toolu_empty', name: 'list_agents', input: {} }])
    })
  })

  it.each<[MockStopReason, StopReason]>([
    ['end_turn', 'end_turn'],
    ['tool_use', 'tool_use'],
    ['max_tokens', 'max_tokens'],
    ['refusal', 'refusal'],
    ['pause_turn', 'pause'],
    ['stop_sequence', 'end_turn'],
  ])('maps the stop reason %s to %s', async (wire, normalized) => {
    server.enqueue(reply().text('x').stop(wire))
    expect((await client.generate(request())).stopReason).toBe(normalized)
  })

  it('maps an unknown stop reason to other and a context overflow to max_tokens', async () => {
    const body = (reason: string) =>
      frames(
        messageStart,
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x' } },
        { type: 'content_block_stop', index: 0 },
        messageDelta(reason),
        { type: 'message_stop' },
      )
    await withRawStream(body('brand_new_reason'), async (raw) => {
      expect((await raw.generate(request())).stopReason).toBe('other')
    })
    await withRawStream(body('model_context_window_exceeded'), async (raw) => {
      expect((await raw.generate(request())).stopReason).toBe('max_tokens')
    })
  })

  it('returns thinking with its signature as Anthropic reasoning and streams it as reasoning deltas', async () => {
    server.enqueue(reply().reasoning('Check the file first.', 'sig-abc').text('Done.').chunkText(6))
    const events = await collect(client.stream(request()))
    const reasoning = events.flatMap((event) => (event.type === 'reasoning-delta' ? [event.text] : []))
    expect(reasoning.join('')).toBe('Check the file first.')
    expect(reasoning.length).toBeGreaterThan(1)
    const finish = events.at(-1)
    expect(finish?.type === 'finish' && finish.message.content).toEqual([
      { type: 'reasoning', provider: 'anthropic', text: 'Check the file first.', signature: 'sig-abc' },
      { type: 'text', text: 'Done.' },
    ])
  })

  it('reports usage from message_start and message_delta as disjoint buckets', async () => {
    server.enqueue(reply().text('x').usage({ input: 10, output: 5, cacheRead: 100, cacheWrite: 20 }))
    const events = await collect(client.stream(request()))
    const usage = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 100, cacheWriteTokens: 20 }
    expect(events.at(-2)).toEqual({ type: 'usage', usage })
    expect(events.at(-1)).toMatchObject({ type: 'finish', message: { usage } })
  })

  it('throws a non-retryable error with the provider message on HTTP 401', async () => {
    server.enqueue(httpError(401, 'invalid x-api-key'))
    const error = await failure(client.generate(request()))
    expect(error.code).toBe('upstream_error')
    expect(error.retryable).toBe(false)
    expect(error.details).toMatchObject({ provider: 'anthropic', status: 401 })
    expect(error.message).toContain('invalid x-api-key')
    expect(server.requests).toHaveLength(1)
  })

  it.each([429, 503, 529])('throws a retryable error on HTTP %i without retrying itself', async (status) => {
    server.enqueue(httpError(status))
    const error = await failure(client.generate(request()))
    expect(error).toMatchObject({ code: 'upstream_error', retryable: true, details: { status } })
    expect(server.requests).toHaveLength(1)
  })

  it('throws a retryable error for an api_error event mid-stream', async () => {
    server.enqueue(reply().text('partial').streamError('internal trouble'))
    const error = await failure(collect(client.stream(request())))
    expect(error).toMatchObject({ code: 'upstream_error', retryable: true })
    expect(error.message).toContain('internal trouble')
  })

  it.each([
    ['overloaded_error', true],
    ['invalid_request_error', false],
  ])('derives retryability of a mid-stream %s event from its type', async (type, retryable) => {
    const body = `${frames(messageStart)}event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message: 'nope' } })}\n\n`
    await withRawStream(body, async (raw) => {
      const error = await failure(raw.generate(request()))
      expect(error).toMatchObject({ code: 'upstream_error', retryable })
    })
  })

  it('throws a retryable error when the stream ends without message_stop', async () => {
    const body = frames(
      messageStart,
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'half an ans' } },
    )
    await withRawStream(body, async (raw) => {
      const events: LlmStreamEvent[] = []
      const error = await failure(
        (async () => {
          for await (const event of raw.stream(request())) events.push(event)
        })(),
      )
      expect(events).toEqual([{ type: 'text-delta', text: 'half an ans' }])
      expect(error).toMatchObject({ code: 'upstream_error', retryable: true, details: { truncated: true } })
    })
  })

  it('throws a retryable error when the connection is reset mid-stream', async () => {
    server.enqueue(reply().text('partial').reset())
    const error = await failure(client.generate(request()))
    expect(error).toMatchObject({ code: 'upstream_error', retryable: true })
  })

  it('refuses to follow a redirect, so the key never reaches the other host', async () => {
    const redirecting = await startRawServer((_incoming, response) => {
      response.writeHead(307, { location: `${server.url}/v1/messages` })
      response.end()
    })
    try {
      const redirected = createAnthropicProvider({
        baseURL: redirecting.url,
        apiKey: 'sk-ant-test-key-0000000000',
      })
      const error = await failure(redirected.generate(request()))
      expect(error).toMatchObject({ code: 'upstream_error', retryable: false, details: { status: 307 } })
      expect(error.message).toContain('redirected')
      expect(server.requests).toHaveLength(0)
    } finally {
      await redirecting.close()
    }
  })

  it(
    'ends the stream with an error when the request is aborted mid-stream',
    { timeout: 10_000 },
    async () => {
      const error = await abortMidStream(client, server, request)
      expect(error).toMatchObject({ code: 'upstream_error', retryable: false, details: { aborted: true } })
    },
  )

  it('passes an AppError abort reason on, and reports a timeout signal as a timeout', async () => {
    server.enqueue(reply().hang('before-headers'))
    const reason = new AppError('timeout', 'the turn took too long', { retryable: true })
    const controller = new AbortController()
    setTimeout(() => controller.abort(reason), 50)
    expect(await failure(client.generate(request({ signal: controller.signal })))).toBe(reason)

    server.enqueue(reply().hang('before-headers'))
    const timedOut = await failure(client.generate(request({ signal: AbortSignal.timeout(50) })))
    expect(timedOut).toMatchObject({ code: 'timeout', retryable: true })
  })

  it('sends no credentials for a keyless endpoint and ignores ANTHROPIC_API_KEY', async () => {
    const previous = process.env.ANTHROPIC_API_KEY
    process.env.ANTHROPIC_API_KEY = 'sk-ant-from-the-environment-000000'
    try {
      const keyless = createAnthropicProvider({ baseURL: server.url })
      server.enqueue(reply().text('ok'))
      expect((await keyless.generate(request())).content).toEqual([{ type: 'text', text: 'ok' }])
      expect(server.requests[0]?.headers['x-api-key']).toBeUndefined()
      expect(server.requests[0]?.headers.authorization).toBeUndefined()
    } finally {
      if (previous === undefined) delete process.env.ANTHROPIC_API_KEY
      else process.env.ANTHROPIC_API_KEY = previous
    }
  })
})
