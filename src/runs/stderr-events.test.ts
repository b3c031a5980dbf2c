import { describe, expect, it } from 'vitest'
import type { AgentEvent } from '../core/events.js'
import { createStderrEvents } from './stderr-events.js'

describe('stderr events', () => {
  it('turns stderr into one raw stderr event per line, across chunk boundaries', () => {
    const events: AgentEvent[] = []
    const stderr = createStderrEvents((event) => events.push(event))
    stderr.chunk('warn: first\r\nsecond ha')
    stderr.chunk('lf\n\n   \nlast without newline')
    stderr.finish()
    expect(events).toEqual([
      { type: 'raw', stream: 'stderr', value: 'warn: first' },
      { type: 'raw', stream: 'stderr', value: 'second half' },
      { type: 'raw', stream: 'stderr', value: 'last without newline' },
    ])
  })

  it('records at most the per-run limit, cuts long lines, and ends with one note of what it left out', () => {
    const events: AgentEvent[] = []
    const stderr = createStderrEvents((event) => events.push(event), { lines: 3, bytes: 1000, lineChars: 10 })
    stderr.chunk(`${'x'.repeat(25)}\n`)
    for (let index = 0; index < 50; index++) stderr.chunk(`line ${index}\n`)
    stderr.finish()
    expect(events.map((event) => (event.type === 'raw' ? event.value : ''))).toEqual([
      `${'x'.repeat(10)}…`,
      'line 0',
      'line 1',
      '[hangar] 48 more stderr line(s) not recorded (at most 3 lines or 1 KB per run)',
    ])
  })

  it('stops at the byte limit too', () => {
    const events: AgentEvent[] = []
    const stderr = createStderrEvents((event) => events.push(event), {
      lines: 100,
      bytes: 12,
      lineChars: 100,
    })
    stderr.chunk('abcdef\nghijkl\nmnopqr\n')
    stderr.finish()
    expect(events).toHaveLength(3)
    expect(events.at(-1)).toMatchObject({ value: expect.stringContaining('1 more stderr line(s)') })
  })
})
