// Request translation to Anthropic, asserted on what the mock model server actually received.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { reply, startMockModelServer, type MockModelServer } from '../../test/fixtures/mock-model-server.js'
import { AppError } from '../core/errors.js'
import type { AssistantMessage, Message, ToolMessage } from '../core/messages.js'
import { createAnthropicProvider } from './anthropic-provider.js'
import { anthropicToolId } from './to-anthropic-request.js'
import type { LlmClient, LlmRequest } from './types.js'

let server: MockModelServer
let client: LlmClient

beforeAll(async () => {
  server = await startMockModelServer()
  client = createAnthropicProvider({ baseURL: server.url, apiKey: 'sk-ant-test-key-0000000000' })
})
afterAll(() => server.close())
beforeEach(() => server.reset())

const request = (messages: Message[], extra: Partial<LlmRequest> = {}): LlmRequest => ({
  model: 'claude-mock',
  messages,
  tools: [],
  ...extra,
})

/** Sends one request and returns the `messages` the server received. */
async function sentMessages(messages: Message[], extra: Partial<LlmRequest> = {}): Promise<unknown[]> {
  server.enqueue(reply().text('ok'))
  await client.generate(request(messages, extra))
  const body = server.requests.at(-1)?.body as { messages: unknown[] }
  return body.messages
}

const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] })
const result = (id: string, content: ToolMessage['content'], isError?: boolean): ToolMessage => ({
  role: 'tool',
  toolCallId: id,
  toolName: 'read_file',
  content,
  ...(isError ? { isError } : {}),
})
const calls = (...ids: string[]): AssistantMessage => ({
  role: 'assistant',
  content: [],
  toolCalls: ids.map((id, index) => ({ id, name: 'read_file', input: { path: `f${index}` } })),
  stopReason: 'tool_use',
})

