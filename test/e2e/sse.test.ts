// The run and conversation event streams over real HTTP on loopback: events are written by the one event
// writer into a real store, published to the bus after they are stored, and read back as SSE.
import http from 'node:http'
import { Hono } from 'hono'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { AgentEvent, EventEnvelope } from '../../src/core/events.js'
import { silentLogger } from '../../src/core/logger.js'
import { createRedactor } from '../../src/core/redact.js'
import { createEventBus, type EventBus, type Subscription } from '../../src/runs/event-bus.js'
import { createEventWriter } from '../../src/runs/event-writer.js'
import { type AppVariables, createAuthMiddleware } from '../../src/server/auth-middleware.js'
import { createErrorHandler } from '../../src/server/error-envelope.js'
import { listen, type RunningServer } from '../../src/server/listen.js'
import { registerEventRoutes } from '../../src/server/routes/event-routes.js'
import type { User } from '../../src/store/repositories/users-repository.js'
import { STORE_ENGINES } from '../helpers/store-engines.js'
import { bearer, errorEnvelopeOf, openTestApp, type TestApp } from '../helpers/test-runtime.js'

const KEEP_ALIVE_MS = 150
const MAX_QUEUE = 64
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

type SseFrame =
  | { kind: 'comment'; text: string }
  | { kind: 'event'; id: string | undefined; event: string | undefined; envelope: EventEnvelope }

/** A small SSE parser (the spec's line rules), fed text as it arrives. */
function createSseParser() {
  let buffer = ''
  let id: string | undefined
  let event: string | undefined
  let data: string[] = []
  return (text: string): SseFrame[] => {
    const frames: SseFrame[] = []
    buffer += text
    let newline: number
    while ((newline = buffer.indexOf('\n')) !== -1) {
      const line = buffer.slice(0, newline).replace(/\r$/, '')
      buffer = buffer.slice(newline + 1)
      if (line === '') {
        if (data.length > 0)
          frames.push({ kind: 'event', id, event, envelope: JSON.parse(data.join('\n')) as EventEnvelope })
        event = undefined
        data = []
      } else if (line.startsWith(':')) frames.push({ kind: 'comment', text: line.slice(1).trim() })
      else {
        const colon = line.indexOf(':')
        const name = colon === -1 ? line : line.slice(0, colon)
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '')
        if (name === 'id') id = value
        else if (name === 'event') event = value
        else if (name === 'data') data.push(value)
      }
    }
    return frames
  }
}

/** Frames of a fetch body, one at a time; undefined once the server has ended the stream. */
function createSseReader(body: ReadableStream<Uint8Array>) {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const parse = createSseParser()
  const pending: SseFrame[] = []
  return {
    async next(): Promise<SseFrame | undefined> {
      while (pending.length === 0) {
        const chunk = await reader.read()
        if (chunk.done) return undefined
        pending.push(...parse(decoder.decode(chunk.value, { stream: true })))
      }
      return pending.shift()
    },
    /** The next `count` events (comments skipped); fewer if the stream ends first. */
    async events(count = Number.POSITIVE_INFINITY): Promise<Extract<SseFrame, { kind: 'event' }>[]> {
      const events: Extract<SseFrame, { kind: 'event' }>[] = []
      while (events.length < count) {
        const frame = await this.next()
        if (!frame) break
        if (frame.kind === 'event') events.push(frame)
      }
      return events
    },
  }
}

