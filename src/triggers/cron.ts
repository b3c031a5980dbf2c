// Five-field cron expressions (minute hour day-of-month month day-of-week) evaluated in an IANA time zone.
// Fields take `*`, numbers, ranges `a-b`, steps `*/n`, `a-b/n`, `a/n`, lists `a,b-c`, month names JAN-DEC
// and day names SUN-SAT (0 and 7 are both Sunday). As in Vixie cron, when both day fields are restricted a
// day matches either of them.
//
// Daylight saving time: a wall time the clock skips (spring forward) fires once, at the same wall minute
// after the jump (02:30 → 03:30); a wall time that happens twice (fall back) fires once, at its first
// occurrence. Times are searched day by day in wall-clock space and converted to instants, so finding the
// next slot is cheap whatever the expression.
import { AppError } from '../core/errors.js'

export interface CronSchedule {
  readonly expression: string
  readonly timezone: string
  readonly minutes: readonly number[]
  readonly hours: readonly number[]
  readonly days: ReadonlySet<number>
  readonly months: ReadonlySet<number>
  readonly weekdays: ReadonlySet<number>
  /** Both day fields restricted: a day matches either. */
  readonly dayOr: boolean
  readonly dayRestricted: boolean
  readonly weekdayRestricted: boolean
}

interface FieldSpec {
  name: string
  min: number
  max: number
  names?: readonly string[]
}

const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC']
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT']

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTH_NAMES },
  { name: 'day of week', min: 0, max: 7, names: DAY_NAMES },
]

/** How far the search looks (Feb 29 on a given weekday can be years away). */
const SEARCH_DAYS = 366 * 8

function invalid(expression: string, problem: string): AppError {
  return new AppError('invalid_request', `invalid cron expression "${expression}": ${problem}`, {
    hint: 'five fields: minute hour day-of-month month day-of-week, e.g. "0 9 * * MON-FRI"',
    details: { field: 'cron' },
  })
}

function parseValue(text: string, spec: FieldSpec, expression: string): number {
  const upper = text.toUpperCase()
  const named = spec.names?.indexOf(upper) ?? -1
  if (named >= 0) return spec.names === MONTH_NAMES ? named + 1 : named
  if (!/^\d+$/.test(text)) throw invalid(expression, `${spec.name} "${text}" is not a number`)
  const value = Number(text)
  if (value < spec.min || value > spec.max)
    throw invalid(expression, `${spec.name} ${value} is out of range ${spec.min}-${spec.max}`)
  return value
}

function parseField(text: string, spec: FieldSpec, expression: string): Set<number> {
  const values = new Set<number>()
  for (const part of text.split(',')) {
    if (part === '') throw invalid(expression, `empty list item in ${spec.name}`)
    const [range, stepText, extra] = part.split('/')
    if (extra !== undefined) throw invalid(expression, `${spec.name} "${part}" has more than one "/"`)
    let step = 1
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) === 0)
        throw invalid(expression, `${spec.name} step "${stepText}" must be a positive number`)
      step = Number(stepText)
    }
    let from: number
    let to: number
    if (range === '*') {
      from = spec.min
      to = spec.name === 'day of week' ? 6 : spec.max
    } else if (range!.includes('-')) {
      const [low, high, more] = range!.split('-')
      if (more !== undefined || !low || !high)
        throw invalid(expression, `${spec.name} "${range}" is not a range`)
      from = parseValue(low, spec, expression)
      to = parseValue(high, spec, expression)
      if (from > to) throw invalid(expression, `${spec.name} range ${range} runs backwards`)
    } else {
      from = parseValue(range!, spec, expression)
      to = stepText === undefined ? from : spec.name === 'day of week' ? 6 : spec.max
    }
    for (let value = from; value <= to; value += step) values.add(value)
  }
  return values
}

/** Throws `invalid_request` naming the problem when the time zone is not one this runtime knows. */
export function assertTimezone(timezone: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone })
  } catch {
    throw new AppError('invalid_request', `unknown time zone "${timezone}"`, {
      hint: 'an IANA time zone name such as "UTC", "Europe/Paris" or "America/New_York"',
      details: { field: 'timezone' },
    })
  }
}

