// A feed response may start with a YAML frontmatter block whose `ttl` overrides the declared TTL for that
// value. Only `ttl` means anything to us, so this reads that one key instead of parsing YAML; the whole
// block is stripped either way so the model never sees it.

const TTL_UNIT_SECONDS = { '': 1, s: 1, m: 60, h: 3600 } as const

export function splitFrontmatter(text: string): { body: string; ttlSeconds?: number } {
  const opening = text.startsWith('---\n') ? 4 : text.startsWith('---\r\n') ? 5 : 0
  if (opening === 0) return { body: text }
  let lineStart = opening
  while (lineStart <= text.length) {
    const newline = text.indexOf('\n', lineStart)
    const lineEnd = newline === -1 ? text.length : newline
    const line = text.slice(lineStart, lineEnd).replace(/\r$/, '')
    if (line.trimEnd() === '---') {
      const body = newline === -1 ? '' : text.slice(newline + 1)
      const ttlSeconds = readTtl(text.slice(opening, lineStart))
      return ttlSeconds === undefined ? { body } : { body, ttlSeconds }
    }
    if (newline === -1) break
    lineStart = newline + 1
  }
  return { body: text }
}

/** `ttl: 60`, `60s`, `5m`, `1h`, or a decimal; quoted or with a trailing `# comment`. Else undefined. */
function readTtl(block: string): number | undefined {
  const line = /^ttl[ \t]*:(.*)$/m.exec(block)
  if (!line) return undefined
  const value = line[1]!
    .replace(/\s#.*$/, '')
    .trim()
    .replace(/^(["'])(.*)\1$/, '$2')
  const match = /^(\d+(?:\.\d+)?|\.\d+)[ \t]*([smh]?)$/.exec(value)
  if (!match) return undefined
  const seconds = Number(match[1]) * TTL_UNIT_SECONDS[match[2] as keyof typeof TTL_UNIT_SECONDS]
  return Number.isFinite(seconds) && seconds > 0 ? seconds : undefined
}
