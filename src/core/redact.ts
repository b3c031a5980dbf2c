// Secret redaction shared by the logger and (later) the one event writer. Two nets: values under
// secret-sounding keys are replaced whole, and secret-shaped substrings (our tokens, well-known provider
// key formats, plus any value registered at run time such as a key read from the environment) are cut
// out of free text.

export const REDACTED = '[redacted]'

const SECRET_SHAPES = [
  /\bhg[rsl]_[a-z2-7]{12}_[0-9A-Za-z]{38}\b/g, // Hangar PATs, sessions, login links
  /\bsk-ant-[A-Za-z0-9_-]{16,}/g, // Anthropic
  /\bsk-(?:proj-|or-v1-)?[A-Za-z0-9_-]{20,}/g, // OpenAI, OpenRouter
  /\bAIza[0-9A-Za-z_-]{30,}/g, // Google
  /\b(?:ghp|gho|ghu|ghs|github_pat)_[A-Za-z0-9_]{20,}/g, // GitHub
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{12,}/g, // Authorization header values in text
]

const SECRET_KEY =
  /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|x-goog-api-key|api[-_]?key|token|secret|password|passphrase|key_envelope|keyenvelope|secret_hash|secrethash|private[-_]?key)$/i

export interface Redactor {
  /** Registers an exact value (e.g. a key read from the environment) to be cut out wherever it appears. */
  add(secret: string | undefined | null): void
  text(value: string): string
  /** A deep copy with secrets replaced; non-plain objects are stringified first. */
  value<T>(value: T): T
}

export function createRedactor(): Redactor {
  const known = new Set<string>()
  const redactText = (input: string): string => {
    let output = input
    for (const secret of known) if (output.includes(secret)) output = output.split(secret).join(REDACTED)
    for (const shape of SECRET_SHAPES) {
      output = output.replace(shape, (_match, scheme?: string) =>
        typeof scheme === 'string' && /^(Bearer|Basic)$/.test(scheme) ? `${scheme} ${REDACTED}` : REDACTED,
      )
    }
    return output
  }
  const redactValue = (input: unknown, depth: number): unknown => {
    if (typeof input === 'string') return redactText(input)
    if (input === null || typeof input !== 'object' || depth > 8) return input
    if (Array.isArray(input)) return input.map((item) => redactValue(item, depth + 1))
    if (input instanceof Error) return { name: input.name, message: redactText(input.message) }
    const output: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(input)) {
      output[key] =
        SECRET_KEY.test(key) && item !== null && item !== undefined ? REDACTED : redactValue(item, depth + 1)
    }
    return output
  }
  return {
    add(secret) {
      // Very short values would redact ordinary words; nothing real is that short.
      if (secret && secret.length >= 8) known.add(secret)
    },
    text: redactText,
    value: <T>(input: T) => redactValue(input, 0) as T,
  }
}
