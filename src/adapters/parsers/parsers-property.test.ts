// Property test for every stream parser: whatever a CLI prints (random bytes, random JSON, real event
// lines cut short or with fields of the wrong type, huge lines), `line()` and `finish()` never throw and
// only return well-formed events. Random but seeded: a failure names its seed, and
// PARSER_FUZZ_SEED=<seed> replays it.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { AGENT_EVENT_TYPES } from '../../core/events.js'
import type { ParserContext, StreamParser } from '../types.js'
import { createClaudeStreamParser } from './claude-stream.js'
import { createCodexStreamParser } from './codex-stream.js'
import { createCopilotStreamParser } from './copilot-stream.js'
import { createCursorStreamParser } from './cursor-stream.js'
import { createGeminiStreamParser } from './gemini-stream.js'
import { createOpenclawEnvelopeParser } from './openclaw-envelope.js'
import { createOpencodeStreamParser } from './opencode-stream.js'
import { isObject, type JsonObject } from './parse-helpers.js'

const PARSERS: Array<[string, (context: ParserContext) => StreamParser]> = [
  ['claude', createClaudeStreamParser],
  ['codex', createCodexStreamParser],
  ['gemini', createGeminiStreamParser],
  ['opencode', createOpencodeStreamParser],
  ['copilot', createCopilotStreamParser],
  ['openclaw', createOpenclawEnvelopeParser],
  ['cursor', createCursorStreamParser],
]
const RECORDINGS = path.resolve(import.meta.dirname, '../../../test/fixtures/recordings')
const CWD = '/tmp/hangar-rec/fuzz'
const SEQUENCES = 40
const LINES_PER_SEQUENCE = 60
const BASE_SEED = Number(process.env.PARSER_FUZZ_SEED ?? 0x5eed)

type Random = () => number

/** mulberry32: small, fast and good enough to spread inputs; the point is reproducibility. */
function createRandom(seed: number): Random {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let value = state
    value = Math.imul(value ^ (value >>> 15), value | 1)
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61)
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296
  }
}

const integer = (random: Random, below: number) => Math.floor(random() * below)
const pick = <T>(random: Random, items: readonly T[]): T => items[integer(random, items.length)] as T

/** Real event lines of one CLI: its recordings without the cwd header, plus the values seen in them. */
function samplesOf(cli: string) {
  const files = existsSync(RECORDINGS)
    ? readdirSync(RECORDINGS).filter((file) => file.startsWith(`${cli}-`))
    : []
  const lines = files
    .flatMap((file) => readFileSync(path.join(RECORDINGS, file), 'utf8').split('\n'))
    .filter((line) => line.trim() !== '' && !line.includes('"recordingCwd"'))
  const keys = new Set<string>(['type', 'subtype', 'id', 'data', 'message', 'content', 'text'])
  const words = new Set<string>(['success', 'error', 'completed', 'started', 'delta', 'text', 'stop'])
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit)
    if (!isObject(value)) return
    for (const [key, inner] of Object.entries(value)) {
      keys.add(key)
      if (typeof inner === 'string' && inner.length < 40) words.add(inner)
      visit(inner)
    }
  }
  for (const line of lines) visit(parseOrUndefined(line))
  return { lines, keys: [...keys], words: [...words] }
}

function parseOrUndefined(line: string): unknown {
  try {
    return JSON.parse(line) as unknown
  } catch {
    return undefined
  }
}

type Samples = ReturnType<typeof samplesOf>

function randomText(random: Random, length: number): string {
  const alphabet = [
    '{',
    '}',
    '[',
    ']',
    '"',
    ':',
    ',',
    '\\',
    ' ',
    '\t',
    'a',
    'Z',
    '0',
    'é',
    '💥',
    '\u0000',
    '\u2028',
    'null',
  ]
  return Array.from({ length }, () =>
    random() < 0.3 ? String.fromCharCode(integer(random, 0x3000)) : pick(random, alphabet),
  ).join('')
}

