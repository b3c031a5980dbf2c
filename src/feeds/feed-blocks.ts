// Turns fetched feeds into the text block the proxy injects next to the final user turn. The text depends
// only on the results (no clock), so it stays byte-identical while the values are cached and the provider's
// prompt cache keeps working (a stale value's age comes with its result). Content cannot forge or close a
// block: delimiter-like lines are indented. An empty value still gets a block, saying "(empty)", so the
// model can tell a feed with nothing to say from one that is missing.

import type { FeedResult, FeedStatus } from './feed-fetcher.js'

export interface FeedCaps {
  perFeedBytes: number
  totalBytes: number
}

export interface InjectedFeedSummary {
  name: string
  source: string
  status: FeedStatus | 'skipped'
  /** Bytes of this feed's block as injected; 0 when skipped. */
  bytes: number
  truncated: boolean
  /** ISO-8601 UTC to the second. */
  refreshedAt?: string
  reason?: string
}

// Anything that starts like one of our delimiter lines, however many dashes and spaces.
const DELIMITER_LIKE_LINE = /^(?=-{3,}[ \t]*(?:BEGIN[ \t]+FEED|END[ \t]+FEED|FEED)[ \t]*:)/gim

/**
 * The blocks of `results`, and a summary per feed for the request log. Every request while the values are
 * cached gets the same result objects (feed-fetcher), so the same answer: it is kept per first result and
 * shared — callers must not change it.
 */
export function formatFeedBlocks(results: readonly FeedResult[], caps: FeedCaps): FormattedFeeds {
  const first = results[0]
  if (first === undefined) return buildFeedBlocks(results, caps)
  const known = formatted.get(first)
  if (
    known?.perFeedBytes === caps.perFeedBytes &&
    known.totalBytes === caps.totalBytes &&
    known.results.length === results.length &&
    known.results.every((result, index) => result === results[index])
  )
    return known.answer
  const answer = buildFeedBlocks(results, caps)
  formatted.set(first, { results: [...results], ...caps, answer })
  return answer
}

type FormattedFeeds = { text: string; feeds: InjectedFeedSummary[] }

const formatted = new WeakMap<FeedResult, FeedCaps & { results: FeedResult[]; answer: FormattedFeeds }>()

function buildFeedBlocks(results: readonly FeedResult[], caps: FeedCaps): FormattedFeeds {
  const parts: string[] = []
  const feeds: InjectedFeedSummary[] = []
  let usedBytes = 0
  for (const result of results) {
    const summary: InjectedFeedSummary = {
      name: result.feed.name,
      source: result.feed.source,
      status: result.status,
      bytes: 0,
      truncated: false,
    }
    if (result.refreshedAt) summary.refreshedAt = isoSeconds(result.refreshedAt)
    if (result.reason !== undefined) summary.reason = result.reason
    feeds.push(summary)
    const { block, bytes } = blockOf(result, caps.perFeedBytes)
    if (usedBytes + bytes > caps.totalBytes) {
      summary.status = 'skipped'
      parts.push(`--- FEED: ${result.feed.name} skipped (total feed size cap reached) ---`)
      continue
    }
    usedBytes += bytes
    summary.bytes = bytes
    summary.truncated = block.truncated
    parts.push(block.text)
  }
  return { text: parts.join('\n\n'), feeds }
}

// A cached feed value is served as the same result object until it changes (feed-fetcher): its block is
// built once, not on every model request.
const blocks = new WeakMap<FeedResult, { perFeedBytes: number; block: Block; bytes: number }>()

function blockOf(result: FeedResult, perFeedBytes: number): { block: Block; bytes: number } {
  const known = blocks.get(result)
  if (known?.perFeedBytes === perFeedBytes) return known
  const block = buildBlock(result, perFeedBytes)
  const built = { perFeedBytes, block, bytes: Buffer.byteLength(block.text) }
  blocks.set(result, built)
  return built
}

interface Block {
  text: string
  truncated: boolean
}

function buildBlock(result: FeedResult, perFeedBytes: number): { text: string; truncated: boolean } {
  const { name, source } = result.feed
  const end = `--- END FEED: ${name} ---`
  if (result.status === 'unavailable') {
    const reason = oneLine(result.reason ?? 'unknown error')
    return {
      text: `--- BEGIN FEED: ${name} (from ${source}, unavailable) ---\n[Feed unavailable: ${reason}]\n${end}`,
      truncated: false,
    }
  }
  const content = result.content.replace(/(?:\r?\n)+$/, '')
  const refreshed = result.refreshedAt ? isoSeconds(result.refreshedAt) : 'unknown'
  const age = result.ageSeconds === undefined ? '' : `, age ${humanAge(result.ageSeconds)}`
  const stale =
    result.status === 'stale' ? `${age}, STALE: ${oneLine(result.reason ?? 'refresh failed')}` : ''
  const header = `--- BEGIN FEED: ${name} (from ${source}, refreshed ${refreshed}${stale}) ---`
  if (content.trim() === '') return { text: `${header}\n(empty)\n${end}`, truncated: false }

  const { kept, keptBytes, truncated } = cutUtf8(content, perFeedBytes)
  const safe = kept.replace(DELIMITER_LIKE_LINE, '  ')
  const lines = [header, result.json ? fenced(safe) : safe]
  if (truncated) {
    const total = result.totalBytes === undefined ? 'unknown' : String(result.totalBytes)
    lines.push(`[Content truncated: showing ${keptBytes} of ${total} bytes]`)
  }
  lines.push(end)
  return { text: lines.join('\n'), truncated }
}

/** The longest prefix of at most `maxBytes` UTF-8 bytes that does not split a character. */
function cutUtf8(content: string, maxBytes: number): { kept: string; keptBytes: number; truncated: boolean } {
  const bytes = Buffer.from(content, 'utf8')
  if (bytes.byteLength <= maxBytes) return { kept: content, keptBytes: bytes.byteLength, truncated: false }
  let end = Math.max(0, maxBytes)
  // Back off continuation bytes (10xxxxxx) so the cut lands on the first byte of a character.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--
  return { kept: bytes.subarray(0, end).toString('utf8'), keptBytes: end, truncated: true }
}

/** A fence longer than any backtick run at the start of a content line, so content cannot close it. */
function fenced(content: string): string {
  const longestRun = Math.max(2, ...[...content.matchAll(/^`{3,}/gm)].map((match) => match[0].length))
  const fence = '`'.repeat(longestRun + 1)
  return `${fence}json\n${content}\n${fence}`
}

/** Whole seconds as the largest unit that fits, rounded down: `42 s`, `14 m`, `3 h`, `2 d`. */
function humanAge(seconds: number): string {
  if (seconds < 60) return `${seconds} s`
  if (seconds < 3600) return `${Math.floor(seconds / 60)} m`
  if (seconds < 48 * 3600) return `${Math.floor(seconds / 3600)} h`
  return `${Math.floor(seconds / 86400)} d`
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}

function isoSeconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z')
}
