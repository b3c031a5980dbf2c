import { describe, expect, it } from 'vitest'
import type { EventEnvelope } from '../core/events.js'
import { createRedactor } from '../core/redact.js'
import { createEventWriter } from './event-writer.js'

function fakeRuns() {
  const stored: EventEnvelope[] = []
  const statements: number[] = []
  return {
    stored,
    statements,
    appendEvents: async (envelopes: readonly EventEnvelope[]) => {
      await new Promise((resolve) => setTimeout(resolve, 2))
      statements.push(envelopes.length)
      stored.push(...envelopes)
    },
  }
}

describe('event-writer', () => {
  it('assigns dense seqs, batches writes and coalesces adjacent deltas', async () => {
    const runs = fakeRuns()
    const writer = createEventWriter({ runs, runId: 'run_1', redactor: createRedactor(), batchDelayMs: 20 })
    writer.write({ type: 'text-delta', text: 'Hel' })
    writer.write({ type: 'text-delta', text: 'lo' })
    writer.write({ type: 'reasoning-delta', text: 'hm' })
    writer.write({ type: 'text-delta', text: '!' })
    await writer.flush()
    writer.write({ type: 'run-end', status: 'succeeded' })
    await writer.flush()
    expect(runs.stored.map((event) => [event.seq, event.type])).toEqual([
      [1, 'text-delta'],
      [2, 'reasoning-delta'],
      [3, 'text-delta'],
      [4, 'run-end'],
    ])
    expect(runs.stored[0]).toMatchObject({ v: 1, runId: 'run_1', text: 'Hello' })
    expect(runs.statements).toEqual([3, 1])
    expect(writer.lastSeq()).toBe(4)
  })

  it('delivers a batch only after it is stored, in order', async () => {
    const runs = fakeRuns()
    const delivered: number[] = []
    const writer = createEventWriter({
      runs,
      runId: 'run_1',
      redactor: createRedactor(),
      batchDelayMs: 1,
      onDelivered: (envelopes) => {
        for (const envelope of envelopes) {
          expect(runs.stored.some((stored) => stored.seq === envelope.seq)).toBe(true)
          delivered.push(envelope.seq)
        }
      },
    })
    for (let index = 0; index < 50; index++) {
      writer.write({ type: 'tool-call', toolCallId: `t${index}`, name: 'x', input: {} })
      if (index % 7 === 0) await new Promise((resolve) => setTimeout(resolve, 3))
    }
    await writer.flush()
    expect(delivered).toEqual(Array.from({ length: 50 }, (_, index) => index + 1))
  })

  it('redacts secrets before anything is stored', async () => {
    const runs = fakeRuns()
    const redactor = createRedactor()
    redactor.add('sk-live-secret-value-123')
    const writer = createEventWriter({ runs, runId: 'run_1', redactor })
    writer.write({ type: 'raw', stream: 'stdout', value: 'key=sk-live-secret-value-123' })
    writer.write({
      type: 'tool-call',
      toolCallId: 'a',
      name: 'http',
      input: { headers: { authorization: 'Bearer xyz' } },
    })
    await writer.flush()
    expect(JSON.stringify(runs.stored)).not.toContain('sk-live-secret-value-123')
    expect(JSON.stringify(runs.stored)).not.toContain('xyz')
  })

  it('reports a failed write on flush', async () => {
    const writer = createEventWriter({
      runs: { appendEvents: async () => Promise.reject(new Error('disk full')) },
      runId: 'run_1',
      redactor: createRedactor(),
    })
    writer.write({ type: 'text-delta', text: 'x' })
    await expect(writer.flush()).rejects.toThrow('disk full')
  })
})
