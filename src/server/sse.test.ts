import diagnostics from 'node:diagnostics_channel'
import http from 'node:http'
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { AppError, isAppError } from '../core/errors.js'
import type { AgentEvent, EventEnvelope } from '../core/events.js'
import { silentLogger } from '../core/logger.js'
import { createEventBus, type EventBus, type Subscription } from '../runs/event-bus.js'
import { type EventSentMessage, eventSent } from '../runs/event-timing.js'
import { createErrorHandler } from './error-envelope.js'
import { listen } from './listen.js'
import {
  conversationEventId,
  formatSseEvent,
  parseLastEventId,
  runEventId,
  type SseOptions,
  streamSubscription,
} from './sse.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function envelopeOf(runId: string, seq: number, event: AgentEvent): EventEnvelope {
  return { ...event, v: 1, runId, seq, ts: '2026-01-01T00:00:00.000Z' }
}

/** A run whose events are stored (in memory) before they are published, like the one writer does. */
function fakeRun(bus: EventBus, runId = 'run_A') {
  const stored: EventEnvelope[] = []
  return {
    stored,
    write(event: AgentEvent) {
      const envelope = envelopeOf(runId, stored.length + 1, event)
      stored.push(envelope)
      bus.publish([envelope], { userId: 'usr_1', conversationId: null })
    },
    subscribe: (afterSeq = 0) =>
      bus.subscribeRun(runId, {
        afterSeq,
        loadStored: async (after) => stored.filter((envelope) => envelope.seq > after).slice(0, 50),
      }),
  }
}

/** An app with one SSE route over the subscription `open` returns. */
function appStreaming(open: () => Subscription, options: Partial<SseOptions> = {}) {
  const app = new Hono()
  app.get('/events', (context) => streamSubscription(context, open(), { idOf: runEventId, ...options }))
  app.get('/last/:form', (context) => {
    const form = context.req.param('form') === 'run' ? 'run' : 'conversation'
    return context.json({
      position: form === 'run' ? parseLastEventId(context, 'run') : parseLastEventId(context, 'conversation'),
    })
  })
  app.onError(createErrorHandler(silentLogger))
  return app
}

async function readUntil(body: ReadableStream<Uint8Array>, done: (text: string) => boolean): Promise<string> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let text = ''
  while (!done(text)) {
    const chunk = await reader.read()
    if (chunk.done) break
    text += decoder.decode(chunk.value, { stream: true })
  }
  reader.releaseLock()
  return text
}

