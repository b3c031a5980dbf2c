// Provider names Hangar knows without a `baseUrl` (their public endpoint is known). Its own module so the
// web UI can list them without bundling the config parser.

/** Providers that need no `baseUrl` in hangar.yaml: their public endpoint is known. */
export const KNOWN_PROVIDERS = ['anthropic', 'openai', 'gemini', 'openrouter', 'ollama'] as const
