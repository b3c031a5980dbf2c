// The schedule loop of one daemon. Each tick reads the schedule triggers (one query), and for each whose
// latest slot at or before now is after what this daemon has seen, fires that slot; the store's unique
// (trigger, slot) claim makes it one fire per slot across every daemon. Slots missed while no daemon ran
// are skipped, or — `missed: once` — the latest one fires once at start. Several slots passing within one
// tick (a stalled process) fire once, for the latest. The loop sleeps until the next slot is due (at most
// `maxSleepMs`), never overlaps itself, and `stop()` waits for a tick in progress.
import { type Clock, systemClock } from '../core/ids.js'
import type { Logger } from '../core/logger.js'
import type { Trigger } from '../store/repositories/triggers-repository.js'
import type { Store } from '../store/store.js'
import { type CronSchedule, nextFire, parseCron, previousFire } from './cron.js'

export interface TriggerSchedulerOptions {
  store: Store
  fire: (trigger: Trigger, slot: Date) => Promise<unknown>
  clock?: Clock
  log: Logger
  /** The longest sleep between ticks (default 30 s): new triggers are seen within it. */
  maxSleepMs?: number
}

export interface TriggerScheduler {
  /** Fires missed slots of `missed: once` triggers, then ticks until stopped. */
  start(): Promise<void>
  /** One pass at the clock's current time (tests drive the clock and call this). */
  tick(): Promise<void>
  stop(): Promise<void>
}

export function createTriggerScheduler(options: TriggerSchedulerOptions): TriggerScheduler {
  const { store, log } = options
  const clock = options.clock ?? systemClock
  const maxSleepMs = options.maxSleepMs ?? 30_000
  /** Per trigger: the time up to which this daemon has looked for slots. */
  const seenUntil = new Map<string, number>()
  const schedules = new Map<string, CronSchedule>()
  let startedAt: number | undefined
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  let stopped = false

  function scheduleOf(trigger: Trigger): CronSchedule | undefined {
    const key = `${trigger.cron}\u0000${trigger.timezone}`
    let schedule = schedules.get(key)
    if (!schedule && trigger.cron) {
      try {
        schedule = parseCron(trigger.cron, trigger.timezone ?? 'UTC')
        schedules.set(key, schedule)
      } catch (error) {
        log.warn('trigger has an invalid schedule', { triggerId: trigger.id, error })
      }
    }
    return schedule
  }

  async function fireSafely(trigger: Trigger, slot: Date): Promise<void> {
    try {
      await options.fire(trigger, slot)
    } catch (error) {
      log.error('trigger fire failed', { triggerId: trigger.id, slot: slot.toISOString(), error })
    }
  }

  async function pass(now: number): Promise<number | undefined> {
    let nextDue: number | undefined
    for (const trigger of await store.triggers.schedules()) {
      const schedule = scheduleOf(trigger)
      if (!schedule) continue
      const since = seenUntil.get(trigger.id) ?? Math.max(startedAt ?? now, Date.parse(trigger.createdAt))
      const slot = previousFire(schedule, new Date(now))
      if (slot && slot.getTime() > since) await fireSafely(trigger, slot)
      seenUntil.set(trigger.id, Math.max(since, now))
      const next = nextFire(schedule, new Date(now))?.getTime()
      if (next !== undefined && (nextDue === undefined || next < nextDue)) nextDue = next
    }
    return nextDue
  }

  async function missedOnce(now: number): Promise<void> {
    for (const trigger of await store.triggers.schedules()) {
      if (trigger.missed !== 'once') continue
      const schedule = scheduleOf(trigger)
      const slot = schedule && previousFire(schedule, new Date(now))
      if (!slot) continue
      const last = await store.triggers.lastScheduleSlot(trigger.id)
      const after = Math.max(Date.parse(trigger.createdAt), last ? Date.parse(last) : 0)
      if (slot.getTime() > after) {
        log.info('trigger missed a slot while no daemon ran; firing it once', {
          triggerId: trigger.id,
          slot: slot.toISOString(),
        })
        await fireSafely(trigger, slot)
      }
      seenUntil.set(trigger.id, now)
    }
  }

  function arm(nextDue: number | undefined): void {
    if (stopped) return
    const now = clock().getTime()
    const delay = Math.min(maxSleepMs, Math.max(250, (nextDue ?? now + maxSleepMs) - now))
    timer = setTimeout(() => void loop(), delay)
    timer.unref()
  }

  /** One pass at a time: a tick asked for during a pass waits for it, then makes its own. */
  async function exclusivePass(): Promise<number | undefined> {
    while (running) await running
    const work = pass(clock().getTime())
    running = work.then(
      () => undefined,
      () => undefined,
    )
    try {
      return await work
    } finally {
      running = undefined
    }
  }

  async function loop(): Promise<void> {
    const nextDue = await exclusivePass().catch((error: unknown) => {
      log.error('trigger scheduler pass failed', { error })
      return undefined
    })
    arm(nextDue)
  }

  return {
    async start() {
      stopped = false
      startedAt = clock().getTime()
      // A start is a start: slots passed while stopped follow the missed-run policy, not the old cursor.
      seenUntil.clear()
      await missedOnce(startedAt).catch((error: unknown) =>
        log.error('trigger scheduler could not look for missed slots', { error }),
      )
      arm(undefined)
    },
    async tick() {
      await exclusivePass()
    },
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      timer = undefined
      while (running) await running
    },
  }
}