describe.each(STORE_ENGINES)('SSE event streams ($name)', (engine) => {
  let testApp: TestApp
  let bus: EventBus
  let server: RunningServer
  let token: string
  /** Every subscription the routes opened, in order. */
  let subscriptions: Subscription[]

  beforeEach(async () => {
    testApp = await openTestApp({ engine })
    token = await testApp.createPat()
    bus = createEventBus({ maxQueue: MAX_QUEUE })
    subscriptions = []
    const remember = (subscription: Subscription) => (subscriptions.push(subscription), subscription)
    const recordingBus: EventBus = {
      ...bus,
      subscribeRun: (runId, options) => remember(bus.subscribeRun(runId, options)),
      subscribeConversation: (id, options) => remember(bus.subscribeConversation(id, options)),
    }
    const app = new Hono<{ Variables: AppVariables }>()
    app.use('/api/*', createAuthMiddleware(testApp.auth))
    registerEventRoutes(app, { store: testApp.store, bus: recordingBus, keepAliveMs: KEEP_ALIVE_MS })
    app.onError(createErrorHandler(silentLogger))
    server = await listen(app, { host: '127.0.0.1', port: 0 })
  })
  afterEach(async () => {
    bus.close()
    await server.close()
    await testApp.dispose()
  })

  /** A run driven through the real event writer, which publishes each stored batch to the bus. */
  async function startRun(options: { user?: User; conversationId?: string } = {}) {
    const user = options.user ?? testApp.owner
    const conversationId = options.conversationId ?? null
    const runs = testApp.store.forUser(user.id).runs
    const run = await runs.create({
      agent: 'test',
      adapter: 'test',
      prompt: 'p',
      cwd: '/tmp',
      conversationId,
    })
    const writer = createEventWriter({
      runs,
      runId: run.id,
      redactor: createRedactor(),
      batchDelayMs: 1,
      onDelivered: (envelopes) => bus.publish(envelopes, { userId: user.id, conversationId }),
    })
    return {
      id: run.id,
      async write(...events: AgentEvent[]) {
        for (const event of events) writer.write(event)
        await writer.flush()
      },
      async end() {
        await this.write({ type: 'run-end', status: 'succeeded' })
        await runs.update(run.id, { status: 'succeeded' })
      },
      stored: () => runs.listEvents(run.id),
    }
  }

  const open = (path: string, init: { lastEventId?: string; signal?: AbortSignal } = {}) =>
    fetch(`${server.url}${path}`, {
      headers: { ...bearer(token), ...(init.lastEventId && { 'last-event-id': init.lastEventId }) },
      ...(init.signal && { signal: init.signal }),
    })

  const text = (value: string): AgentEvent => ({ type: 'text-delta', text: value })
  const toolCall = (index: number): AgentEvent => ({
    type: 'tool-call',
    toolCallId: `t${index}`,
    name: 'x',
    input: {},
  })

  it('streams a run with id: <seq> in order and ends after run-end', async () => {
    const run = await startRun()
    await run.write(text('before'))
    const response = await open(`/api/runs/${run.id}/events`)
    expect(response.headers.get('content-type')).toBe('text/event-stream')
    expect(response.headers.get('cache-control')).toBe('no-cache')
    const reading = createSseReader(response.body!).events()
    for (let index = 0; index < 20; index++) await run.write(toolCall(index), text(`${index}`))
    await run.end()
    const events = await reading
    const stored = await run.stored()
    expect(events.map((frame) => frame.id)).toEqual(stored.map((envelope) => String(envelope.seq)))
    expect(events.map((frame) => frame.envelope)).toEqual(stored)
    expect(stored.at(-1)!.type).toBe('run-end')
    expect(subscriptions[0]!.reason).toBe('run-end')
  })

  it('replays an ended run and ends at once, with nothing after its last id', async () => {
    const run = await startRun()
    await run.write(text('a'), toolCall(1))
    await run.end()
    const events = await createSseReader((await open(`/api/runs/${run.id}/events`)).body!).events()
    expect(events.map((frame) => frame.envelope)).toEqual(await run.stored())
    const after = await open(`/api/runs/${run.id}/events`, { lastEventId: '3' })
    expect(await after.text()).toBe('')
  })

  it('resumes across forced disconnects with no gap and no duplicate', async () => {
    const run = await startRun()
    const writing = (async () => {
      for (let index = 0; index < 150; index++) {
        await run.write(index % 3 === 0 ? text(`${index}`) : toolCall(index))
        if (index % 4 === 0) await sleep(1)
      }
      await run.end()
    })()
    const received: Extract<SseFrame, { kind: 'event' }>[] = []
    let lastEventId: string | undefined
    let connections = 0
    while (received.at(-1)?.envelope.type !== 'run-end') {
      const controller = new AbortController()
      const response = await open(`/api/runs/${run.id}/events`, { signal: controller.signal, lastEventId })
      connections++
      const events = await createSseReader(response.body!).events(5 + Math.floor(Math.random() * 20))
      received.push(...events)
      lastEventId = received.at(-1)?.id ?? lastEventId
      controller.abort()
    }
    await writing
    expect(connections).toBeGreaterThan(3)
    expect(received.map((frame) => frame.envelope)).toEqual(await run.stored())
    // Every aborted connection unsubscribed (one may have taken the run-end into its body, unread, just
    // before the abort); the last one ended with the run.
    await expect
      .poll(() => subscriptions.every((subscription) => subscription.reason !== undefined))
      .toBe(true)
    expect(subscriptions.at(-1)!.reason).toBe('run-end')
  })

  it('ends a client that stopped reading as lagging, without slowing the publisher or another client', async () => {
    const run = await startRun()
    const normal = createSseReader((await open(`/api/runs/${run.id}/events`)).body!).events()
    const slow = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http
        .get(`${server.url}/api/runs/${run.id}/events`, { agent: false, headers: bearer(token) }, resolve)
        .once('error', reject),
    )
    slow.pause()
    const slowSubscription = subscriptions[1]!
    // Large events, until the slow client's socket buffers are full and its queue has overflowed.
    const large: AgentEvent = { type: 'raw', stream: 'stdout', value: 'x'.repeat(32 * 1024) }
    let written = 0
    while (slowSubscription.reason !== 'lagging' && written < 3000) {
      await run.write(large)
      written++
      if (written % 2 === 0) await sleep(1)
    }
    for (let index = 0; index < 10; index++) await run.write(toolCall(index))
    await run.end()
    // Every write completed while the slow client read nothing: publishing never waited for it (a blocked
    // publisher would hang this loop into the test's timeout).
    expect(slowSubscription.reason).toBe('lagging')

    const stored = await run.stored()
    expect((await normal).map((frame) => frame.envelope)).toEqual(stored)
    expect(subscriptions[0]!.reason).toBe('run-end')

    // Once it reads again, the slow client gets what was in flight, a notice, and the end of its stream.
    const parse = createSseParser()
    const frames: SseFrame[] = []
    const ended = new Promise((resolve) => slow.once('end', resolve))
    slow.setEncoding('utf8').on('data', (chunk: string) => frames.push(...parse(chunk)))
    slow.resume()
    await ended
    expect(frames.at(-1)).toEqual({ kind: 'comment', text: 'lagging: reconnect with Last-Event-ID' })
    const slowEvents = frames.flatMap((frame) => (frame.kind === 'event' ? [frame] : []))
    expect(slowEvents.length).toBeLessThan(stored.length)
    expect(slowEvents.map((frame) => frame.envelope)).toEqual(stored.slice(0, slowEvents.length))

    const lastEventId = slowEvents.at(-1)?.id ?? '0'
    const rest = await createSseReader(
      (await open(`/api/runs/${run.id}/events`, { lastEventId })).body!,
    ).events()
    expect(rest.map((frame) => frame.envelope)).toEqual(stored.slice(slowEvents.length))
  })

  it('sends keep-alive comments on an idle stream', async () => {
    const run = await startRun()
    const controller = new AbortController()
    const started = performance.now()
    const reader = createSseReader(
      (await open(`/api/runs/${run.id}/events`, { signal: controller.signal })).body!,
    )
    expect(await reader.next()).toEqual({ kind: 'comment', text: 'keep-alive' })
    expect(await reader.next()).toEqual({ kind: 'comment', text: 'keep-alive' })
    expect(performance.now() - started).toBeGreaterThanOrEqual(KEEP_ALIVE_MS * 2 - 20)
    controller.abort()
    await expect(subscriptions[0]!.ended).resolves.toBe('closed')
  })

  it('streams a conversation across its runs with id: <runId>:<seq> and resumes from one', async () => {
    const conversation = await testApp.store
      .forUser(testApp.owner.id)
      .conversations.create({ title: 't', profile: 'default', project: '/tmp' })
    const first = await startRun({ conversationId: conversation.id })
    await run(first, text('a'), toolCall(1), text('b'))
    const controller = new AbortController()
    const path = `/api/conversations/${conversation.id}/events`
    const reader = createSseReader((await open(path, { signal: controller.signal })).body!)
    expect((await reader.events(4)).map((frame) => frame.id)).toEqual(
      [1, 2, 3, 4].map((seq) => `${first.id}:${seq}`),
    )
    // A run that starts while the client is connected appears live.
    const second = await startRun({ conversationId: conversation.id })
    await run(second, toolCall(2), text('c'))
    const live = await reader.events(3)
    expect(live.map((frame) => frame.id)).toEqual([1, 2, 3].map((seq) => `${second.id}:${seq}`))
    expect(live.map((frame) => frame.envelope)).toEqual(await second.stored())
    controller.abort()

    const all = [...(await first.stored()), ...(await second.stored())]
    const resumed = new AbortController()
    const fromHeader = await createSseReader(
      (await open(path, { signal: resumed.signal, lastEventId: `${first.id}:2` })).body!,
    ).events(5)
    expect(fromHeader.map((frame) => frame.envelope)).toEqual(all.slice(2))
    resumed.abort()
    const fromQuery = new AbortController()
    const response = await fetch(`${server.url}${path}?lastEventId=${second.id}:1`, {
      headers: bearer(token),
      signal: fromQuery.signal,
    })
    expect((await createSseReader(response.body!).events(2)).map((frame) => frame.envelope)).toEqual(
      all.slice(5),
    )
    fromQuery.abort()

    async function run(target: Awaited<ReturnType<typeof startRun>>, ...events: AgentEvent[]) {
      await target.write(...events)
      await target.end()
    }
  })

  it("answers 404 for another user's run or conversation, and for an unknown id", async () => {
    const other = await testApp.store.users.create({ name: 'other', role: 'member' })
    const theirs = await startRun({ user: other })
    await theirs.write(text('secret'))
    const conversation = await testApp.store
      .forUser(other.id)
      .conversations.create({ title: 't', profile: 'default', project: '/tmp' })
    for (const path of [
      `/api/runs/${theirs.id}/events`,
      `/api/conversations/${conversation.id}/events`,
      '/api/runs/run_01NOSUCHRUN/events',
    ]) {
      const envelope = await errorEnvelopeOf(await open(path), 404)
      expect(envelope.error.code).toBe('not_found')
    }
    expect(subscriptions).toEqual([])
  })

  it('answers 401 without credentials and 400 for a malformed Last-Event-ID', async () => {
    const run = await startRun()
    const anonymous = await fetch(`${server.url}/api/runs/${run.id}/events`)
    expect((await errorEnvelopeOf(anonymous, 401)).error.code).toBe('unauthorized')
    const conversation = await testApp.store
      .forUser(testApp.owner.id)
      .conversations.create({ title: 't', profile: 'default', project: '/tmp' })
    for (const [path, lastEventId] of [
      [`/api/runs/${run.id}/events`, 'abc'],
      [`/api/runs/${run.id}/events`, `${run.id}:1`],
      [`/api/conversations/${conversation.id}/events`, '7'],
    ]) {
      const envelope = await errorEnvelopeOf(await open(path!, { lastEventId: lastEventId! }), 400)
      expect(envelope.error).toMatchObject({
        code: 'invalid_request',
        message: expect.stringMatching(/Last-Event-ID/),
      })
    }
    const badQuery = await fetch(`${server.url}/api/runs/${run.id}/events?lastEventId=x`, {
      headers: bearer(token),
    })
    expect((await errorEnvelopeOf(badQuery, 400)).error.code).toBe('invalid_request')
  })
})