describe('to-anthropic-request', () => {
  it('puts all results of parallel calls in one user message, in call order, before the user text', async () => {
    const messages = await sentMessages([
      user('read both'),
      { ...calls('toolu_a', 'toolu_b'), content: [{ type: 'text', text: 'Reading.' }] },
      result('toolu_b', 'B'),
      result('toolu_a', 'A'),
      user('and then?'),
    ])
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'read both' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading.' },
          { type: 'tool_use', id: 'toolu_a', name: 'read_file', input: { path: 'f0' } },
          { type: 'tool_use', id: 'toolu_b', name: 'read_file', input: { path: 'f1' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_a', content: 'A' },
          { type: 'tool_result', tool_use_id: 'toolu_b', content: 'B' },
          { type: 'text', text: 'and then?' },
        ],
      },
    ])
  })

  it('sends no empty text block and a placeholder for an empty tool result, keeping is_error', async () => {
    const messages = await sentMessages([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'go' },
          { type: 'text', text: '  ' },
        ],
      },
      { ...calls('toolu_a', 'toolu_b'), content: [{ type: 'text', text: '' }] },
      result('toolu_a', ''),
      result('toolu_b', [{ type: 'text', text: '' }], true),
    ])
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_a', name: 'read_file', input: { path: 'f0' } },
          { type: 'tool_use', id: 'toolu_b', name: 'read_file', input: { path: 'f1' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_a', content: '(no output)' },
          { type: 'tool_result', tool_use_id: 'toolu_b', content: '(no output)', is_error: true },
        ],
      },
    ])
  })

  it('maps foreign tool-call ids the same way in tool_use and tool_result and keeps the stored ids', async () => {
    const history: Message[] = [
      user('go'),
      calls('call.1:x', 'call_1_x'),
      result('call.1:x', 'one'),
      result('call_1_x', 'two'),
      // Ollama and our synthesized ids repeat from turn to turn; Anthropic wants them unique.
      calls('call_0'),
      result('call_0', 'three'),
      calls('call_0'),
      result('call_0', 'four'),
    ]
    const stored = structuredClone(history)
    const messages = (await sentMessages(history)) as Array<{ content: Array<Record<string, string>> }>
    const useIds = messages.flatMap((message) =>
      message.content.filter((block) => block.type === 'tool_use').map((block) => block.id),
    )
    const resultIds = messages.flatMap((message) =>
      message.content.filter((block) => block.type === 'tool_result').map((block) => block.tool_use_id),
    )
    expect(resultIds).toEqual(useIds)
    expect(new Set(useIds).size).toBe(4)
    for (const id of useIds) expect(id).toMatch(/^[a-zA-Z0-9_-]+$/)
    expect(useIds[0]).toBe(anthropicToolId('call.1:x'))
    expect(useIds[1]).toBe('call_1_x')
    expect(history).toEqual(stored)
    // Deterministic: the same history maps to the same ids on the next request.
    const again = (await sentMessages(history)) as Array<{ content: Array<Record<string, string>> }>
    expect(again).toEqual(messages)
  })

  it('sends a call without arguments as an empty object', async () => {
    const messages = await sentMessages([
      user('list'),
      {
        role: 'assistant',
        content: [],
        toolCalls: [{ id: 'toolu_1', name: 'list_agents', input: {} }],
        stopReason: 'tool_use',
      },
      result('toolu_1', 'none'),
    ])
    expect(messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'list_agents', input: {} }],
    })
  })

  it('replays Anthropic thinking with its signature and drops other reasoning', async () => {
    const messages = await sentMessages([
      user('think'),
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', provider: 'anthropic', text: 'Let me see.', signature: 'sig-1' },
          { type: 'reasoning', provider: 'anthropic', text: '', redacted: 'opaque-blob' },
          { type: 'reasoning', provider: 'anthropic', text: 'unsigned, cannot be verified' },
          { type: 'reasoning', provider: 'openrouter', text: 'foreign thoughts' },
          { type: 'text', text: 'Answer.' },
        ],
        stopReason: 'end_turn',
      },
      user('next'),
    ])
    expect(messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Let me see.', signature: 'sig-1' },
        { type: 'redacted_thinking', data: 'opaque-blob' },
        { type: 'text', text: 'Answer.' },
      ],
    })
  })

  it('sends images as base64 sources, in user messages and in tool results', async () => {
    const messages = await sentMessages([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
        ],
      },
      calls('toolu_s'),
      result('toolu_s', [
        { type: 'text', text: 'screenshot' },
        { type: 'image', mediaType: 'image/jpeg', data: '/9j/4AAQ' },
      ]),
    ])
    expect(messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      ],
    })
    expect(messages[2]).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_s',
          content: [
            { type: 'text', text: 'screenshot' },
            { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
          ],
        },
      ],
    })
  })

  it('refuses an image type Anthropic does not accept', async () => {
    const error = await client
      .generate(
        request([{ role: 'user', content: [{ type: 'image', mediaType: 'image/bmp', data: 'Qk0=' }] }]),
      )
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(AppError)
    expect((error as AppError).code).toBe('invalid_request')
    expect(server.requests).toHaveLength(0)
  })

  it('sends the system prompt separately, tools with object schemas, max_tokens and stream', async () => {
    server.enqueue(reply().text('ok'))
    await client.generate(
      request([user('hi')], {
        system: 'You are Hangar.',
        maxTokens: 1234,
        tools: [
          {
            name: 'read_file',
            description: 'Reads a file',
            inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
          },
        ],
      }),
    )
    const sent = server.requests[0]
    expect(sent?.path).toBe('/v1/messages')
    // SDK 1.x sends the key as a bearer token.
    expect(sent?.headers.authorization).toBe('Bearer sk-ant-test-key-0000000000')
    expect(sent?.body).toMatchObject({
      model: 'claude-mock',
      system: 'You are Hangar.',
      max_tokens: 1234,
      stream: true,
      tools: [
        {
          name: 'read_file',
          description: 'Reads a file',
          input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        },
      ],
    })
  })

  it('refuses a history with an unanswered call without sending it', async () => {
    const error = await client
      .generate(request([user('go'), calls('toolu_a'), user('next')]))
      .catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'invalid_request' })
    expect((error as AppError).details?.problems).toEqual([expect.stringContaining('toolu_a')])
    expect(server.requests).toHaveLength(0)
  })
})
