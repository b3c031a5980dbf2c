// Appending run events, on both engines: a batch lands whole or not at all, in seq order, however large,
// and inside a store transaction it goes with that transaction.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import type { EventEnvelope } from '../core/events.js'
import type { RunsRepository } from './repositories/runs-repository.js'
import type { Store } from './store.js'

const TS = '2026-01-01T00:00:00.000Z'

function textEvents(runId: string, fromSeq: number, count: number, label = runId): EventEnvelope[] {
  return Array.from({ length: count }, (_, index) => ({
    v: 1,
    runId,
    seq: fromSeq + index,
    ts: TS,
    type: 'text-delta',
    text: `${label} #${fromSeq + index} ✓`,
  }))
}

async function allEvents(runs: RunsRepository, runId: string): Promise<EventEnvelope[]> {
  const events: EventEnvelope[] = []
  for (;;) {
    const page = await runs.listEvents(runId, { afterSeq: events.at(-1)?.seq ?? 0 })
    if (page.length === 0) return events
    events.push(...page)
  }
}

describe.each(STORE_ENGINES)('run event append ($name)', (engine) => {
  let testStore: TestStore
  let store: Store
  let runs: RunsRepository

  beforeEach(async () => {
    testStore = await engine.open()
    store = testStore.store
    const owner = await store.users.create({ name: 'alice', role: 'owner' })
    runs = store.forUser(owner.id).runs
  })
  afterEach(async () => {
    await testStore.dispose()
  })

  const newRun = () => runs.create({ agent: 'builtin', adapter: 'builtin', prompt: 'p', cwd: '/tmp' })

  it('stores a burst larger than the engine’s bind-parameter limit as one batch, in seq order', async () => {
    const run = await newRun()
    // 20,000 rows of five columns is past SQLite's 32,766 and PostgreSQL's 65,535 bound parameters.
    const burst = textEvents(run.id, 1, 20_000)
    await runs.appendEvents(burst)
    expect(await runs.lastEventSeq(run.id)).toBe(20_000)
    expect(await allEvents(runs, run.id)).toEqual(burst)
  })

  it('gives back every event as it was stored, whatever characters its fields hold', async () => {
    const run = await newRun()
    const texts = [
      '"quoted", {braced}, a\\b',
      'line\nbreak\ttab\r',
      'NULL',
      '',
      ' ',
      'é ✓ 😀 \u2028',
      '\u0001',
    ]
    const events: EventEnvelope[] = texts.map((text, index) => ({
      v: 1,
      runId: run.id,
      seq: index + 1,
      ts: TS,
      type: 'text-delta',
      text,
    }))
    events.push({
      v: 1,
      runId: run.id,
      seq: texts.length + 1,
      ts: TS,
      type: 'tool-call',
      toolCallId: 'call,1',
      name: 'Write',
      input: { path: 'a,b\n.txt', lines: ['x', '"y"'], nested: { n: 1, empty: {} } },
    } as unknown as EventEnvelope)
    await runs.appendEvents(events)
    expect(await allEvents(runs, run.id)).toEqual(events)
  })

  it('stores a batch whole or not at all: a seq already stored refuses all of it', async () => {
    const run = await newRun()
    await runs.appendEvents(textEvents(run.id, 1, 3))
    const clashing = [...textEvents(run.id, 4, 2), ...textEvents(run.id, 2, 1), ...textEvents(run.id, 6, 1)]
    await expect(runs.appendEvents(clashing)).rejects.toThrow()
    expect(await runs.lastEventSeq(run.id)).toBe(3)
    // The writer's next batch still goes in after the refused one.
    await runs.appendEvents(textEvents(run.id, 4, 2, 'again'))
    expect((await allEvents(runs, run.id)).map((event) => event.seq)).toEqual([1, 2, 3, 4, 5])
  })

  it('fails only the batch at fault when batches of several runs are appended in the same turn', async () => {
    const [good, bad, later] = await Promise.all([newRun(), newRun(), newRun()])
    await runs.appendEvents(textEvents(bad.id, 1, 2))
    const results = await Promise.allSettled([
      runs.appendEvents(textEvents(good.id, 1, 3)),
      runs.appendEvents([...textEvents(bad.id, 3, 2), ...textEvents(bad.id, 1, 1)]),
      runs.appendEvents(textEvents(later.id, 1, 2)),
    ])
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(await allEvents(runs, good.id)).toEqual(textEvents(good.id, 1, 3))
    expect(await allEvents(runs, bad.id)).toEqual(textEvents(bad.id, 1, 2))
    expect(await allEvents(runs, later.id)).toEqual(textEvents(later.id, 1, 2))
  })

  it('keeps each run dense and ordered when many runs append batches at once', async () => {
    const started = await Promise.all(Array.from({ length: 20 }, () => newRun()))
    await Promise.all(
      started.map(async (run) => {
        for (let batch = 0; batch < 10; batch++)
          await runs.appendEvents(textEvents(run.id, batch * 25 + 1, 25))
      }),
    )
    for (const run of started) expect(await allEvents(runs, run.id)).toEqual(textEvents(run.id, 1, 250))
  })

  it('goes with the store transaction it is appended in: rolled back with it', async () => {
    const run = await newRun()
    const ownerId = (await store.users.findOwner())!.id
    await expect(
      store.transaction(async (repositories) => {
        await repositories.forUser(ownerId).runs.appendEvents(textEvents(run.id, 1, 3))
        throw new Error('abandoned')
      }),
    ).rejects.toThrow('abandoned')
    expect(await runs.lastEventSeq(run.id)).toBe(0)
    await store.transaction((repositories) =>
      repositories.forUser(ownerId).runs.appendEvents(textEvents(run.id, 1, 2)),
    )
    expect(await allEvents(runs, run.id)).toEqual(textEvents(run.id, 1, 2))
  })

  it('stores nothing for a run that is gone, and the other runs of the same turn get theirs', async () => {
    const run = await newRun()
    const results = await Promise.allSettled([
      runs.appendEvents(textEvents('run_gone', 1, 2)),
      runs.appendEvents(textEvents(run.id, 1, 2)),
    ])
    expect(results[1]!.status).toBe('fulfilled')
    expect(await runs.lastEventSeq('run_gone')).toBe(0)
    expect(await allEvents(runs, run.id)).toEqual(textEvents(run.id, 1, 2))
  })

  it("deletes a run's events with it when its conversation is deleted", async () => {
    const ownerId = (await store.users.findOwner())!.id
    const conversations = store.forUser(ownerId).conversations
    const conversation = await conversations.create({ title: 'c', profile: 'builtin', project: 'p' })
    const run = await runs.create({
      agent: 'builtin',
      adapter: 'builtin',
      prompt: 'p',
      cwd: '/tmp',
      conversationId: conversation.id,
    })
    const other = await newRun()
    await runs.appendEvents(textEvents(run.id, 1, 3))
    await runs.appendEvents(textEvents(other.id, 1, 2))
    await conversations.delete(conversation.id)
    expect(await runs.lastEventSeq(run.id)).toBe(0)
    expect(await runs.lastEventSeq(other.id)).toBe(2)
  })
})
