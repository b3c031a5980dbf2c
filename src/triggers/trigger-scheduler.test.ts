// The schedule loop on a real store with an injected clock: slots fire at their wall time in the trigger's
// zone (across a DST change), several slots passing in one tick fire once (the latest), an invalid stored
// schedule is logged and skipped, and stop() waits for a pass in progress.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import type { Logger } from '../core/logger.js'
import type { Trigger } from '../store/repositories/triggers-repository.js'
import { createTriggerScheduler } from './trigger-scheduler.js'

const sqlite = STORE_ENGINES.find((engine) => engine.name === 'sqlite')!

function silentLog(): Logger & { warnings: string[] } {
  const warnings: string[] = []
  const log = {
    warnings,
    debug() {},
    info() {},
    warn(message: string) {
      warnings.push(message)
    },
    error() {},
    child: () => log,
  }
  return log as unknown as Logger & { warnings: string[] }
}

describe('trigger scheduler', () => {
  let testStore: TestStore
  let now = Date.parse('2026-03-07T12:00:00Z')
  const clock = () => new Date(now)
  let userId: string

  beforeEach(async () => {
    now = Date.parse('2026-03-07T12:00:00Z')
    testStore = await sqlite.open({ clock })
    userId = (await testStore.store.users.create({ name: 'alice', role: 'owner' })).id
  })
  afterEach(async () => {
    await testStore.dispose()
  })

  const add = (name: string, cron: string, timezone = 'UTC') =>
    testStore.store.triggers.create({
      userId,
      name,
      kind: 'schedule',
      cron,
      timezone,
      missed: 'skip',
      projectId: null,
      agent: null,
      prompt: 'p',
      conversationId: null,
      filter: null,
      report: null,
      secretEnvelope: null,
    })

  it('fires at the wall time of its zone across DST, and once for several slots passed in one tick', async () => {
    const fired: string[] = []
    const scheduler = createTriggerScheduler({
      store: testStore.store,
      clock,
      log: silentLog(),
      fire: async (trigger: Trigger, slot: Date) => {
        fired.push(`${trigger.name}@${slot.toISOString()}`)
        await testStore.store.triggers.claimFire(trigger.id, slot.toISOString(), 'schedule')
      },
    })
    await add('morning', '0 9 * * *', 'America/New_York')
    await add('hourly', '0 * * * *')
    await scheduler.start()
    // 09:00 EST on the 7th is 14:00Z; 09:00 EDT on the 8th (after the jump) is 13:00Z.
    now = Date.parse('2026-03-07T14:00:00Z')
    await scheduler.tick()
    now = Date.parse('2026-03-08T13:00:05Z')
    await scheduler.tick()
    await scheduler.stop()
    expect(fired.sort()).toEqual([
      'hourly@2026-03-07T14:00:00.000Z',
      // 23 hourly slots passed in one tick: the latest fires, once.
      'hourly@2026-03-08T13:00:00.000Z',
      'morning@2026-03-07T14:00:00.000Z',
      'morning@2026-03-08T13:00:00.000Z',
    ])
  })

  it('logs and skips a trigger whose stored schedule is invalid', async () => {
    const log = silentLog()
    const fired: string[] = []
    const scheduler = createTriggerScheduler({
      store: testStore.store,
      clock,
      log,
      fire: async (trigger: Trigger) => void fired.push(trigger.name),
    })
    await add('broken', '61 * * * *')
    await scheduler.tick()
    now += 3_600_000
    await scheduler.tick()
    expect(fired).toEqual([])
    expect(log.warnings).toContain('trigger has an invalid schedule')
  })

  it('stop() waits for a pass in progress', async () => {
    let release!: () => void
    const blocked = new Promise<void>((resolve) => (release = resolve))
    let finished = false
    const scheduler = createTriggerScheduler({
      store: testStore.store,
      clock,
      log: silentLog(),
      fire: async () => {
        await blocked
        finished = true
      },
    })
    await add('every-minute', '* * * * *')
    await scheduler.start()
    now += 60_000
    const pass = scheduler.tick()
    // The pass is under way (its fire waits); stop must not return before it ends.
    await new Promise((resolve) => setImmediate(resolve))
    let stopped = false
    const stopping = scheduler.stop().then(() => (stopped = true))
    await new Promise((resolve) => setImmediate(resolve))
    expect(stopped).toBe(false)
    release()
    await Promise.all([pass, stopping])
    expect(finished).toBe(true)
  })
})
