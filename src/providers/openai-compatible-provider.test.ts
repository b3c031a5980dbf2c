// Reading OpenAI-compatible streams: the mock model server for scripted replies, and a tiny raw server
// streaming exact bytes for what real servers do and the mock cannot script (Ollama's index 0, calls
// without ids, OpenRouter comments and error chunks, EOF without a finish).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  httpError,
  reply,
  startMockModelServer,
  type MockModelServer,
  type StopReason as MockStopReason,
} from '../../test/fixtures/mock-model-server.js'
import { abortMidStream, collect, failure, startRawServer } from '../../test/helpers/llm-test-support.js'
import type { Message, StopReason } from '../core/messages.js'
import { createOpenAICompatibleProvider } from './openai-compatible-provider.js'
import type { LlmClient, LlmRequest } from './types.js'

const KEY = 'sk-test-abcdefghijklmnopqrstuvwxyz'
let server: MockModelServer
let client: LlmClient

beforeAll(async () => {
  server = await startMockModelServer()
  client = createOpenAICompatibleProvider({
    name: 'openrouter',
    baseURL: `${server.url}/api/v1`,
    apiKey: KEY,
  })
})
afterAll(() => server.close())
beforeEach(() => server.reset())

const hello: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }]
const request = (extra: Partial<LlmRequest> = {}): LlmRequest => ({
  model: 'gpt-mock',
  messages: hello,
  tools: [],
  ...extra,
})

/** Runs `run` against a raw server that answers with exactly these bytes and this content type. */
async function withRaw(
  body: string,
  run: (raw: LlmClient) => Promise<void>,
  contentType = 'text/event-stream',
): Promise<void> {
  const raw = await startRawServer((_incoming, response) => {
    response.writeHead(200, { 'content-type': contentType })
    response.end(body)
  })
  try {
    await run(createOpenAICompatibleProvider({ name: 'ollama', baseURL: raw.url }))
  } finally {
    await raw.close()
  }
}

