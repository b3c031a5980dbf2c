// Narrow readers for JSON that arrives from a provider: the wire is untyped, so every field is checked
// before use instead of being cast.

export type JsonRecord = Record<string, unknown>

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export function stringField(value: unknown, key: string): string | undefined {
  if (!isRecord(value)) return undefined
  const field = value[key]
  return typeof field === 'string' ? field : undefined
}

export function numberField(value: unknown, key: string): number | undefined {
  if (!isRecord(value)) return undefined
  const field = value[key]
  return typeof field === 'number' && Number.isFinite(field) ? field : undefined
}

export function recordField(value: unknown, key: string): JsonRecord | undefined {
  if (!isRecord(value)) return undefined
  const field = value[key]
  return isRecord(field) ? field : undefined
}

export function arrayField(value: unknown, key: string): unknown[] {
  if (!isRecord(value)) return []
  const field = value[key]
  return Array.isArray(field) ? field : []
}

/**
 * Tool arguments as the model streamed them: empty means no arguments (`{}`); text that is not a JSON
 * object is kept under `_raw` so the loop can show the model what it sent instead of failing the turn.
 */
export function parseToolArguments(text: string): unknown {
  if (text.trim() === '') return {}
  try {
    const parsed: unknown = JSON.parse(text)
    if (isRecord(parsed)) return parsed
  } catch {}
  return { _raw: text }
}
