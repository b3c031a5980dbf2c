// Picks the client for a provider name: `anthropic` speaks the Messages API through the official SDK,
// every other name an OpenAI-compatible Chat Completions endpoint. Known names have default base URLs;
// any other name is a custom endpoint and must say where it lives.
import { AppError } from '../core/errors.js'
import { createAnthropicProvider } from './anthropic-provider.js'
import { createOpenAICompatibleProvider } from './openai-compatible-provider.js'
import type { LlmClient } from './types.js'

export const DEFAULT_BASE_URLS: Readonly<Record<string, string>> = {
  anthropic: 'https://api.anthropic.com',
  openai: 'https://api.openai.com/v1',
  openrouter: 'https://openrouter.ai/api/v1',
  ollama: 'http://127.0.0.1:11434/v1',
  // Gemini's OpenAI-compatible endpoint; the native API would need a third translation.
  gemini: 'https://generativelanguage.googleapis.com/v1beta/openai',
}

const GEMINI_OPENAI_PATH = '/v1beta/openai'

export interface LlmClientConfig {
  provider: string
  baseUrl?: string
  apiKey?: string
  fetch?: typeof fetch
  headers?: Record<string, string>
}

/**
 * hangar.yaml documents the Gemini base URL as the API root (what Gemini CLI wants); for the
 * compatibility endpoint a bare root gets its path appended.
 */
export function resolveBaseUrl(provider: string, baseUrl: string | undefined): string | undefined {
  if (baseUrl === undefined || baseUrl === '') return DEFAULT_BASE_URLS[provider]
  if (provider !== 'gemini' || !URL.canParse(baseUrl)) return baseUrl
  const url = new URL(baseUrl)
  return url.pathname === '/' ? `${url.origin}${GEMINI_OPENAI_PATH}` : baseUrl
}

export function createLlmClient(config: LlmClientConfig): LlmClient {
  const baseURL = resolveBaseUrl(config.provider, config.baseUrl)
  if (baseURL === undefined) {
    throw new AppError('invalid_request', `The provider "${config.provider}" needs a base URL`, {
      details: { provider: config.provider, field: 'baseUrl' },
      hint: `Known providers are ${Object.keys(DEFAULT_BASE_URLS).join(', ')}; any other name is an OpenAI-compatible endpoint with an explicit baseUrl.`,
    })
  }
  if (!URL.canParse(baseURL)) {
    throw new AppError(
      'invalid_request',
      `The base URL of provider "${config.provider}" is not a valid URL`,
      {
        details: { provider: config.provider, field: 'baseUrl' },
      },
    )
  }
  const options = { baseURL, apiKey: config.apiKey, fetch: config.fetch, headers: config.headers }
  if (config.provider === 'anthropic') return createAnthropicProvider(options)
  return createOpenAICompatibleProvider({ ...options, name: config.provider })
}