const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`
const usageChunk = (usage: Record<string, unknown>) =>
  `data: ${JSON.stringify({ id: 'c', choices: [], usage })}\n\n`
const DONE = 'data: [DONE]\n\n'

describe('openai-compatible-provider', () => {
  it('streams text and parallel tool calls whose arguments arrive in fragments', async () => {
    server.enqueue(
      reply()
        .text('Reading both.')
        .tool('read_file', { path: 'src/a.ts', range: { start: 1, end: 20 } }, { id: 'call_a' })
        .tool('read_file', { path: 'src/b.ts' }, { id: 'call_b' }),
    )
    const events = await collect(client.stream(request()))
    expect(events.filter((event) => event.type !== 'usage' && event.type !== 'finish')).toEqual([
      { type: 'text-delta', text: 'Reading both.' },
      {
        type: 'tool-call',
        id: 'call_a',
        name: 'read_file',
        input: { path: 'src/a.ts', range: { start: 1, end: 20 } },
      },
      { type: 'tool-call', id: 'call_b', name: 'read_file', input: { path: 'src/b.ts' } },
    ])
    expect(events.at(-1)).toMatchObject({
      type: 'finish',
      message: {
        content: [{ type: 'text', text: 'Reading both.' }],
        toolCalls: [{ id: 'call_a' }, { id: 'call_b' }],
        stopReason: 'tool_use',
      },
    })
  })

  it('opens a new call for a new id at index 0 and wants tools although Ollama says stop', async () => {
    const body =
      chunk({ role: 'assistant', content: '' }) +
      chunk({
        tool_calls: [
          {
            id: 'call_x1',
            index: 0,
            type: 'function',
            function: { name: 'read_file', arguments: '{"path":"a"}' },
          },
        ],
      }) +
      chunk({
        tool_calls: [
          { id: 'call_x2', index: 0, type: 'function', function: { name: 'glob', arguments: '{"pattern":' } },
        ],
      }) +
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"*.ts"}' } }] }) +
      chunk({ content: '' }, 'stop') +
      DONE
    await withRaw(body, async (raw) => {
      const message = await raw.generate(request())
      expect(message.toolCalls).toEqual([
        { id: 'call_x1', name: 'read_file', input: { path: 'a' } },
        { id: 'call_x2', name: 'glob', input: { pattern: '*.ts' } },
      ])
      expect(message.stopReason).toBe('tool_use')
    })
  })

  it('synthesizes stable ids for calls without one and parses empty arguments as {}', async () => {
    const body =
      chunk({
        tool_calls: [{ index: 0, type: 'function', function: { name: 'list_agents', arguments: '' } }],
      }) +
      chunk({ tool_calls: [{ index: 0, function: { arguments: '' } }] }) +
      chunk({
        tool_calls: [{ index: 1, id: '', function: { name: 'read_file', arguments: '{"path":"b"}' } }],
      }) +
      chunk({}, 'tool_calls') +
      DONE
    await withRaw(body, async (raw) => {
      const events = await collect(raw.stream(request()))
      expect(events.filter((event) => event.type === 'tool-call')).toEqual([
        { type: 'tool-call', id: 'call_0', name: 'list_agents', input: {} },
        { type: 'tool-call', id: 'call_1', name: 'read_file', input: { path: 'b' } },
      ])
    })
  })

  it('keeps unparseable arguments as _raw for the loop to report', async () => {
    const body =
      chunk({
        tool_calls: [{ index: 0, id: 'c1', function: { name: 'read_file', arguments: '{"path": "a"' } }],
      }) +
      chunk({}, 'tool_calls') +
      DONE
    await withRaw(body, async (raw) => {
      const message = await raw.generate(request())
      expect(message.toolCalls).toEqual([{ id: 'c1', name: 'read_file', input: { _raw: '{"path": "a"' } }])
    })
  })

  it('skips SSE comments, reads \\r\\n framing and reasoning from either field', async () => {
    const body = (
      ': OPENROUTER PROCESSING\n\n' +
      chunk({ role: 'assistant', reasoning: 'First ' }) +
      ': keep-alive\n\n' +
      chunk({ reasoning_content: 'think.' }) +
      chunk({ content: 'Hi' }) +
      chunk({ content: '!' }, 'stop') +
      DONE
    ).replace(/\n/g, '\r\n')
    await withRaw(body, async (raw) => {
      const events = await collect(raw.stream(request()))
      expect(events.slice(0, 4)).toEqual([
        { type: 'reasoning-delta', text: 'First ' },
        { type: 'reasoning-delta', text: 'think.' },
        { type: 'text-delta', text: 'Hi' },
        { type: 'text-delta', text: '!' },
      ])
      expect(events.at(-1)).toEqual({
        type: 'finish',
        message: {
          role: 'assistant',
          content: [
            { type: 'reasoning', provider: 'ollama', text: 'First think.' },
            { type: 'text', text: 'Hi!' },
          ],
          stopReason: 'end_turn',
        },
      })
    })
  })

  it.each<[MockStopReason, StopReason]>([
    ['end_turn', 'end_turn'],
    ['max_tokens', 'max_tokens'],
    ['refusal', 'refusal'],
  ])('maps the stop reason scripted as %s to %s', async (wire, normalized) => {
    server.enqueue(reply().text('x').stop(wire))
    expect((await client.generate(request())).stopReason).toBe(normalized)
  })

  it('maps tool_calls to tool_use and an unknown finish_reason to other', async () => {
    server.enqueue(reply().tool('list_agents', {}))
    expect((await client.generate(request())).stopReason).toBe('tool_use')
    await withRaw(chunk({ content: 'x' }, 'something_new') + DONE, async (raw) => {
      expect((await raw.generate(request())).stopReason).toBe('other')
    })
  })

  it('reports usage with cached tokens as a separate bucket', async () => {
    server.enqueue(reply().text('x').usage({ input: 10, output: 5, cacheRead: 100 }))
    const events = await collect(client.stream(request()))
    const usage = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 100, cacheWriteTokens: 0 }
    expect(events.at(-2)).toEqual({ type: 'usage', usage })
    expect(events.at(-1)).toMatchObject({ type: 'finish', message: { usage } })
  })

  it('subtracts cache reads and writes from the prompt count when they arrive after the finish', async () => {
    const body =
      chunk({ content: 'x' }, 'stop') +
      usageChunk({
        prompt_tokens: 50,
        completion_tokens: 8,
        prompt_tokens_details: { cached_tokens: 30, cache_write_tokens: 5 },
      }) +
      DONE
    await withRaw(body, async (raw) => {
      expect((await raw.generate(request())).usage).toEqual({
        inputTokens: 15,
        outputTokens: 8,
        cacheReadTokens: 30,
        cacheWriteTokens: 5,
      })
    })
  })

  it('throws a retryable upstream error for an error chunk inside an HTTP 200 stream', async () => {
    server.enqueue(reply().text('partial').streamError('provider went away'))
    const error = await failure(collect(client.stream(request())))
    expect(error).toMatchObject({ code: 'upstream_error', retryable: true, details: { inStream: true } })
    expect(error.message).toContain('provider went away')
  })

  it.each([
    [429, true],
    [400, false],
  ])('derives retryability of an error chunk from its numeric code %i', async (code, retryable) => {
    const body = chunk({ content: 'a' }) + `data: ${JSON.stringify({ error: { code, message: 'nope' } })}\n\n`
    await withRaw(body, async (raw) => {
      expect(await failure(raw.generate(request()))).toMatchObject({ code: 'upstream_error', retryable })
    })
  })

  it('throws a retryable error when the stream ends without a finish', async () => {
    await withRaw(chunk({ content: 'half an ans' }), async (raw) => {
      const error = await failure(raw.generate(request()))
      expect(error).toMatchObject({ code: 'upstream_error', retryable: true, details: { truncated: true } })
    })
  })

  it('reads a completion sent as JSON by a server that ignores stream: true', async () => {
    const completion = {
      id: 'x',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c9', type: 'function', function: { name: 'read_file', arguments: '{"path":"z"}' } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 7, completion_tokens: 3 },
    }
    await withRaw(
      JSON.stringify(completion),
      async (raw) => {
        const message = await raw.generate(request())
        expect(message).toMatchObject({
          toolCalls: [{ id: 'c9', name: 'read_file', input: { path: 'z' } }],
          stopReason: 'tool_use',
          usage: { inputTokens: 7, outputTokens: 3 },
        })
      },
      'application/json',
    )
  })

  it('throws a non-retryable error with the provider message, minus the key, on HTTP 401', async () => {
    server.enqueue(httpError(401, `Incorrect API key provided: ${KEY}`))
    const error = await failure(client.generate(request()))
    expect(error).toMatchObject({ code: 'upstream_error', retryable: false, details: { status: 401 } })
    expect(error.message).toContain('Incorrect API key provided')
    expect(error.message).not.toContain(KEY)
  })

  it.each([429, 503])('throws a retryable error on HTTP %i', async (status) => {
    server.enqueue(httpError(status))
    const error = await failure(client.generate(request()))
    expect(error).toMatchObject({ code: 'upstream_error', retryable: true, details: { status } })
  })

  it('keeps Retry-After in the error details', async () => {
    const raw = await startRawServer((_incoming, response) => {
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' })
      response.end(JSON.stringify({ error: { message: 'slow down' } }))
    })
    try {
      const limited = createOpenAICompatibleProvider({ name: 'vllm', baseURL: raw.url })
      const error = await failure(limited.generate(request()))
      expect(error.details).toMatchObject({ status: 429, retryAfterSeconds: 7 })
    } finally {
      await raw.close()
    }
  })

  it('refuses to follow a redirect, so the key never reaches the other host', async () => {
    const redirecting = await startRawServer((_incoming, response) => {
      response.writeHead(302, { location: `${server.url}/v1/chat/completions` })
      response.end()
    })
    try {
      const redirected = createOpenAICompatibleProvider({
        name: 'custom',
        baseURL: redirecting.url,
        apiKey: KEY,
      })
      const error = await failure(redirected.generate(request()))
      expect(error).toMatchObject({ code: 'upstream_error', retryable: false, details: { status: 302 } })
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

  it('ends with an error when aborted before the response headers arrive', async () => {
    server.enqueue(reply().hang('before-headers'))
    const error = await failure(client.generate(request({ signal: AbortSignal.timeout(50) })))
    expect(error).toMatchObject({ code: 'timeout', retryable: true })
  })

  it('throws a retryable connection error when the server cannot be reached', async () => {
    const raw = await startRawServer(() => undefined)
    const url = raw.url
    await raw.close()
    const unreachable = createOpenAICompatibleProvider({ name: 'ollama', baseURL: url })
    expect(await failure(unreachable.generate(request()))).toMatchObject({
      code: 'upstream_error',
      retryable: true,
    })
  })
})
