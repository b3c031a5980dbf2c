// Which wire format a proxied path speaks, and whether feeds may be injected into it. The URL names a
// family (`anthropic`, `openai`, `gemini`); OpenAI's URL family carries two wire formats (Chat Completions
// and Responses). Only generation endpoints are injectable: `count_tokens`, `/models` and the rest pass
// through untouched.
export type ProxyFamily = 'anthropic' | 'openai-chat' | 'openai-responses' | 'gemini'

export interface ProxyRoute {
  family: ProxyFamily
  injectable: boolean
  /** Set when the path alone says whether the response streams (Gemini); others say so in the body. */
  stream?: boolean
}

// Gemini puts the method after a colon, which some clients percent-encode.
const GEMINI_METHOD = /(?::|%3[aA])(generateContent|streamGenerateContent)$/

export function familyOfPath(urlFamily: 'anthropic' | 'openai' | 'gemini', rest: string): ProxyRoute {
  const path = rest.replace(/\/+$/, '')
  switch (urlFamily) {
    case 'anthropic':
      return { family: 'anthropic', injectable: path.endsWith('/messages') }
    case 'openai':
      if (path.endsWith('/chat/completions')) return { family: 'openai-chat', injectable: true }
      if (path.endsWith('/responses')) return { family: 'openai-responses', injectable: true }
      return { family: 'openai-chat', injectable: false }
    case 'gemini': {
      const method = GEMINI_METHOD.exec(path)?.[1]
      if (method === 'generateContent') return { family: 'gemini', injectable: true, stream: false }
      if (method === 'streamGenerateContent') return { family: 'gemini', injectable: true, stream: true }
      return { family: 'gemini', injectable: false }
    }
  }
}
