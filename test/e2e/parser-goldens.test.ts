// Golden tests for the stream parsers: every recorded stdout in test/fixtures/recordings/<cli>-<scenario>.jsonl
// is parsed line by line and `{ events, outcome }` must equal test/fixtures/goldens/<cli>-<scenario>.events.json.
// UPDATE_GOLDENS=1 writes the goldens instead (review the diff before committing them). A recording may start
// with a `{"recordingCwd": "…"}` header: the workspace the CLI ran in, so file paths come out relative.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { format, resolveConfig } from 'prettier'
import { describe, expect, it } from 'vitest'
import { createClaudeStreamParser } from '../../src/adapters/parsers/claude-stream.js'
import { createCodexStreamParser } from '../../src/adapters/parsers/codex-stream.js'
import { createCopilotStreamParser } from '../../src/adapters/parsers/copilot-stream.js'
import { createCursorStreamParser } from '../../src/adapters/parsers/cursor-stream.js'
import { createGeminiStreamParser } from '../../src/adapters/parsers/gemini-stream.js'
import { createOpenclawEnvelopeParser } from '../../src/adapters/parsers/openclaw-envelope.js'
import { createOpencodeStreamParser } from '../../src/adapters/parsers/opencode-stream.js'
import type { ParserContext, StreamParser } from '../../src/adapters/types.js'

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures')
const RECORDINGS = path.join(FIXTURES, 'recordings')
const GOLDENS = path.join(FIXTURES, 'goldens')
const DEFAULT_CWD = '/workspace'
const UPDATE = process.env.UPDATE_GOLDENS === '1'

const PARSERS: Record<string, (context: ParserContext) => StreamParser> = {
  claude: createClaudeStreamParser,
  codex: createCodexStreamParser,
  gemini: createGeminiStreamParser,
  opencode: createOpencodeStreamParser,
  copilot: createCopilotStreamParser,
  openclaw: createOpenclawEnvelopeParser,
  cursor: createCursorStreamParser,
}

const RECORDING_NAME = /^([a-z]+)-(.+)\.jsonl$/

function recordings(): string[] {
  return existsSync(RECORDINGS)
    ? readdirSync(RECORDINGS)
        .filter((file) => file.endsWith('.jsonl'))
        .sort()
    : []
}

/** Replays a recording through its parser, exactly as the supervisor hands lines over. */
function replay(file: string, createParser: (context: ParserContext) => StreamParser): unknown {
  const lines = readFileSync(path.join(RECORDINGS, file), 'utf8').split('\n')
  if (lines.at(-1) === '') lines.pop()
  let cwd = DEFAULT_CWD
  const header = recordingCwd(lines[0])
  if (header !== undefined) {
    cwd = header
    lines.shift()
  }
  const parser = createParser({ cwd })
  const events = lines.flatMap((line) => parser.line(line))
  const finished = parser.finish()
  // Through JSON, as goldens are stored: absent and undefined fields compare the same.
  return JSON.parse(JSON.stringify({ events: [...events, ...finished.events], outcome: finished.outcome }))
}

function recordingCwd(line: string | undefined): string | undefined {
  try {
    const value: unknown = JSON.parse(line ?? '')
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
    const cwd = (value as Record<string, unknown>).recordingCwd
    return typeof cwd === 'string' ? cwd : undefined
  } catch {
    return undefined
  }
}

async function writeGolden(file: string, value: unknown): Promise<void> {
  mkdirSync(GOLDENS, { recursive: true })
  const options = (await resolveConfig(file)) ?? {}
  writeFileSync(file, await format(JSON.stringify(value, null, 2), { ...options, parser: 'json' }))
}

describe('parser goldens', () => {
  const files = recordings()

  it('has at least one recording for every parser', () => {
    const covered = new Set(files.map((file) => RECORDING_NAME.exec(file)?.[1]))
    expect(Object.keys(PARSERS).filter((cli) => !covered.has(cli))).toEqual([])
  })

  it('has a recording for every golden', () => {
    const goldens = existsSync(GOLDENS)
      ? readdirSync(GOLDENS).filter((file) => file.endsWith('.events.json'))
      : []
    const orphans = goldens.filter((golden) => !files.includes(golden.replace(/\.events\.json$/, '.jsonl')))
    expect(orphans, 'goldens whose recording is gone: delete them').toEqual([])
  })

  for (const file of files) {
    it(`matches the golden for ${file}`, async () => {
      const cli = RECORDING_NAME.exec(file)?.[1] ?? ''
      const createParser = PARSERS[cli]
      if (!createParser) {
        expect.fail(
          `${file}: name it <cli>-<scenario>.jsonl with <cli> one of ${Object.keys(PARSERS).join(', ')}`,
        )
      }
      const actual = replay(file, createParser)
      const goldenFile = path.join(GOLDENS, file.replace(/\.jsonl$/, '.events.json'))
      if (UPDATE) {
        await writeGolden(goldenFile, actual)
        return
      }
      if (!existsSync(goldenFile)) {
        expect.fail(
          `${file} has no golden. Create it with \`UPDATE_GOLDENS=1 npx vitest run test/e2e/parser-goldens.test.ts\`, ` +
            `then review ${path.relative(process.cwd(), goldenFile)} before committing it.`,
        )
      }
      expect(actual).toEqual(JSON.parse(readFileSync(goldenFile, 'utf8')))
    })
  }
})
