// The foreground daemon printed one pino JSON line per HTTP request: readable lines at a terminal.
import { describe, expect, it } from 'vitest'
import { createRedactor } from './core/redact.js'
import { formatLogLine, logFormatFor, prettyDestination } from './log-format.js'
import { createLogger } from './logger.js'

describe('log-format', () => {
  it('says a JSON line as time, level, component, message and key=value fields', () => {
    const line = JSON.stringify({
      level: 40,
      time: '2026-11-26T19:48:01.348Z',
      service: 'hangar',
      component: 'scheduler',
      msg: 'run reaped',
      runId: 'run_1',
      reason: 'pid 12 gone',
      counts: { a: 1 },
    })
    expect(formatLogLine(line)).toBe(
      '19:48:01 WARN  [scheduler] run reaped runId=run_1 reason="pid 12 gone" counts={"a":1}',
    )
    expect(formatLogLine('not json')).toBe('not json')
  })

  it('is readable on a TTY and JSON elsewhere, unless HANGAR_LOG_FORMAT says otherwise', () => {
    expect(logFormatFor({}, true)).toBe('pretty')
    expect(logFormatFor({}, false)).toBe('json')
    expect(logFormatFor({ HANGAR_LOG_FORMAT: 'json' }, true)).toBe('json')
    expect(logFormatFor({ HANGAR_LOG_FORMAT: 'pretty' }, false)).toBe('pretty')
    expect(logFormatFor({ HANGAR_LOG_FORMAT: 'fancy' }, false)).toBe('json')
  })

  it('writes redacted readable lines through the logger', () => {
    let output = ''
    const out = { write: (text: string) => ((output += text), true) } as unknown as NodeJS.WritableStream
    const redactor = createRedactor()
    redactor.add('very-secret-value-123')
    const log = createLogger({ service: 'hangar', redactor, destination: out, format: 'pretty' })
    log.child({ component: 'http' }).info('hello', { key: 'very-secret-value-123' })
    expect(output).toMatch(/^\d\d:\d\d:\d\d INFO {2}\[http\] hello key=\S+\n$/)
    expect(output).not.toContain('very-secret-value-123')
    expect(prettyDestination(out).write('{"level":30,"msg":"a"}\n{"level":50,"msg":"b"}\n')).toBe(true)
    expect(output).toContain('INFO  a\n')
    expect(output).toContain('ERROR b\n')
  })
})
