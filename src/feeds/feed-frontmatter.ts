// A feed response may start with a YAML frontmatter block whose `ttl` overrides the declared TTL for that
// value and whose `refreshed` (ISO-8601 with a zone) says when the source last refreshed its data. Only
// those keys mean anything to us, so this reads them instead of parsing YAML; the whole block is stripped
// either way so the model never sees it.

const TTL_UNIT_SECONDS = { '': 1, s: 1, m: 60, h: 3600 } as const

export interface Frontmatter {
  body: string
  ttlSeconds?: number
  /** The source's own refresh time of the data. */
  refreshedAt?: Date
}

export function splitFrontmatter(text: string): Frontmatter {
  const opening = text.startsWith('---\n') ? 4 : text.startsWith('---\r\n') ? 5 : 0
  if (opening === 0) return { body: text }
  let lineStart = opening
  while (lineStart <= text.length) {
    const newline = text.indexOf('\n', lineStart)
    const lineEnd = newline === -1 ? text.length : newline
    const line = text.slice(lineStart, lineEnd).replace(/\r$/, '')
    if (line.trimEnd() === '---') {
      const body = newline === -1 ? '' : text.slice(newline + 1)
      const block = text.slice(opening, lineStart)
      const ttlSeconds = readTtl(block)
      const refreshedAt = readRefreshed(block)
      return {
        body,
        ...(ttlSeconds !== undefined && { ttlSeconds }),
        ...(refreshedAt !== undefined && { refreshedAt }),
      }
    }
    if (newline === -1) break
    lineStart = newline + 1
  }
  return { body: text }
}

/** The value of `key:` in the block, unquoted and without a trailing `# comment`. */
function readValue(block: string, key: string): string | undefined {
  const line = new RegExp(`^${key}[ \\t]*:(.*)$`, 'm').exec(block)
  if (!line) return undefined
  return line[1]!
    .replace(/\s#.*$/, '')
    .trim()
    .replace(/^(["'])(.*)\1$/, '$2')
}

/** `ttl: 60`, `60s`, `5m`, `1h`, or a decimal; quoted or with a trailing `# comment`. Else undefined. */
function readTtl(block: string): number | undefined {
  const value = readValue(block, 'ttl')
  if (value === undefined) return undefined
  const match = /^(\d+(?:\.\d+)?|\.\d+)[ \t]*([smh]?)$/.exec(value)
  if (!match) return undefined
  const seconds = Number(match[1]) * TTL_UNIT_SECONDS[match[2] as keyof typeof TTL_UNIT_SECONDS]
  return Number.isFinite(seconds) && seconds > 0 ? seconds : undefined
}

// A date and time with seconds optional and a zone required: a time without a zone means nothing certain.
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})$/

/** `refreshed: 2026-11-25T17:00:00Z` (or with an offset); else undefined. */
function readRefreshed(block: string): Date | undefined {
  const value = readValue(block, 'refreshed')
  const match = value === undefined ? null : ISO_DATE_TIME.exec(value)
  if (!match) return undefined
  const [month, day, hour, minute, second] = match.slice(2, 7).map((part) => Number(part ?? 0))
  if (month! < 1 || month! > 12 || day! < 1 || day! > 31 || hour! > 23 || minute! > 59 || second! > 59)
    return undefined
  const time = Date.parse(value!.replace(' ', 'T'))
  return Number.isFinite(time) ? new Date(time) : undefined
}
