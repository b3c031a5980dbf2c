// The one redactor: a single instance built by createRuntime and passed to the logger, the event writer,
// the store (messages, audit details, action results), the built-in agent's tool results and the API
// reads that may meet data stored before redaction existed. Two nets: values under secret-sounding keys
// are replaced whole, and secret-shaped substrings (our tokens, well-known provider key formats, plus
// every value registered at run time: environment keys, the instance keys, vaulted keys, the daemon's
// CLI session) are cut out of free text.
//
// It runs on every event, so it is built for speed: all registered values form one literal alternation
// and all shapes another, each scanned once; a string is returned as it is when neither matches.

export const REDACTED = '[redacted]'

/**
 * Secret shapes as one alternation (one scan instead of one per shape). Our tokens are matched without
 * word boundaries and with any tail of 16+ characters, so a token glued to other text, cut short or
 * padded is still cut out (a real one is `hg[rsl]_` + 12 base32 + `_` + 38 base62, see secret-token.ts).
 */
const SECRET_SHAPES = new RegExp(
  [
    'hg[rsl]_[a-z2-7]{12}_[0-9A-Za-z]{16,}', // Hangar PATs, sessions, login links
    '\\bsk-ant-[A-Za-z0-9_-]{16,}', // Anthropic
    '\\bsk-(?:proj-|or-v1-)?[A-Za-z0-9_-]{20,}', // OpenAI, OpenRouter
    '\\bAIza[0-9A-Za-z_-]{30,}', // Google
    '\\b(?:ghp|gho|ghu|ghs|github_pat)_[A-Za-z0-9_]{20,}', // GitHub
    '\\b(Bearer|Basic)\\s+[A-Za-z0-9._~+/=-]{12,}', // Authorization header values in text
  ].join('|'),
  'g',
)

const SECRET_KEY =
  /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|x-goog-api-key|api[-_]?key|token|secret|password|passphrase|key_envelope|keyenvelope|secret_hash|secrethash|private[-_]?key)$/i

/** Nesting past this is stringified and redacted as text, never passed through unredacted. */
const MAX_DEPTH = 32
/** Registered values shorter than this would redact ordinary words; nothing real is that short. */
const MIN_SECRET_LENGTH = 8

export interface Redactor {
  /** Registers an exact value (e.g. a key read from the environment) to be cut out wherever it appears. */
  add(secret: string | undefined | null): void
  text(value: string): string
  /** A deep copy with secrets replaced; errors become `{ name, message }`. */
  value<T>(value: T): T
}

const escapeRegExp = (value: string) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

export function createRedactor(): Redactor {
  const known = new Set<string>()
  // Rebuilt lazily after an `add`: registrations are rare, redactions constant.
  let knownPattern: RegExp | null = null
  let knownDirty = false

  const knownRegExp = (): RegExp | null => {
    if (knownDirty) {
      knownDirty = false
      // Longest first: where one registered value starts with another, the whole of it goes.
      const alternatives = [...known].sort((a, b) => b.length - a.length).map(escapeRegExp)
      knownPattern = alternatives.length > 0 ? new RegExp(alternatives.join('|'), 'g') : null
    }
    return knownPattern
  }

  const replaceShape = (match: string, scheme: string | undefined) =>
    scheme === undefined ? REDACTED : `${scheme} ${REDACTED}`

  const redactText = (input: string): string => {
    // Exact values first: a shape starting earlier could otherwise consume only part of one.
    const exact = knownRegExp()
    let output = input
    if (exact) {
      exact.lastIndex = 0
      if (exact.test(output)) output = output.replace(exact, REDACTED)
    }
    SECRET_SHAPES.lastIndex = 0
    if (!SECRET_SHAPES.test(output)) return output
    return output.replace(SECRET_SHAPES, replaceShape)
  }

  const redactValue = (input: unknown, depth: number): unknown => {
    if (typeof input === 'string') return redactText(input)
    if (input === null || typeof input !== 'object') return input
    if (input instanceof Error) return { name: input.name, message: redactText(input.message) }
    if (depth > MAX_DEPTH) return redactText(safeStringify(input))
    if (Array.isArray(input)) return input.map((item) => redactValue(item, depth + 1))
    const output: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(input)) {
      output[key] =
        SECRET_KEY.test(key) && item !== null && item !== undefined ? REDACTED : redactValue(item, depth + 1)
    }
    return output
  }

  const register = (secret: string) => {
    if (secret.length < MIN_SECRET_LENGTH || known.has(secret)) return
    known.add(secret)
    knownDirty = true
  }

  return {
    add(secret) {
      if (!secret) return
      const trimmed = secret.trim()
      register(trimmed)
      // The same value as it appears in a URL or a query string (base64 keys hold + / =).
      register(encodeURIComponent(trimmed))
    },
    text: redactText,
    value: <T>(input: T) => redactValue(input, 0) as T,
  }
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? ''
  } catch {
    return '[unserializable]'
  }
}
