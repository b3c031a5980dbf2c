// Issue 18 item 4: the session id was only part of the outcome at the end, so a run interrupted after the
// CLI had named its session (a crash, a SIGKILLed daemon) could not be resumed. Each parser now reports it
// at the line where it first appears — replayed here from the real CLIs' recordings, cancelled ones (no
// final event) where the CLI names its session early — and a session the launch chose up front (OpenClaw,
// Copilot with `--session-id`) from before the first line.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ParserContext, StreamParser } from '../types.js'
import { createClaudeStreamParser } from './claude-stream.js'
import { createCodexStreamParser } from './codex-stream.js'
import { createCopilotStreamParser } from './copilot-stream.js'
import { createCursorStreamParser } from './cursor-stream.js'
import { createGeminiStreamParser } from './gemini-stream.js'
import { createOpenclawEnvelopeParser } from './openclaw-envelope.js'
import { createOpencodeStreamParser } from './opencode-stream.js'

const RECORDINGS = path.resolve(import.meta.dirname, '../../../test/fixtures/recordings')

/** The recording's lines without its `recordingCwd` header. */
function recorded(file: string): string[] {
  const lines = readFileSync(path.join(RECORDINGS, file), 'utf8').split('\n')
  if (lines.at(-1) === '') lines.pop()
  if (lines[0]?.includes('"recordingCwd"')) lines.shift()
  return lines
}

const CASES: {
  cli: string
  recording: string
  /** The field that names the session in that CLI's stream. */
  field: string
  create: (context: ParserContext) => StreamParser
}[] = [
  // Cancelled runs: no final event, so only an early report keeps their session.
  { cli: 'claude', recording: 'claude-cancel.jsonl', field: 'session_id', create: createClaudeStreamParser },
  { cli: 'codex', recording: 'codex-cancel.jsonl', field: 'thread_id', create: createCodexStreamParser },
  { cli: 'gemini', recording: 'gemini-cancel.jsonl', field: 'session_id', create: createGeminiStreamParser },
  {
    cli: 'opencode',
    recording: 'opencode-cancel.jsonl',
    field: 'sessionID',
    create: createOpencodeStreamParser,
  },
  {
    cli: 'cursor',
    recording: 'cursor-handmade-write-file.jsonl',
    field: 'session_id',
    create: createCursorStreamParser,
  },
  // Copilot names its session only in the final `result`.
  { cli: 'copilot', recording: 'copilot-write.jsonl', field: 'sessionId', create: createCopilotStreamParser },
]

describe('stream parsers report the session id', () => {
  it.each(CASES)('$cli: at the line where $field first appears', ({ recording, field, create }) => {
    const lines = recorded(recording)
    const pattern = new RegExp(`"${field}"\\s*:\\s*"([^"]+)"`)
    const first = lines.findIndex((line) => pattern.test(line))
    expect(first, `${recording} names no session`).toBeGreaterThanOrEqual(0)
    const session = pattern.exec(lines[first]!)![1]
    const parser = create({ cwd: '/workspace' })
    expect(parser.sessionId()).toBeUndefined()
    lines.forEach((line, index) => {
      parser.line(line)
      expect(parser.sessionId(), `after line ${index + 1}`).toBe(index >= first ? session : undefined)
    })
    expect(parser.finish().outcome.sessionId).toBe(session)
  })

  it('openclaw: the session its launch chose, from before the first line; the envelope has the last word', () => {
    const parser = createOpenclawEnvelopeParser({ cwd: '/workspace', sessionId: 'chosen-by-launch' })
    expect(parser.sessionId()).toBe('chosen-by-launch')
    const lines = recorded('openclaw-write.jsonl')
    const envelopeSession = /"sessionId"\s*:\s*"([^"]+)"/.exec(lines.join('\n'))![1]
    for (const line of lines) parser.line(line)
    expect(parser.finish().outcome.sessionId).toBe(envelopeSession)
  })

  it('openclaw: a run cancelled before its envelope still ends with the chosen session', () => {
    const parser = createOpenclawEnvelopeParser({ cwd: '/workspace', sessionId: 'chosen-by-launch' })
    expect(parser.finish().outcome.sessionId).toBe('chosen-by-launch')
  })

  it('copilot: the session its launch chose, from before the first line', () => {
    const parser = createCopilotStreamParser({ cwd: '/workspace', sessionId: 'chosen-by-launch' })
    expect(parser.sessionId()).toBe('chosen-by-launch')
    for (const line of recorded('copilot-cancel.jsonl')) parser.line(line)
    expect(parser.finish().outcome.sessionId).toBe('chosen-by-launch')
  })
})
