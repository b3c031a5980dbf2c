import { describe, expect, it } from 'vitest'
import { familyOfPath } from './families.js'

describe('familyOfPath', () => {
  const table: [Parameters<typeof familyOfPath>[0], string, ReturnType<typeof familyOfPath>][] = [
    ['anthropic', '/v1/messages', { family: 'anthropic', injectable: true }],
    ['anthropic', '/v1/messages/count_tokens', { family: 'anthropic', injectable: false }],
    ['anthropic', '/v1/models', { family: 'anthropic', injectable: false }],
    ['anthropic', '/v1/messages/batches', { family: 'anthropic', injectable: false }],
    ['openai', '/v1/chat/completions', { family: 'openai-chat', injectable: true }],
    ['openai', '/v1/responses', { family: 'openai-responses', injectable: true }],
    ['openai', '/v1/responses/resp_123/input_items', { family: 'openai-chat', injectable: false }],
    ['openai', '/v1/models', { family: 'openai-chat', injectable: false }],
    ['openai', '/v1/embeddings', { family: 'openai-chat', injectable: false }],
    [
      'gemini',
      '/v1beta/models/gemini-2.5-pro:generateContent',
      { family: 'gemini', injectable: true, stream: false },
    ],
    [
      'gemini',
      '/v1beta/models/gemini-2.5-pro:streamGenerateContent',
      { family: 'gemini', injectable: true, stream: true },
    ],
    [
      'gemini',
      '/v1beta/models/gemini-2.5-flash%3AstreamGenerateContent',
      { family: 'gemini', injectable: true, stream: true },
    ],
    ['gemini', '/v1beta/models/gemini-2.5-pro:countTokens', { family: 'gemini', injectable: false }],
    ['gemini', '/v1beta/models', { family: 'gemini', injectable: false }],
  ]

  it.each(table)('classifies %s %s', (urlFamily, rest, expected) => {
    expect(familyOfPath(urlFamily, rest)).toEqual(expected)
  })
})