describe('sse', () => {
  it('formats an envelope as id and one data line, optionally named after its type', () => {
    const envelope = envelopeOf('run_A', 7, { type: 'text-delta', text: 'two\nlines' })
    expect(formatSseEvent(envelope, runEventId(envelope))).toBe(
      `id: 7\ndata: ${JSON.stringify(envelope)}\n\n`,
    )
    expect(formatSseEvent(envelope, conversationEventId(envelope), true)).toBe(
      `id: run_A:7\nevent: text-delta\ndata: ${JSON.stringify(envelope)}\n\n`,
    )
  })

  it('parses both id forms from the header or the query, the header first', async () => {
    const app = appStreaming(() => {
      throw new Error('unused')
    })
    const positionOf = async (path: string, headers: Record<string, string> = {}) => {
      const response = await app.request(`http://localhost${path}`, { headers })
      return { status: response.status, body: (await response.json()) as unknown }
    }
    expect(await positionOf('/last/run')).toEqual({ status: 200, body: { position: null } })
    expect(await positionOf('/last/run', { 'last-event-id': '42' })).toEqual({
      status: 200,
      body: { position: 42 },
    })
    expect(await positionOf('/last/run?lastEventId=5', { 'last-event-id': '6' })).toMatchObject({
      body: { position: 6 },
    })
    expect(await positionOf('/last/conversation?lastEventId=run_01ABC:3')).toEqual({
      status: 200,
      body: { position: { runId: 'run_01ABC', seq: 3 } },
    })
    for (const [form, id] of [
      ['run', 'run_01ABC:3'],
      ['run', '-1'],
      ['run', '1.5'],
      ['conversation', '3'],
      ['conversation', 'conv_1:3'],
      ['conversation', 'run_01ABC:'],
    ]) {
      const { status, body } = await positionOf(`/last/${form}`, { 'last-event-id': id! })
      expect(status).toBe(400)
      expect(body).toMatchObject({ error: { code: 'invalid_request', details: { lastEventId: id } } })
    }
  })

  it('streams events with their ids and the SSE headers, and ends after run-end', async () => {
    const bus = createEventBus()
    const run = fakeRun(bus)
    run.write({ type: 'text-delta', text: 'a' })
    const response = await appStreaming(() => run.subscribe()).request('http://localhost/events')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/event-stream')
    expect(response.headers.get('cache-control')).toBe('no-cache')
    expect(response.headers.get('x-accel-buffering')).toBe('no')
    setTimeout(() => {
      run.write({ type: 'text-delta', text: 'b' })
      run.write({ type: 'run-end', status: 'succeeded' })
    }, 10)
    expect(await response.text()).toBe(
      run.stored.map((envelope) => formatSseEvent(envelope, String(envelope.seq))).join(''),
    )
  })

  it('tells the hangar:event-sent diagnostics channel of each event it hands to the connection', async () => {
    const sent: EventEnvelope[] = []
    const listener = (message: unknown) => sent.push((message as EventSentMessage).envelope)
    diagnostics.subscribe(eventSent.name, listener)
    try {
      const bus = createEventBus()
      const run = fakeRun(bus)
      run.write({ type: 'text-delta', text: 'a' })
      run.write({ type: 'run-end', status: 'succeeded' })
      const response = await appStreaming(() => run.subscribe()).request('http://localhost/events')
      await response.text()
      expect(sent).toEqual(run.stored)
    } finally {
      diagnostics.unsubscribe(eventSent.name, listener)
    }
  })

  it('serialises an envelope once for all its subscribers: each gets the very same bytes', async () => {
    const bus = createEventBus()
    const run = fakeRun(bus)
    run.write({ type: 'text-delta', text: 'stored before' })
    const app = appStreaming(() => run.subscribe())
    const responses = await Promise.all([1, 2, 3].map(() => app.request('http://localhost/events')))
    run.write({ type: 'text-delta', text: 'live ✓' })
    run.write({ type: 'run-end', status: 'succeeded' })
    const received = await Promise.all(
      responses.map(async (response) => {
        const reader = response.body!.getReader()
        const chunks: Uint8Array[] = []
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
          chunks.push(chunk.value)
        return chunks
      }),
    )
    const [first, ...others] = received
    expect(Buffer.concat(first!).toString()).toBe(
      run.stored.map((envelope) => formatSseEvent(envelope, String(envelope.seq))).join(''),
    )
    for (const chunks of others) {
      expect(chunks).toHaveLength(first!.length)
      chunks.forEach((chunk, index) => expect(chunk).toBe(first![index]))
    }
  })

  it('sends keep-alive comments while nothing happens', async () => {
    const bus = createEventBus()
    const subscription = fakeRun(bus).subscribe()
    const response = await appStreaming(() => subscription, { keepAliveMs: 15 }).request(
      'http://localhost/events',
    )
    const text = await readUntil(response.body!, (received) => received.split(': keep-alive\n\n').length > 3)
    expect(text).toBe(': keep-alive\n\n'.repeat(3))
    await response.body!.cancel()
    expect(subscription.reason).toBe('closed')
  })

  it('unsubscribes when the client aborts', async () => {
    const bus = createEventBus()
    const subscription = fakeRun(bus).subscribe()
    const controller = new AbortController()
    const response = await appStreaming(() => subscription).request('http://localhost/events', {
      signal: controller.signal,
    })
    expect(response.status).toBe(200)
    controller.abort()
    await expect(subscription.ended).resolves.toBe('closed')
  })

  it('tells a lagging client to reconnect and ends its stream', async () => {
    const bus = createEventBus({ maxQueue: 2 })
    const run = fakeRun(bus)
    const response = await appStreaming(() => run.subscribe()).request('http://localhost/events')
    // Nothing reads the body while these are published.
    await sleep(10)
    for (let index = 0; index < 5; index++) run.write({ type: 'text-delta', text: String(index) })
    const text = await response.text()
    expect(text).toMatch(/: lagging: reconnect with Last-Event-ID\n\n$/)
    expect(text).not.toContain('id: 5')
  })

  it('ends the stream when the store fails mid-replay, so that the client resumes', async () => {
    const errors: unknown[] = []
    const bus = createEventBus()
    const subscription = bus.subscribeRun('run_A', {
      afterSeq: 0,
      loadStored: () => Promise.reject(new AppError('database_unavailable', 'gone')),
    })
    const response = await appStreaming(() => subscription, {
      onError: (error) => errors.push(error),
    }).request('http://localhost/events')
    expect(await response.text()).toBe(': failed: reconnect with Last-Event-ID\n\n')
    expect(errors.map((error) => isAppError(error) && error.code)).toEqual(['database_unavailable'])
  })

  it('cuts the connection of a client that stopped reading once its stream has ended', async () => {
    const bus = createEventBus({ maxQueue: 5 })
    const run = fakeRun(bus)
    // Far more than the socket buffers of a client that is not reading can hold.
    for (let index = 0; index < 200; index++)
      run.write({ type: 'raw', stream: 'stdout', value: 'x'.repeat(64 * 1024) })
    const subscription = run.subscribe()
    const server = await listen(
      appStreaming(() => subscription, { stallTimeoutMs: 100 }),
      {
        host: '127.0.0.1',
        port: 0,
      },
    )
    try {
      const response = await new Promise<http.IncomingMessage>((resolve, reject) =>
        http.get(`${server.url}/events`, { agent: false }, resolve).once('error', reject),
      )
      response.pause()
      await sleep(100)
      for (let index = 0; index < 10; index++) run.write({ type: 'text-delta', text: String(index) })
      expect(subscription.reason).toBe('lagging')
      await sleep(300)
      let received = 0
      response.on('data', (chunk: Buffer) => (received += chunk.length))
      const closed = new Promise<void>((resolve) => response.once('close', resolve))
      response.once('error', () => {})
      response.resume()
      await closed
      // Cut, not ended: the body stops short of its end (the lagging notice and the final chunk).
      expect(response.complete).toBe(false)
      expect(received).toBeGreaterThan(0)
      expect(received).toBeLessThan(200 * 64 * 1024)
    } finally {
      await server.close()
    }
  })
})
