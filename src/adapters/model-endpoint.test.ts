import { describe, expect, it } from 'vitest'
import { defaultEndpointFor, endpointForAdapter } from './model-endpoint.js'

describe('model-endpoint', () => {
  it('is undefined when nothing names a base URL or a key', () => {
    expect(defaultEndpointFor('anthropic', {})).toBeUndefined()
    expect(defaultEndpointFor('gemini', { GEMINI_API_KEY: '  ' })).toBeUndefined()
  })

  it('reads the usual environment variables, a key alone meaning the public endpoint', () => {
    expect(defaultEndpointFor('anthropic', { ANTHROPIC_API_KEY: 'sk-a' })).toEqual({
      family: 'anthropic',
      baseUrl: 'https://api.anthropic.com',
      apiKey: 'sk-a',
    })
    expect(defaultEndpointFor('openai-responses', { OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1/' })).toEqual(
      {
        family: 'openai-responses',
        baseUrl: 'http://127.0.0.1:11434/v1',
      },
    )
    expect(defaultEndpointFor('gemini', { GOOGLE_GEMINI_BASE_URL: 'http://g', GEMINI_API_KEY: 'k' })).toEqual(
      {
        family: 'gemini',
        baseUrl: 'http://g',
        apiKey: 'k',
      },
    )
  })

  it('prefers hangar.yaml providers, with their key variable and model', () => {
    const providers = {
      openai: { baseUrl: 'https://openrouter.example/api/v1', apiKeyEnv: 'ROUTER_KEY', model: 'gpt-x' },
    }
    const env = { OPENAI_BASE_URL: 'http://ignored/v1', OPENAI_API_KEY: 'ignored', ROUTER_KEY: 'rk' }
    expect(defaultEndpointFor('openai-chat', env, providers)).toEqual({
      family: 'openai-chat',
      baseUrl: 'https://openrouter.example/api/v1',
      apiKey: 'rk',
      model: 'gpt-x',
    })
  })

  it('picks the first family of the adapter that has an endpoint', () => {
    const adapter = { endpointFamilies: ['openai-chat', 'anthropic'] as const }
    expect(endpointForAdapter(adapter, { ANTHROPIC_API_KEY: 'a' })?.family).toBe('anthropic')
    expect(endpointForAdapter(adapter, { ANTHROPIC_API_KEY: 'a', OPENAI_API_KEY: 'o' })?.family).toBe(
      'openai-chat',
    )
    expect(endpointForAdapter({ endpointFamilies: [] }, { ANTHROPIC_API_KEY: 'a' })).toBeUndefined()
  })
})
