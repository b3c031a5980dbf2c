// Reads token usage from a model response on the side while the proxy passes it through, for every wire
// family, as JSON or as SSE. Buckets are disjoint (uncached input, cache read, cache write, output): the
// OpenAI and Gemini prompt counts include cached tokens, so those are subtracted. Streams are split into
// lines as they come and only lines that can carry usage are parsed (cheap substring checks first; for
// families that repeat usage on many chunks only the last such line is kept and parsed at the end).
// Garbage never throws: it just yields no usage.
import { StringDecoder } from 'node:string_decoder'
import type { ProxyFamily } from './families.js'

export interface MeteredUsage {
  model?: string
  /** Uncached input tokens. */
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  /** A cost the provider reported itself (OpenRouter's `usage.cost`), in USD. */
  providerCostUsd?: number
}

export interface UsageMeter {
  /** The decoded response body, in chunks split anywhere. */
  push(chunk: Buffer): void
  /** After the body ended: the usage seen, or undefined when there was none. */
  result(): MeteredUsage | undefined
}

/** A response's usage, read when first asked for (once its answer is out: after-answer-queue), then kept. */
export type UsageReading = () => MeteredUsage | undefined

export const NO_USAGE: UsageReading = () => undefined

/** The meter's result as a reading: taken once, on the first call. */
export function readingOf(meter: UsageMeter): UsageReading {
  let read = false
  let usage: MeteredUsage | undefined
  return () => {
    if (!read) {
      read = true
      usage = meter.result()
    }
    return usage
  }
}

type Tokens = Omit<MeteredUsage, 'model'>
type JsonObject = Record<string, unknown>

const JSON_BODY_LIMIT = 16 * 1024 * 1024

function asObject(value: unknown): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as JsonObject)
    : undefined
}

/** The most a request-log column holds (a 32-bit integer on PostgreSQL): far above any real request's tokens. */
const MAX_TOKENS = 2_147_483_647

/** A token count: a whole number (the request log's columns hold no fractions). */
function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** Anthropic usage is already disjoint; `previous` holds what earlier events said (fields present override). */
function anthropicTokens(usage: JsonObject, previous: Tokens | undefined): Tokens {
  return {
    inputTokens: count(usage.input_tokens) ?? previous?.inputTokens ?? 0,
    outputTokens: count(usage.output_tokens) ?? previous?.outputTokens ?? 0,
    cacheReadTokens: count(usage.cache_read_input_tokens) ?? previous?.cacheReadTokens ?? 0,
    cacheWriteTokens: count(usage.cache_creation_input_tokens) ?? previous?.cacheWriteTokens ?? 0,
  }
}

/** Chat Completions (`prompt_tokens`) and Responses (`input_tokens`): the input count includes cached tokens. */
function openAiTokens(usage: JsonObject, family: 'openai-chat' | 'openai-responses'): Tokens {
  const chat = family === 'openai-chat'
  const input = count(chat ? usage.prompt_tokens : usage.input_tokens) ?? 0
  const details = asObject(chat ? usage.prompt_tokens_details : usage.input_tokens_details)
  const cached = Math.min(count(details?.cached_tokens) ?? 0, input)
  // Routers that front Anthropic (OpenRouter) also count cache writes inside the input.
  const written = Math.min(count(details?.cache_write_tokens) ?? 0, input - cached)
  const tokens: Tokens = {
    inputTokens: input - cached - written,
    outputTokens: count(chat ? usage.completion_tokens : usage.output_tokens) ?? 0,
    cacheReadTokens: cached,
    cacheWriteTokens: written,
  }
  const cost = typeof usage.cost === 'number' && Number.isFinite(usage.cost) ? usage.cost : undefined
  if (cost !== undefined) tokens.providerCostUsd = cost
  return tokens
}