function randomJson(random: Random, samples: Samples, depth = 0): unknown {
  switch (integer(random, depth > 3 ? 6 : 9)) {
    case 0:
      return null
    case 1:
      return random() < 0.5
    case 2:
      return pick(random, [0, -1, 1, 401, 1e308, -1e-9, 2 ** 53, random() * 1e6])
    case 3:
      return randomText(random, integer(random, 20))
    case 4:
    case 5:
      return pick(random, samples.words)
    case 6:
      return Array.from({ length: integer(random, 4) }, () => randomJson(random, samples, depth + 1))
    default: {
      const object: JsonObject = {}
      for (let index = integer(random, 6); index > 0; index -= 1) {
        object[pick(random, samples.keys)] = randomJson(random, samples, depth + 1)
      }
      return object
    }
  }
}

/** A real line with one to three fields replaced by values of another type, or removed. */
function mutate(random: Random, samples: Samples, line: string): string {
  const value = parseOrUndefined(line)
  // A line that is only a fragment of a document (OpenClaw pretty-prints) gets random text instead.
  if (typeof value !== 'object' || value === null) return `${line}${randomText(random, 5)}`
  // Every place a value sits: a container (as a plain record) and the key or index in it.
  const slots: Array<{ container: Record<string, unknown>; key: string; inArray: boolean }> = []
  const visit = (inner: unknown): void => {
    if (typeof inner !== 'object' || inner === null) return
    const container = inner as Record<string, unknown>
    for (const key of Object.keys(container)) {
      slots.push({ container, key, inArray: Array.isArray(inner) })
      visit(container[key])
    }
  }
  visit(value)
  for (let count = 1 + integer(random, 3); count > 0 && slots.length > 0; count -= 1) {
    const { container, key, inArray } = pick(random, slots)
    if (!inArray && random() < 0.2) delete container[key]
    else container[key] = randomJson(random, samples, 2)
  }
  return JSON.stringify(value)
}

function randomLine(random: Random, samples: Samples): string {
  const line = samples.lines.length > 0 ? pick(random, samples.lines) : '{}'
  switch (integer(random, 6)) {
    case 0:
      return randomText(random, integer(random, 200))
    case 1:
      return JSON.stringify(randomJson(random, samples))
    case 2:
      return line.slice(0, integer(random, line.length))
    case 3:
      return mutate(random, samples, line)
    default:
      return line
  }
}

function hugeLine(random: Random, samples: Samples): string {
  const size = 1_000_000 + integer(random, 2_000_000)
  if (random() < 0.5) return 'x'.repeat(size)
  const value = parseOrUndefined(pick(random, samples.lines))
  if (!isObject(value)) return `{"type":"${'y'.repeat(size)}"}`
  const key = pick(random, Object.keys(value))
  return JSON.stringify({ ...value, [key]: 'z'.repeat(size) })
}

const isString = (value: unknown) => typeof value === 'string'
const isCount = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0
const isOptional = (check: (value: unknown) => boolean) => (value: unknown) =>
  value === undefined || check(value)
const REQUIRED: Record<string, Record<string, (value: unknown) => boolean>> = {
  'text-delta': { text: (value) => isString(value) && value !== '' },
  'reasoning-delta': { text: (value) => isString(value) && value !== '' },
  'tool-call': { toolCallId: isString, name: isString, input: (value) => value !== undefined },
  'tool-result': {
    toolCallId: isString,
    output: (value) => value !== undefined,
    isError: (value) => typeof value === 'boolean',
  },
  'file-change': {
    path: (value) => isString(value) && value !== '',
    kind: (value) => value === 'create' || value === 'modify' || value === 'delete',
    diff: isOptional(isString),
  },
  usage: {
    source: (value) => value === 'agent',
    model: isOptional(isString),
    inputTokens: isCount,
    outputTokens: isCount,
    cacheReadTokens: isCount,
    cacheWriteTokens: isCount,
    costUsd: isOptional(isCount),
  },
  error: { code: isString, message: isString, retryable: (value) => typeof value === 'boolean' },
  raw: { stream: (value) => value === 'stdout' || value === 'stderr', value: isString },
}

function eventProblems(event: unknown): string[] {
  if (!isObject(event)) return ['an event is not an object']
  const type = String(event.type)
  if (!(AGENT_EVENT_TYPES as readonly string[]).includes(type)) return [`unknown event type ${type}`]
  const fields = REQUIRED[type]
  if (!fields) return [`a parser emitted ${type}, which only the run layer may emit`]
  const problems = Object.entries(fields)
    .filter(([key, check]) => !check(event[key]))
    .map(([key]) => `${type}.${key} is malformed: ${JSON.stringify(event[key])?.slice(0, 80)}`)
  try {
    JSON.stringify(event)
  } catch {
    problems.push(`${type} is not serializable`)
  }
  return problems
}

