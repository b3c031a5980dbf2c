// Request translation to OpenAI Chat Completions, asserted on what the mock model server received.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { reply, startMockModelServer, type MockModelServer } from '../../test/fixtures/mock-model-server.js'
import type { AssistantMessage, Message, ToolMessage } from '../core/messages.js'
import { createOpenAICompatibleProvider } from './openai-compatible-provider.js'
import type { LlmClient, LlmRequest } from './types.js'

let server: MockModelServer
let client: LlmClient

beforeAll(async () => {
  server = await startMockModelServer()
  client = createOpenAICompatibleProvider({
    name: 'openai',
    baseURL: `${server.url}/v1`,
    apiKey: 'sk-test-0000',
  })
})
afterAll(() => server.close())
beforeEach(() => server.reset())

const request = (messages: Message[], extra: Partial<LlmRequest> = {}): LlmRequest => ({
  model: 'gpt-mock',
  messages,
  tools: [],
  ...extra,
})

async function sentBody(messages: Message[], extra: Partial<LlmRequest> = {}, target = client) {
  server.enqueue(reply().text('ok'))
  await target.generate(request(messages, extra))
  return server.requests.at(-1)?.body as Record<string, unknown> & { messages: unknown[] }
}

const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] })
const result = (id: string, content: ToolMessage['content']): ToolMessage => ({
  role: 'tool',
  toolCallId: id,
  toolName: 'read_file',
  content,
})
const calls = (...ids: string[]): AssistantMessage => ({
  role: 'assistant',
  content: [],
  toolCalls: ids.map((id, index) => ({ id, name: 'read_file', input: { path: `f${index}` } })),
  stopReason: 'tool_use',
})

describe('to-openai-chat-request', () => {
  it('sends a tool-only turn with content null and one tool message per call right after it, in call order', async () => {
    const body = await sentBody(
      [
        user('read both'),
        calls('call_a', 'call_b'),
        result('call_b', 'B'),
        result('call_a', 'A'),
        user('next'),
      ],
      { system: 'You are Hangar.' },
    )
    expect(body.messages).toEqual([
      { role: 'system', content: 'You are Hangar.' },
      { role: 'user', content: 'read both' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '{"path":"f0"}' } },
          { id: 'call_b', type: 'function', function: { name: 'read_file', arguments: '{"path":"f1"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: 'A' },
      { role: 'tool', tool_call_id: 'call_b', content: 'B' },
      { role: 'user', content: 'next' },
    ])
  })

  it('keeps assistant text next to tool calls, sends empty turns as "" and empty results as a placeholder', async () => {
    const body = await sentBody([
      user('go'),
      { ...calls('toolu_01'), content: [{ type: 'text', text: 'Reading.' }] },
      result('toolu_01', ''),
      { role: 'assistant', content: [{ type: 'text', text: '' }], stopReason: 'max_tokens' },
      user('again'),
    ])
    expect(body.messages).toEqual([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: 'Reading.',
        tool_calls: [
          { id: 'toolu_01', type: 'function', function: { name: 'read_file', arguments: '{"path":"f0"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_01', content: '(no output)' },
      { role: 'assistant', content: '' },
      { role: 'user', content: 'again' },
    ])
  })

  it('sends a call without arguments as "{}"', async () => {
    const body = await sentBody([
      user('list'),
      {
        role: 'assistant',
        content: [],
        toolCalls: [{ id: 'c1', name: 'list_agents', input: {} }],
        stopReason: 'tool_use',
      },
      result('c1', 'none'),
    ])
    expect(body.messages[1]).toMatchObject({
      tool_calls: [{ function: { name: 'list_agents', arguments: '{}' } }],
    })
  })

  it('drops reasoning parts, Anthropic thinking included', async () => {
    const body = await sentBody([
      user('think'),
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', provider: 'anthropic', text: 'secret thoughts', signature: 'sig' },
          { type: 'reasoning', provider: 'openai', text: 'more thoughts' },
          { type: 'text', text: 'Answer.' },
        ],
        stopReason: 'end_turn',
      },
      user('next'),
    ])
    expect(body.messages[1]).toEqual({ role: 'assistant', content: 'Answer.' })
    expect(JSON.stringify(body)).not.toContain('thoughts')
  })

  it('sends images as data URLs in the array form and names images inside tool results', async () => {
    const body = await sentBody([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
        ],
      },
      calls('c1'),
      result('c1', [
        { type: 'text', text: 'screenshot' },
        { type: 'image', mediaType: 'image/jpeg', data: '/9j/4AAQ' },
      ]),
    ])
    expect(body.messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      ],
    })
    expect(body.messages[2]).toEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: 'screenshot\n(image omitted: image/jpeg)',
    })
  })

  it('asks for a stream with usage and sends tools as functions', async () => {
    const body = await sentBody([user('hi')], {
      maxTokens: 321,
      tools: [
        { name: 'read_file', description: 'Reads a file', inputSchema: { type: 'object', properties: {} } },
      ],
    })
    expect(body).toMatchObject({
      model: 'gpt-mock',
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 321,
      tools: [
        {
          type: 'function',
          function: {
            name: 'read_file',
            description: 'Reads a file',
            parameters: { type: 'object', properties: {} },
          },
        },
      ],
    })
    expect(body.max_tokens).toBeUndefined()
    expect(server.requests.at(-1)?.path).toBe('/v1/chat/completions')
    expect(server.requests.at(-1)?.headers.authorization).toBe('Bearer sk-test-0000')
  })

  it('sends max_tokens, no tools field and no credentials to a keyless compatible server', async () => {
    const ollama = createOpenAICompatibleProvider({
      name: 'ollama',
      baseURL: `${server.url}/v1/`,
      headers: { 'x-title': 'Hangar' },
    })
    const body = await sentBody([user('hi')], { maxTokens: 99 }, ollama)
    expect(body.max_tokens).toBe(99)
    expect(body.max_completion_tokens).toBeUndefined()
    expect(body.tools).toBeUndefined()
    const sent = server.requests.at(-1)
    expect(sent?.path).toBe('/v1/chat/completions')
    expect(sent?.headers.authorization).toBeUndefined()
    expect(sent?.headers['x-title']).toBe('Hangar')
  })

  it('refuses a history with an orphan tool message without sending it', async () => {
    const error = await client
      .generate(request([user('go'), result('call_x', 'stray')]))
      .catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'invalid_request' })
    expect(server.requests).toHaveLength(0)
  })
})