function geminiTokens(metadata: JsonObject): Tokens {
  const prompt = count(metadata.promptTokenCount) ?? 0
  const cached = Math.min(count(metadata.cachedContentTokenCount) ?? 0, prompt)
  return {
    // Tool-use prompt tokens are billed as input but counted apart from the prompt.
    inputTokens: prompt - cached + (count(metadata.toolUsePromptTokenCount) ?? 0),
    outputTokens: (count(metadata.candidatesTokenCount) ?? 0) + (count(metadata.thoughtsTokenCount) ?? 0),
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
  }
}

/** Usage and model from a whole JSON response body. */
function fromJsonBody(family: ProxyFamily, body: unknown): { tokens?: Tokens; model?: string } {
  if (family === 'gemini') {
    // A non-SSE stream is one JSON array of responses; the last usageMetadata is the total.
    const items = Array.isArray(body) ? body : [body]
    for (let index = items.length - 1; index >= 0; index--) {
      const item = asObject(items[index])
      const metadata = asObject(item?.usageMetadata)
      if (item && metadata) return { tokens: geminiTokens(metadata), model: stringOf(item.modelVersion) }
    }
    return {}
  }
  const object = asObject(body)
  const usage = asObject(object?.usage)
  if (!object || !usage) return {}
  const tokens = family === 'anthropic' ? anthropicTokens(usage, undefined) : openAiTokens(usage, family)
  return { tokens, model: stringOf(object.model) }
}