function outcomeProblems(outcome: unknown): string[] {
  if (!isObject(outcome) || typeof outcome.completed !== 'boolean')
    return ['outcome.completed is not a boolean']
  const problems: string[] = []
  const failure = outcome.failure
  if (failure !== undefined && !(isObject(failure) && isString(failure.code) && isString(failure.message))) {
    problems.push('outcome.failure is malformed')
  }
  if (!isOptional((value) => isString(value) && value !== '')(outcome.sessionId))
    problems.push('outcome.sessionId')
  const usage = outcome.usage
  if (usage !== undefined) {
    const checks = REQUIRED.usage ?? {}
    const bad = isObject(usage)
      ? Object.keys(checks).filter((key) => key !== 'source' && !checks[key]?.(usage[key]))
      : ['all']
    if (bad.length > 0) problems.push(`outcome.usage is malformed: ${bad.join(', ')}`)
  }
  return problems
}

function describeLine(line: string): string {
  return line.length > 160 ? `${line.slice(0, 160)}… (${line.length} chars)` : line
}

describe('parsers-property', () => {
  PARSERS.forEach(([cli, createParser], parserIndex) => {
    it(`${cli}: never throws and only returns well-formed events, for any input`, () => {
      const samples = samplesOf(cli)
      expect(samples.lines.length, `${cli} needs sample lines in test/fixtures/recordings`).toBeGreaterThan(0)
      for (let sequence = 0; sequence < SEQUENCES; sequence += 1) {
        const seed = BASE_SEED + parserIndex * 1000 + sequence
        const random = createRandom(seed)
        const parser = createParser({ cwd: CWD })
        const fed: string[] = []
        const emitted: unknown[] = []
        const lineCount = sequence === 0 ? 3 : LINES_PER_SEQUENCE
        for (let index = 0; index < lineCount; index += 1) {
          const line = sequence === 0 ? hugeLine(random, samples) : randomLine(random, samples)
          fed.push(line)
          let events: unknown
          expect(
            () => (events = parser.line(line)),
            `seed ${seed}: line() threw on ${describeLine(line)}`,
          ).not.toThrow()
          expect(Array.isArray(events), `seed ${seed}: line() did not return an array`).toBe(true)
          const problems = (events as unknown[]).flatMap(eventProblems)
          expect(problems, `seed ${seed}: after ${describeLine(line)}`).toEqual([])
          emitted.push(...(events as unknown[]))
          // A line that is not JSON cannot be understood: it must come back as raw, unchanged.
          if (cli !== 'openclaw' && line.trim() !== '' && !line.trim().startsWith('{')) {
            expect(events, `seed ${seed}: non-JSON line not kept as raw`).toEqual([
              { type: 'raw', stream: 'stdout', value: line },
            ])
          }
        }
        let finished: ReturnType<StreamParser['finish']> | undefined
        expect(() => (finished = parser.finish()), `seed ${seed}: finish() threw`).not.toThrow()
        expect(Array.isArray(finished?.events), `seed ${seed}: finish() events`).toBe(true)
        expect([...(finished?.events ?? [])].flatMap(eventProblems), `seed ${seed}: finish() events`).toEqual(
          [],
        )
        expect(outcomeProblems(finished?.outcome), `seed ${seed}: finish() outcome`).toEqual([])
        emitted.push(...(finished?.events ?? []))
        // OpenClaw buffers lines; without an envelope, every line it was given must come back as raw.
        const noEnvelope = JSON.stringify(finished?.outcome) === '{"completed":false}'
        if (
          cli === 'openclaw' &&
          noEnvelope &&
          emitted.every((event) => isObject(event) && event.type === 'raw')
        ) {
          const values = emitted.map((event) => (isObject(event) ? event.value : undefined))
          expect(values, `seed ${seed}: OpenClaw dropped lines`).toEqual(
            fed.filter((line) => line.trim() !== ''),
          )
        }
      }
    })
  })
})