export function parseCron(expression: string, timezone = 'UTC'): CronSchedule {
  const fields = expression.trim().split(/\s+/)
  if (fields.length !== 5 || fields[0] === '')
    throw invalid(expression, `expected 5 fields, got ${fields[0] === '' ? 0 : fields.length}`)
  assertTimezone(timezone)
  const [minutes, hours, days, months, weekdays] = fields.map((field, index) =>
    parseField(field, FIELDS[index]!, expression),
  ) as [Set<number>, Set<number>, Set<number>, Set<number>, Set<number>]
  if (weekdays.delete(7)) weekdays.add(0)
  const dayRestricted = fields[2] !== '*'
  const weekdayRestricted = fields[4] !== '*'
  const schedule: CronSchedule = {
    expression,
    timezone,
    minutes: [...minutes].sort((a, b) => a - b),
    hours: [...hours].sort((a, b) => a - b),
    days,
    months,
    weekdays,
    dayOr: dayRestricted && weekdayRestricted,
    dayRestricted,
    weekdayRestricted,
  }
  if (nextFire(schedule, new Date(Date.UTC(2000, 0, 1))) === undefined)
    throw invalid(expression, 'it never matches a date (e.g. 30 February)')
  return schedule
}

interface Wall {
  year: number
  month: number
  day: number
  hour: number
  minute: number
}

const formatters = new Map<string, Intl.DateTimeFormat>()

function wallOf(instant: number, timezone: string): Wall {
  let formatter = formatters.get(timezone)
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    })
    formatters.set(timezone, formatter)
  }
  const parts: Record<string, number> = {}
  for (const part of formatter.formatToParts(instant))
    if (part.type !== 'literal') parts[part.type] = Number(part.value)
  return {
    year: parts.year!,
    month: parts.month!,
    day: parts.day!,
    hour: parts.hour!,
    minute: parts.minute!,
  }
}

const wallMs = (wall: Wall) => Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute)
const offsetAt = (instant: number, timezone: string) => wallMs(wallOf(instant, timezone)) - instant

/**
 * The instant of a wall time: the earliest when it happens twice; when the clock skips it, the instant
 * the same wall minute would be with the offset before the jump (which lands after the jump).
 */
export function instantOfWall(wall: Wall, timezone: string): number {
  const target = wallMs(wall)
  const hour = 3_600_000
  const before = offsetAt(target - 14 * hour, timezone)
  const after = offsetAt(target + 14 * hour, timezone)
  const candidates = [target - before, target - after]
    .filter((instant) => wallMs(wallOf(instant, timezone)) === target)
    .sort((a, b) => a - b)
  return candidates[0] ?? target - before
}

function dayMatches(schedule: CronSchedule, year: number, month: number, day: number): boolean {
  if (!schedule.months.has(month)) return false
  const weekday = new Date(Date.UTC(year, month - 1, day)).getUTCDay()
  const byDay = schedule.days.has(day)
  const byWeekday = schedule.weekdays.has(weekday)
  if (schedule.dayOr) return byDay || byWeekday
  return (!schedule.dayRestricted || byDay) && (!schedule.weekdayRestricted || byWeekday)
}

function* wallTimesOfDay(schedule: CronSchedule, date: Date, descending: boolean): Generator<Wall> {
  const year = date.getUTCFullYear()
  const month = date.getUTCMonth() + 1
  const day = date.getUTCDate()
  if (!dayMatches(schedule, year, month, day)) return
  const hours = descending ? [...schedule.hours].reverse() : schedule.hours
  const minutes = descending ? [...schedule.minutes].reverse() : schedule.minutes
  for (const hour of hours) for (const minute of minutes) yield { year, month, day, hour, minute }
}

/** The first slot strictly after `after`, or undefined when none comes within eight years. */
export function nextFire(schedule: CronSchedule, after: Date): Date | undefined {
  const start = wallOf(after.getTime(), schedule.timezone)
  const startDay = Date.UTC(start.year, start.month - 1, start.day)
  // A day back: an instant after a fall-back jump can be reached from the wall times of the day before.
  for (let offset = -1; offset <= SEARCH_DAYS; offset++) {
    const date = new Date(startDay + offset * 86_400_000)
    for (const wall of wallTimesOfDay(schedule, date, false)) {
      const instant = instantOfWall(wall, schedule.timezone)
      if (instant > after.getTime()) return new Date(instant)
    }
  }
  return undefined
}

/** The last slot at or before `atOrBefore`, or undefined when none was within eight years. */
export function previousFire(schedule: CronSchedule, atOrBefore: Date): Date | undefined {
  const start = wallOf(atOrBefore.getTime(), schedule.timezone)
  const startDay = Date.UTC(start.year, start.month - 1, start.day)
  for (let offset = 1; offset >= -SEARCH_DAYS; offset--) {
    const date = new Date(startDay + offset * 86_400_000)
    let best: number | undefined
    for (const wall of wallTimesOfDay(schedule, date, true)) {
      const instant = instantOfWall(wall, schedule.timezone)
      if (instant <= atOrBefore.getTime() && (best === undefined || instant > best)) best = instant
    }
    if (best !== undefined) return new Date(best)
  }
  return undefined
}