// Substrings a data line must contain to be worth a look, per family.
const OPENAI_CHAT_USAGE = /"usage"\s*:\s*\{/
const RESPONSES_FINAL = ['"response.completed"', '"response.incomplete"', '"response.failed"']

/** Reads SSE `data:` lines; Anthropic lines are parsed as they come, the others' last candidate at the end. */
function createSseReader(family: ProxyFamily) {
  let tokens: Tokens | undefined
  let model: string | undefined
  let lastCandidate: string | undefined

  function readAnthropic(data: JsonObject): void {
    if (data.type === 'message_start') {
      const message = asObject(data.message)
      const usage = asObject(message?.usage)
      model = stringOf(message?.model) ?? model
      if (usage) tokens = anthropicTokens(usage, tokens)
    } else if (data.type === 'message_delta') {
      const usage = asObject(data.usage)
      if (usage) tokens = anthropicTokens(usage, tokens)
    }
  }

  function readCandidate(data: JsonObject): void {
    if (family === 'openai-chat') {
      const usage = asObject(data.usage)
      if (usage) tokens = openAiTokens(usage, family)
      model = stringOf(data.model) ?? model
    } else if (family === 'openai-responses') {
      const response = asObject(data.response)
      const usage = asObject(response?.usage)
      if (usage) tokens = openAiTokens(usage, family)
      model = stringOf(response?.model) ?? model
    } else {
      const metadata = asObject(data.usageMetadata)
      if (metadata) tokens = geminiTokens(metadata)
      model = stringOf(data.modelVersion) ?? model
    }
  }

  function isCandidate(line: string): boolean {
    switch (family) {
      case 'anthropic':
        return line.includes('"message_start"') || line.includes('"message_delta"')
      case 'openai-chat':
        return line.includes('"usage"') && OPENAI_CHAT_USAGE.test(line)
      case 'openai-responses':
        return RESPONSES_FINAL.some((marker) => line.includes(marker))
      case 'gemini':
        return line.includes('"usageMetadata"')
    }
  }

  return {
    line(line: string): void {
      if (!line.startsWith('data:') || !isCandidate(line)) return
      if (family !== 'anthropic') {
        lastCandidate = line
        return
      }
      const data = asObject(parseJson(line.slice(5)))
      if (data) readAnthropic(data)
    },
    result(): { tokens?: Tokens; model?: string } {
      if (lastCandidate !== undefined) {
        const data = asObject(parseJson(lastCandidate.slice(5)))
        if (data) readCandidate(data)
        lastCandidate = undefined
      }
      return { tokens, model }
    },
  }
}

type LineSplitter = ReturnType<typeof createLineSplitter>

/** Splits decoded text into lines across chunks without re-scanning what was already seen. */
function createLineSplitter(onLine: (line: string) => void) {
  let tail = ''
  const emit = (line: string) => onLine(line.endsWith('\r') ? line.slice(0, -1) : line)
  return {
    write(text: string): void {
      let newline = text.indexOf('\n')
      if (newline === -1) {
        tail += text
        return
      }
      emit(tail + text.slice(0, newline))
      let start = newline + 1
      while ((newline = text.indexOf('\n', start)) !== -1) {
        emit(text.slice(start, newline))
        start = newline + 1
      }
      tail = text.slice(start)
    },
    end(): void {
      if (tail !== '') emit(tail)
      tail = ''
    },
  }
}

function readSseText(family: ProxyFamily, text: string) {
  const reader = createSseReader(family)
  const splitter = createLineSplitter(reader.line)
  splitter.write(text)
  splitter.end()
  return reader.result()
}

export function createUsageMeter(
  family: ProxyFamily,
  stream: boolean,
  model: string | undefined,
): UsageMeter {
  // A stream that turns out to be JSON (Gemini without alt=sse streams one JSON array) is kept whole.
  let mode: 'undecided' | 'sse' | 'json' = stream ? 'undecided' : 'json'
  const kept: Buffer[] = []
  let keptBytes = 0
  let overflow = false
  // Made when the body turns out to be SSE: a JSON body (most responses) never needs them.
  let sse:
    { decoder: StringDecoder; reader: ReturnType<typeof createSseReader>; splitter: LineSplitter } | undefined
  const sseParts = () => {
    if (sse) return sse
    const reader = createSseReader(family)
    sse = { decoder: new StringDecoder('utf8'), reader, splitter: createLineSplitter(reader.line) }
    return sse
  }

  function keep(chunk: Buffer): void {
    if (overflow) return
    if (keptBytes + chunk.length > JSON_BODY_LIMIT) {
      overflow = true
      kept.length = 0
      return
    }
    kept.push(chunk)
    keptBytes += chunk.length
  }

  function finish(found: { tokens?: Tokens; model?: string }): MeteredUsage | undefined {
    if (!found.tokens) return undefined
    // In the request log's range: an upstream that sends a huge count would otherwise fail its batch's insert,
    // and every row of that batch be written alone.
    const { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens } = found.tokens
    const usage: MeteredUsage = {
      ...found.tokens,
      inputTokens: Math.min(inputTokens, MAX_TOKENS),
      outputTokens: Math.min(outputTokens, MAX_TOKENS),
      cacheReadTokens: Math.min(cacheReadTokens, MAX_TOKENS),
      cacheWriteTokens: Math.min(cacheWriteTokens, MAX_TOKENS),
    }
    const name = found.model ?? model
    if (name !== undefined) usage.model = name
    return usage
  }

  return {
    push(chunk: Buffer): void {
      try {
        if (mode === 'undecided') {
          const text = chunk.toString('latin1').trimStart()
          if (text === '') return
          mode = text.startsWith('{') || text.startsWith('[') ? 'json' : 'sse'
        }
        if (mode === 'json') keep(chunk)
        else {
          const { decoder, splitter } = sseParts()
          splitter.write(decoder.write(chunk))
        }
      } catch {
        // Usage is best effort: a broken body must not break the proxied response.
      }
    },
    result(): MeteredUsage | undefined {
      try {
        if (mode === 'sse') {
          const { decoder, splitter, reader } = sseParts()
          splitter.write(decoder.end())
          splitter.end()
          return finish(reader.result())
        }
        if (overflow || kept.length === 0) return undefined
        const text = Buffer.concat(kept).toString('utf8')
        const body = parseJson(text)
        // A body that is not JSON may still be SSE (a stream the request did not announce).
        return finish(body === undefined ? readSseText(family, text) : fromJsonBody(family, body))
      } catch {
        return undefined
      }
    },
  }
}
