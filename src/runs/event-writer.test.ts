import diagnostics from 'node:diagnostics_channel'
import { describe, expect, it, vi } from 'vitest'
import type { EventEnvelope } from '../core/events.js'
import { createRedactor } from '../core/redact.js'
import { type EventsMessage, eventsStored, eventsStoring } from './event-timing.js'
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
  it('tells the diagnostics channels of each batch just before it is stored and once it is', async () => {
    const order: string[] = []
    const runs = {
      appendEvents: async (envelopes: readonly EventEnvelope[]) => {
        order.push(`append ${envelopes.map((envelope) => envelope.seq).join(',')}`)
      },
    }
    const storing = (message: unknown) =>
      order.push(`storing ${(message as EventsMessage).envelopes.map((envelope) => envelope.seq).join(',')}`)
    const stored = (message: unknown) =>
      order.push(`stored ${(message as EventsMessage).envelopes.map((envelope) => envelope.seq).join(',')}`)
    diagnostics.subscribe(eventsStoring.name, storing)
    diagnostics.subscribe(eventsStored.name, stored)
    try {
      const writer = createEventWriter({ runs, runId: 'run_1', redactor: createRedactor() })
      writer.write({ type: 'text-delta', text: 'a' })
      writer.write({ type: 'tool-call', toolCallId: 't1', name: 'Read', input: {} })
      await writer.flush()
      writer.write({ type: 'run-end', status: 'succeeded' })
      await writer.flush()
      expect(order).toEqual(['storing 1,2', 'append 1,2', 'stored 1,2', 'storing 3', 'append 3', 'stored 3'])
    } finally {
      diagnostics.unsubscribe(eventsStoring.name, storing)
      diagnostics.unsubscribe(eventsStored.name, stored)
    }
  })

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

  it('keeps a sub-task’s parentId and never merges its deltas with the main agent’s', async () => {
    const runs = fakeRuns()
    const writer = createEventWriter({ runs, runId: 'run_1', redactor: createRedactor(), batchDelayMs: 20 })
    writer.write({ type: 'text-delta', text: 'main ' })
    writer.write({ type: 'text-delta', text: 'sub ', parentId: 'toolu_task' })
    writer.write({ type: 'text-delta', text: 'agent', parentId: 'toolu_task' })
    await writer.flush()
    expect(
      runs.stored.map((event) => [
        event.type === 'text-delta' && event.text,
        'parentId' in event ? event.parentId : undefined,
      ]),
    ).toEqual([
      ['main ', undefined],
      ['sub agent', 'toolu_task'],
    ])
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

  // Issue 17 item 1: a model streams a token in pieces; each batch alone held no whole token, so every
  // piece was stored (and sent over SSE) as it was.
  it('redacts a secret streamed in pieces across batches', async () => {
    const runs = fakeRuns()
    const redactor = createRedactor()
    redactor.add('streamed-provider-key-0042')
    const writer = createEventWriter({ runs, runId: 'run_1', redactor, batchDelayMs: 1 })
    const token = `hgr_abcdefghijkl_${'Pq9'.repeat(12)}Zz`
    const text = `The session is ${token} and the key streamed-provider-key-0042, both.`
    for (const piece of text.match(/.{1,5}/gs)!) {
      writer.write({ type: 'text-delta', text: piece })
      await new Promise((resolve) => setTimeout(resolve, 4))
    }
    writer.write({ type: 'tool-call', toolCallId: 't', name: 'x', input: {} })
    await writer.flush()
    const stored = runs.stored.filter((event) => event.type === 'text-delta')
    expect(runs.statements.length).toBeGreaterThan(2)
    const joined = stored.map((event) => (event.type === 'text-delta' ? event.text : '')).join('')
    expect(joined).toBe('The session is [redacted] and the key [redacted], both.')
    expect(runs.stored.at(-1)?.type).toBe('tool-call')
  })

  it('lets a held tail go when nothing follows it', async () => {
    const runs = fakeRuns()
    const delivered: string[] = []
    const writer = createEventWriter({
      runs,
      runId: 'run_1',
      redactor: createRedactor(),
      batchDelayMs: 1,
      onDelivered: (envelopes) => {
        for (const envelope of envelopes) if (envelope.type === 'text-delta') delivered.push(envelope.text)
      },
    })
    writer.write({ type: 'text-delta', text: 'waiting for input' })
    await vi.waitFor(() => expect(delivered.join('')).toBe('waiting for input'), { timeout: 5000 })
    expect(delivered).toEqual(['waiting for ', 'input'])
    await writer.flush()
    expect(writer.lastSeq()).toBe(2)
  })

  it('stores and delivers a batch on the next turn of the event loop, not after a timer', async () => {
    // Timers stand still: only the event loop turns. A writer that waits for a timer delivers nothing.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] })
    try {
      const statements: number[][] = []
      const delivered: number[] = []
      const writer = createEventWriter({
        runs: {
          appendEvents: async (envelopes) => void statements.push(envelopes.map((envelope) => envelope.seq)),
        },
        runId: 'run_1',
        redactor: createRedactor(),
        onDelivered: (envelopes) => delivered.push(...envelopes.map((envelope) => envelope.seq)),
      })
      writer.write({ type: 'tool-call', toolCallId: 'a', name: 'x', input: {} })
      writer.write({ type: 'tool-result', toolCallId: 'a', output: 'ok', isError: false })
      for (let turn = 0; turn < 20 && delivered.length < 2; turn++) {
        await new Promise((resolve) => setImmediate(resolve))
      }
      expect(delivered).toEqual([1, 2])
      expect(statements).toEqual([[1, 2]])
    } finally {
      vi.useRealTimers()
    }
  })

  it('gathers what is written while a batch is being stored into the next batch, in order', async () => {
    const statements: number[][] = []
    let release: () => void = () => {}
    let storing: () => void = () => {}
    const started = new Promise<void>((resolve) => (storing = resolve))
    // Batches are stored in the order they are asked for, as both engines' stores do.
    let previous = Promise.resolve()
    const writer = createEventWriter({
      runs: {
        appendEvents: (envelopes) =>
          (previous = previous.then(async () => {
            if (statements.length === 0) {
              storing()
              await new Promise<void>((resolve) => (release = resolve))
            }
            statements.push(envelopes.map((envelope) => envelope.seq))
          })),
      },
      runId: 'run_1',
      redactor: createRedactor(),
    })
    writer.write({ type: 'tool-call', toolCallId: 't0', name: 'x', input: {} })
    await started
    for (let index = 1; index <= 30; index++) {
      writer.write({ type: 'tool-call', toolCallId: `t${index}`, name: 'x', input: {} })
      if (index % 10 === 0) await new Promise((resolve) => setImmediate(resolve))
    }
    const flushed = writer.flush()
    release()
    await flushed
    expect(statements).toEqual([[1], Array.from({ length: 30 }, (_, index) => index + 2)])
    expect(writer.lastSeq()).toBe(31)
  })

  it('sends the last batch to the store at once on flush, to be stored now, and delivers the batches in order', async () => {
    const asked: { seqs: number[]; now: boolean }[] = []
    const delivered: number[][] = []
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    let previous = Promise.resolve()
    const writer = createEventWriter({
      runs: {
        appendEvents: (envelopes, options) => {
          asked.push({ seqs: envelopes.map((envelope) => envelope.seq), now: options?.now === true })
          // The first batch waits for its commit slot until released; the store keeps the order asked.
          const stored = previous.then(() => (asked.length === 1 ? held : undefined))
          previous = stored
          return stored
        },
      },
      runId: 'run_1',
      redactor: createRedactor(),
      onDelivered: (envelopes) => delivered.push(envelopes.map((envelope) => envelope.seq)),
    })
    writer.write({ type: 'tool-call', toolCallId: 't0', name: 'x', input: {} })
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setImmediate(resolve))
    expect(asked).toEqual([{ seqs: [1], now: false }])
    writer.write({ type: 'tool-call', toolCallId: 't1', name: 'x', input: {} })
    const flushed = writer.flush()
    // Asked for while the first still waits, not after it.
    expect(asked).toEqual([
      { seqs: [1], now: false },
      { seqs: [2], now: true },
    ])
    expect(delivered).toEqual([])
    release()
    await flushed
    expect(delivered).toEqual([[1], [2]])
    expect(writer.lastSeq()).toBe(2)
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
