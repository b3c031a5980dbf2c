// The proxy's request log written behind: rows are queued on the request path and stored in batches, one
// transaction per batch, within the flush interval; a clean stop stores everything queued.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { proxyRequestRow } from '../../test/helpers/proxy-request-row.js'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import { silentLogger } from '../core/logger.js'
import { proxyRequestLogWritten, type ProxyWorkMessage } from './proxy-timing.js'
import { createRequestLogWriter, type RequestLogWriter } from './request-log-writer.js'

describe.each(STORE_ENGINES)('request log writer ($name)', (engine) => {
  let testStore: TestStore
  let userId: string
  let writer: RequestLogWriter
  let rows = 0
  let runId: string

  const row = () =>
    proxyRequestRow({
      id: `p${++rows}`,
      profile: 'reviewer',
      startedAt: new Date().toISOString(),
      costUsd: 0.5,
      runId,
    })
  const stored = async () =>
    (await testStore.store.forUser(userId).proxyRequests.totalsForRun(runId)).requests
  /** What the usage report counts over all time: its requests, and the runs they were of. */
  const reported = async () => {
    const cells = await testStore.store
      .forUser(userId)
      .usage.cells({ from: '2000-01-01T00:00:00.000Z', to: '2999-01-01T00:00:00.000Z' })
    return {
      requests: cells.reduce((sum, cell) => sum + cell.requests, 0),
      runIds: cells.flatMap((cell) => cell.runIds).sort(),
    }
  }
  /** Waits until `count` rows of the run are stored (30 s at most). */
  const storedReach = async (count: number, what: string) => {
    const deadline = Date.now() + 30_000
    while ((await stored()) < count) {
      if (Date.now() > deadline) throw new Error(`${what} was never stored`)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }
  /**
   * A writer on a clock the test moves (`at(ms)`), with an interval no test waits out: only a row's arrival,
   * or flush(), stores.
   */
  const clockedWriter = (options: { busy?: () => boolean; flushMs?: number } = {}) => {
    let clock = 0
    writer = createRequestLogWriter({
      store: testStore.store,
      log: silentLogger,
      flushMs: options.flushMs ?? 600_000,
      now: () => clock,
      ...(options.busy && { busy: options.busy }),
    })
    return { at: (ms: number) => (clock = ms), now: () => clock }
  }

  beforeEach(async () => {
    testStore = await engine.open()
    userId = (await testStore.store.users.create({ name: 'owner', role: 'owner' })).id
    runId = (
      await testStore.store
        .forUser(userId)
        .runs.create({ agent: 'a', adapter: 'builtin', prompt: 'p', cwd: '/w' })
    ).id
  })
  afterEach(async () => {
    vi.restoreAllMocks()
    await writer.close()
    await testStore.dispose()
  })

  it('stores what was queued in one statement per batch', async () => {
    // An interval no test waits out: only flush() stores.
    writer = createRequestLogWriter({ store: testStore.store, log: silentLogger, flushMs: 600_000 })
    const batches = vi.spyOn(testStore.store.proxyRequestLog, 'recordMany')
    for (let i = 0; i < 5; i++) writer.add(userId, row())
    expect(await stored()).toBe(0)
    await writer.flush()
    expect(await stored()).toBe(5)
    expect(batches).toHaveBeenCalledTimes(1)
  })

  it('tells a subscriber of its diagnostics channel when each batch was written, and how many rows', async () => {
    writer = createRequestLogWriter({ store: testStore.store, log: silentLogger, flushMs: 600_000 })
    const written: ProxyWorkMessage[] = []
    const listen = (message: unknown) => written.push(message as ProxyWorkMessage)
    proxyRequestLogWritten.subscribe(listen)
    try {
      const before = performance.now()
      for (let i = 0; i < 3; i++) writer.add(userId, row())
      await writer.flush()
      expect(written).toEqual([{ startedAt: expect.any(Number), endedAt: expect.any(Number), items: 3 }])
      expect(written[0]!.startedAt).toBeGreaterThanOrEqual(before)
      expect(written[0]!.endedAt).toBeGreaterThanOrEqual(written[0]!.startedAt)
    } finally {
      proxyRequestLogWritten.unsubscribe(listen)
    }
  })

  it('stores a large batch, for every user in it, in one statement', async () => {
    writer = createRequestLogWriter({ store: testStore.store, log: silentLogger, flushMs: 600_000 })
    const other = (await testStore.store.users.create({ name: 'member', role: 'member' })).id
    const batches = vi.spyOn(testStore.store.proxyRequestLog, 'recordMany')
    for (let i = 0; i < 450; i++) writer.add(userId, row())
    writer.add(
      other,
      proxyRequestRow({
        id: 'p-other',
        profile: 'reviewer',
        startedAt: new Date().toISOString(),
        costUsd: 1,
      }),
    )
    await writer.flush()
    expect(await stored()).toBe(450)
    const since = new Date(Date.now() - 60_000).toISOString()
    expect(await testStore.store.forUser(other).proxyRequests.spentSince('reviewer', since)).toBe(1)
    expect(batches).toHaveBeenCalledTimes(1)
  })

  it('counts the spend of a profile whose name holds quotes and backslashes under that very name', async () => {
    writer = createRequestLogWriter({ store: testStore.store, log: silentLogger, flushMs: 600_000 })
    // Names reach the spend statement as SQL literals on PostgreSQL: quoted, never run.
    const profile = "it's\\'); DELETE FROM proxy_spend; --"
    const odd = proxyRequestRow({
      id: 'p-quoted',
      profile,
      startedAt: new Date().toISOString(),
      costUsd: 0.25,
      runId,
    })
    writer.add(userId, row())
    writer.add(userId, odd)
    await writer.flush()
    const since = new Date(Date.now() - 60_000).toISOString()
    const scope = testStore.store.forUser(userId).proxyRequests
    expect(await scope.spentSince(profile, since)).toBe(0.25)
    expect(await scope.spentSince('reviewer', since)).toBe(0.5)
    expect((await scope.listForRun(runId)).map((stored) => stored.profile).sort()).toEqual(
      ['reviewer', profile].sort(),
    )
  })

  it('stores a batch whole or not at all, and then the good rows of a failed batch each alone', async () => {
    writer = createRequestLogWriter({ store: testStore.store, log: silentLogger, flushMs: 600_000 })
    const existing = row()
    await testStore.store.proxyRequestLog.recordMany([{ userId, row: existing }])
    const good = [row(), row()]
    // Its id is taken: its primary key fails the statement.
    const bad = { ...row(), id: existing.id }
    await expect(
      testStore.store.proxyRequestLog.recordMany([
        { userId, row: good[0]! },
        { userId, row: bad },
        { userId, row: good[1]! },
      ]),
    ).rejects.toThrow()
    expect(await stored()).toBe(1)
    writer.add(userId, good[0]!)
    writer.add(userId, bad)
    writer.add(userId, good[1]!)
    await writer.flush()
    expect(await stored()).toBe(3)
  })

  it('does not store, nor count, a row whose run was deleted before it was written', async () => {
    writer = createRequestLogWriter({ store: testStore.store, log: silentLogger, flushMs: 600_000 })
    const since = new Date(Date.now() - 60_000).toISOString()
    const spent = () => testStore.store.forUser(userId).proxyRequests.spentSince('reviewer', since)
    const orphan = proxyRequestRow({
      id: 'p-orphan',
      profile: 'reviewer',
      startedAt: new Date().toISOString(),
      costUsd: 0.5,
      runId: 'run_deleted',
    })
    writer.add(userId, row())
    writer.add(userId, orphan)
    await writer.flush()
    expect(await stored()).toBe(1)
    expect(await spent()).toBe(0.5)
    expect(await testStore.store.forUser(userId).proxyRequests.listForRun('run_deleted')).toEqual([])
    expect(await reported()).toEqual({ requests: 1, runIds: [runId] })
  })

  it("deletes a run's rows with the run, also when its conversation's deletion deletes it", async () => {
    writer = createRequestLogWriter({ store: testStore.store, log: silentLogger, flushMs: 600_000 })
    const scope = testStore.store.forUser(userId)
    const conversation = await scope.conversations.create({ title: 'c', profile: 'a', project: 'p' })
    const inConversation = (
      await scope.runs.create({
        agent: 'a',
        adapter: 'builtin',
        prompt: 'p',
        cwd: '/w',
        conversationId: conversation.id,
      })
    ).id
    writer.add(userId, row())
    writer.add(userId, { ...row(), runId: inConversation })
    writer.add(userId, { ...row(), runId: inConversation })
    await writer.flush()
    expect((await scope.proxyRequests.totalsForRun(inConversation)).requests).toBe(2)
    expect(await reported()).toEqual({ requests: 3, runIds: [runId, inConversation].sort() })
    await scope.conversations.delete(conversation.id)
    expect((await scope.proxyRequests.totalsForRun(inConversation)).requests).toBe(0)
    expect(await stored()).toBe(1)
    expect(await reported()).toEqual({ requests: 1, runIds: [runId] })
    // Budgets keep what was spent: the money went.
    const since = new Date(Date.now() - 60_000).toISOString()
    expect(await scope.proxyRequests.spentSince('reviewer', since)).toBe(1.5)
  })

  it('sums what it stores per minute, profile and run for the usage report, batch after batch', async () => {
    writer = createRequestLogWriter({ store: testStore.store, log: silentLogger, flushMs: 600_000 })
    const at = (minute: string, fields: Partial<Parameters<typeof proxyRequestRow>[0]> = {}) =>
      proxyRequestRow({
        id: `u${++rows}`,
        profile: 'reviewer',
        startedAt: `2026-03-01T10:${minute}.000Z`,
        costUsd: 0.25,
        runId,
        ...fields,
      })
    writer.add(userId, at('00:01'))
    writer.add(userId, at('00:59', { costUsd: null }))
    writer.add(userId, at('00:30', { runId: null, costUsd: 1 }))
    // Refused by the provider: in the log, not in the usage (as the report always counted).
    writer.add(userId, at('00:40', { status: 429, costUsd: null }))
    await writer.flush()
    // A later batch adds to the same minute's sums; another minute of the same day joins its day.
    writer.add(
      userId,
      at('00:02', { usage: { inputTokens: 5, outputTokens: 2, cacheReadTokens: 7, cacheWriteTokens: 3 } }),
    )
    writer.add(userId, at('01:00'))
    await writer.flush()

    const cells = await testStore.store
      .forUser(userId)
      .usage.cells({ from: '2026-03-01T00:00:00.000Z', to: '2026-03-01T23:59:59.999Z' })
    expect(cells).toEqual([
      expect.objectContaining({
        agent: 'reviewer',
        day: '2026-03-01',
        inputTokens: 10 * 4 + 5,
        outputTokens: 4 + 2,
        cacheReadTokens: 7,
        cacheWriteTokens: 3,
        costUsd: 0.25 * 3 + 1,
        unpriced: 1,
        requests: 5,
        runIds: [runId],
      }),
    ])
    // The minutes a range's ends fall in count whole.
    const tenOClock = await testStore.store
      .forUser(userId)
      .usage.cells({ from: '2026-03-01T10:00:30.000Z', to: '2026-03-01T10:00:45.000Z' })
    expect(tenOClock[0]).toMatchObject({ requests: 4, costUsd: 0.25 * 2 + 1 })
  })

  it('keeps every field of a row', async () => {
    writer = createRequestLogWriter({ store: testStore.store, log: silentLogger, flushMs: 600_000 })
    const full = proxyRequestRow({
      id: 'p-full',
      profile: 'reviewer',
      startedAt: '2026-01-02T03:04:05.678Z',
      costUsd: 0.125,
      runId,
    })
    full.feeds = [{ name: 'f', source: 's', status: 'fresh', bytes: 3, truncated: false }]
    full.model = 'claude-sonnet-4-5'
    full.error = 'client went away'
    full.stream = true
    full.usage = {
      inputTokens: 1200,
      outputTokens: 40,
      cacheReadTokens: 5000,
      cacheWriteTokens: 7,
      costUsd: 0.125,
    }
    writer.add(userId, full)
    await writer.flush()
    const [record] = await testStore.store.forUser(userId).proxyRequests.listForRun(runId)
    expect(record).toEqual(full)
    // In a batch of many rows too (several rows per statement), every row keeps every field.
    const many = Array.from({ length: 70 }, (_, index) => ({
      ...full,
      id: `p-many-${String(index).padStart(2, '0')}`,
      durationMs: index,
      usage: { ...full.usage, outputTokens: index },
    }))
    for (const row of many) writer.add(userId, row)
    await writer.flush()
    const stored = await testStore.store.forUser(userId).proxyRequests.listForRun(runId)
    expect(stored.filter((row) => row.id.startsWith('p-many-'))).toEqual(many)
  })

  it("stores, in the batch's own statement, text that COPY's format escapes as it came", async () => {
    writer = createRequestLogWriter({ store: testStore.store, log: silentLogger, flushMs: 600_000 })
    const odd = proxyRequestRow({
      id: 'p-odd',
      profile: 'reviewer',
      startedAt: new Date().toISOString(),
      costUsd: null,
      runId,
    })
    // Backslash, tab, newline and carriage return, and the null and end markers as text.
    odd.error = 'went away\tat 03:04\r\nretry: C:\\tmp \\N \\. "quoted" ünïcødé'
    odd.path = '/v1/messages\\N'
    odd.model = '\\N'
    await testStore.store.proxyRequestLog.recordMany([{ userId, row: odd }])
    expect(await testStore.store.forUser(userId).proxyRequests.listForRun(runId)).toEqual([odd])
  })

  it('stores a queued row by itself within the flush interval', async () => {
    writer = createRequestLogWriter({ store: testStore.store, log: silentLogger, flushMs: 20 })
    writer.add(userId, row())
    await storedReach(1, 'the row')
  })

  it('stores the batch as a request ends once its oldest row has waited most of the interval', async () => {
    const clock = clockedWriter()
    const batches = vi.spyOn(testStore.store.proxyRequestLog, 'recordMany')
    writer.add(userId, row())
    clock.at(300_000)
    writer.add(userId, row())
    await Promise.resolve()
    expect(batches).not.toHaveBeenCalled()
    // 80 % of the interval after the first: this one's request ends, and the three go together.
    clock.at(480_000)
    writer.add(userId, row())
    await storedReach(3, 'the batch')
    expect(batches).toHaveBeenCalledTimes(1)
    // The next row starts a new wait.
    writer.add(userId, row())
    clock.at(500_000)
    writer.add(userId, row())
    await Promise.resolve()
    expect(writer.queued).toBe(2)
  })

  it('stores a batch due early only as a row comes while no request is in flight', async () => {
    let inFlight = 1
    const clock = clockedWriter({ busy: () => inFlight > 0 })
    const batches = vi.spyOn(testStore.store.proxyRequestLog, 'recordMany')
    writer.add(userId, row())
    clock.at(480_000)
    writer.add(userId, row())
    clock.at(500_000)
    writer.add(userId, row())
    await Promise.resolve()
    expect(batches).not.toHaveBeenCalled()
    inFlight = 0
    writer.add(userId, row())
    await storedReach(4, 'the batch')
    expect(batches).toHaveBeenCalledTimes(1)
  })

  it('looks again each millisecond once the batch is due, and stores it at the first pause (or the interval)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      let inFlight = 1
      // The writer's clock and its timers, moved together.
      const clock = clockedWriter({ busy: () => inFlight > 0, flushMs: 100 })
      const advance = async (ms: number) => {
        clock.at(clock.now() + ms)
        await vi.advanceTimersByTimeAsync(ms)
      }
      // A batch taken for storing leaves the queue at once.
      writer.add(userId, row())
      await advance(83)
      expect(writer.queued).toBe(1)
      inFlight = 0
      await advance(1)
      expect(writer.queued).toBe(0)
      // Requests that never pause: the next batch goes when its interval is up.
      inFlight = 1
      writer.add(userId, row())
      await advance(99)
      expect(writer.queued).toBe(1)
      await advance(1)
      expect(writer.queued).toBe(0)
    } finally {
      vi.useRealTimers()
    }
    await storedReach(2, 'both batches')
  })

  it('stores a queued row within the flush interval while requests never pause', async () => {
    writer = createRequestLogWriter({
      store: testStore.store,
      log: silentLogger,
      flushMs: 20,
      busy: () => true,
    })
    writer.add(userId, row())
    await storedReach(1, 'the row')
  })

  it('asks for one batch while one is being written, however many requests end meanwhile', async () => {
    const clock = clockedWriter()
    const recordMany = testStore.store.proxyRequestLog.recordMany.bind(testStore.store.proxyRequestLog)
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    // The first batch's write is held in flight, as a COPY's round trip holds it.
    const batches = vi
      .spyOn(testStore.store.proxyRequestLog, 'recordMany')
      .mockImplementationOnce(async (rows) => {
        await gate
        return recordMany(rows)
      })
    writer.add(userId, row())
    clock.at(480_000)
    writer.add(userId, row())
    // Requests end while that batch is written: their rows wait for their own interval.
    for (let i = 0; i < 3; i++) {
      clock.at(clock.now() + 10)
      writer.add(userId, row())
    }
    release()
    await storedReach(2, 'the batch')
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(batches).toHaveBeenCalledTimes(1)
    expect(writer.queued).toBe(3)
  })

  it('loses nothing on a clean stop', async () => {
    writer = createRequestLogWriter({ store: testStore.store, log: silentLogger, flushMs: 600_000 })
    for (let i = 0; i < 250; i++) writer.add(userId, row())
    await writer.close()
    expect(await stored()).toBe(250)
    // Metered after the stop (a request that was still in flight): stored at once.
    writer.add(userId, row())
    await writer.flush()
    expect(await stored()).toBe(251)
  })
})
