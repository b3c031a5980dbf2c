import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { reply, startMockModelServer, type MockModelServer } from '../../test/fixtures/mock-model-server.js'
import type { Message } from '../core/messages.js'
import { createLlmClient, DEFAULT_BASE_URLS } from './create-llm-client.js'

let server: MockModelServer

beforeAll(async () => {
  server = await startMockModelServer()
})
afterAll(() => server.close())
beforeEach(() => server.reset())

type SentBlock = Record<string, unknown>

describe('create-llm-client', () => {
  it('picks the Anthropic client for anthropic and the OpenAI-compatible one for every other name', () => {
    expect(createLlmClient({ provider: 'anthropic', apiKey: 'k' })).toMatchObject({
      provider: 'anthropic',
      family: 'anthropic',
    })
    for (const provider of ['openai', 'openrouter', 'ollama', 'gemini']) {
      expect(createLlmClient({ provider })).toMatchObject({ provider, family: 'openai' })
    }
    expect(createLlmClient({ provider: 'lmstudio', baseUrl: 'http://127.0.0.1:1234/v1' })).toMatchObject({
      provider: 'lmstudio',
      family: 'openai',
    })
  })

  it('knows the default base URLs', () => {
    expect(DEFAULT_BASE_URLS).toEqual({
      anthropic: 'https://api.anthropic.com',
      openai: 'https://api.openai.com/v1',
      openrouter: 'https://openrouter.ai/api/v1',
      ollama: 'http://127.0.0.1:11434/v1',
      gemini: 'https://generativelanguage.googleapis.com/v1beta/openai',
    })
  })

  it('requires a base URL for a custom provider name, and a valid one', () => {
    expect(() => createLlmClient({ provider: 'my-vllm' })).toThrow(
      expect.objectContaining({ code: 'invalid_request' }),
    )
    expect(() => createLlmClient({ provider: 'my-vllm', baseUrl: 'not a url' })).toThrow(
      expect.objectContaining({ code: 'invalid_request' }),
    )
  })

  it('uses the injected fetch and appends the compatibility path to a bare Gemini root', async () => {
    const urls: string[] = []
    const recordingFetch: typeof fetch = (input) => {
      urls.push(String(input instanceof Request ? input.url : input))
      return Promise.reject(new Error('offline'))
    }
    const gemini = createLlmClient({
      provider: 'gemini',
      baseUrl: 'https://generativelanguage.googleapis.com',
      fetch: recordingFetch,
    })
    await expect(gemini.generate({ model: 'gemini-mock', messages: [], tools: [] })).rejects.toMatchObject({
      code: 'upstream_error',
      retryable: true,
    })
    expect(urls).toEqual(['https://generativelanguage.googleapis.com/v1beta/openai/chat/completions'])
  })

  it('carries a conversation from an OpenAI-compatible model to Anthropic and back', async () => {
    const openai = createLlmClient({ provider: 'openrouter', baseUrl: `${server.url}/api/v1`, apiKey: 'k1' })
    const anthropic = createLlmClient({ provider: 'anthropic', baseUrl: server.url, apiKey: 'k2' })
    const history: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'read a and b' }] }]

    server.enqueue(
      reply()
        .reasoning('plan')
        .tool('read_file', { path: 'a' }, { id: 'call.1:x' })
        .tool('read_file', { path: 'b' }, { id: 'call.2:y' }),
    )
    const first = await openai.generate({ model: 'm', messages: history, tools: [] })
    expect(first.toolCalls?.map((call) => call.id)).toEqual(['call.1:x', 'call.2:y'])
    history.push(first)
    history.push({ role: 'tool', toolCallId: 'call.2:y', toolName: 'read_file', content: 'B' })
    history.push({ role: 'tool', toolCallId: 'call.1:x', toolName: 'read_file', content: 'A' })

    server.enqueue(reply().reasoning('compare', 'sig-9').text('Both read.'))
    const second = await anthropic.generate({ model: 'claude-mock', messages: history, tools: [] })
    const toAnthropic = server.requests[1]?.body as {
      messages: Array<{ role: string; content: SentBlock[] }>
    }
    const assistant = toAnthropic.messages[1]
    const results = toAnthropic.messages[2]
    // OpenRouter's reasoning is not Anthropic's to verify, so it is not replayed.
    expect(assistant?.content.map((block) => block.type)).toEqual(['tool_use', 'tool_use'])
    expect(results?.content.map((block) => block.tool_use_id)).toEqual(
      assistant?.content.map((block) => block.id),
    )
    expect(results?.content.map((block) => block.content)).toEqual(['A', 'B'])

    history.push(second, { role: 'user', content: [{ type: 'text', text: 'thanks' }] })
    server.enqueue(reply().reasoning('again', 'sig-10').text('You are welcome.'))
    await anthropic.generate({ model: 'claude-mock', messages: history, tools: [] })
    const replayed = server.requests[2]?.body as { messages: Array<{ content: SentBlock[] }> }
    expect(replayed.messages[3]?.content).toEqual([
      { type: 'thinking', thinking: 'compare', signature: 'sig-9' },
      { type: 'text', text: 'Both read.' },
    ])

    server.enqueue(reply().text('ok'))
    await openai.generate({ model: 'm', messages: history, tools: [] })
    const backToOpenAI = server.requests[3]?.body as { messages: Array<Record<string, unknown>> }
    expect(backToOpenAI.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'assistant',
      'user',
    ])
    expect(backToOpenAI.messages[2]).toEqual({ role: 'tool', tool_call_id: 'call.1:x', content: 'A' })
    expect(backToOpenAI.messages[4]).toEqual({ role: 'assistant', content: 'Both read.' })
  })
})
