/** Every adapter id, in registry order (detection and `defaultAgent` fall back in this order). */
export const ADAPTER_IDS = [
  'claude-code',
  'codex',
  'gemini',
  'opencode',
  'copilot',
  'openclaw',
  'cursor-agent',
  'builtin',
] as const

export type AdapterId = (typeof ADAPTER_IDS)[number]

export function isAdapterId(value: string): value is AdapterId {
  return (ADAPTER_IDS as readonly string[]).includes(value)
}
