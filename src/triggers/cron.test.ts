import { describe, expect, it } from 'vitest'
import { AppError } from '../core/errors.js'
import { nextFire, parseCron, previousFire } from './cron.js'

const at = (iso: string) => new Date(iso)
const next = (expression: string, after: string, timezone = 'UTC') =>
  nextFire(parseCron(expression, timezone), at(after))?.toISOString()

/** The next `count` slots after `after`. */
function slots(expression: string, after: string, count: number, timezone = 'UTC'): string[] {
  const schedule = parseCron(expression, timezone)
  const out: string[] = []
  let cursor = at(after)
  for (let index = 0; index < count; index++) {
    cursor = nextFire(schedule, cursor)!
    out.push(cursor.toISOString())
  }
  return out
}

function failure(expression: string, timezone?: string): AppError {
  try {
    parseCron(expression, timezone)
  } catch (error) {
    return error as AppError
  }
  throw new Error(`${expression} parsed`)
}

describe('parseCron', () => {
  it('expands steps, ranges, lists and names', () => {
    const schedule = parseCron('*/15 9-17/4 1,15 JAN-mar MON-FRI')
    expect(schedule.minutes).toEqual([0, 15, 30, 45])
    expect(schedule.hours).toEqual([9, 13, 17])
    expect([...schedule.days]).toEqual([1, 15])
    expect([...schedule.months]).toEqual([1, 2, 3])
    expect([...schedule.weekdays]).toEqual([1, 2, 3, 4, 5])
    expect(parseCron('5/20 * * * *').minutes).toEqual([5, 25, 45])
    expect([...parseCron('0 0 * * 7').weekdays]).toEqual([0])
    expect([...parseCron('0 0 * * 5-7').weekdays].sort()).toEqual([0, 5, 6])
  })

  it('refuses invalid expressions with a message naming the problem', () => {
    expect(failure('* * * *').message).toBe('invalid cron expression "* * * *": expected 5 fields, got 4')
    expect(failure('').message).toMatch(/expected 5 fields, got 0/)
    expect(failure('60 * * * *').message).toMatch(/minute 60 is out of range 0-59/)
    expect(failure('* 24 * * *').message).toMatch(/hour 24 is out of range 0-23/)
    expect(failure('* * 0 * *').message).toMatch(/day of month 0 is out of range 1-31/)
    expect(failure('* * * 13 *').message).toMatch(/month 13 is out of range 1-12/)
    expect(failure('* * * * 8').message).toMatch(/day of week 8 is out of range 0-7/)
    expect(failure('*/0 * * * *').message).toMatch(/step "0" must be a positive number/)
    expect(failure('5-1 * * * *').message).toMatch(/range 5-1 runs backwards/)
    expect(failure('a * * * *').message).toMatch(/minute "a" is not a number/)
    expect(failure('1,,2 * * * *').message).toMatch(/empty list item in minute/)
    expect(failure('0 0 30 2 *').message).toMatch(/never matches/)
    const error = failure('* * * *')
    expect(error.code).toBe('invalid_request')
    expect(error.hint).toMatch(/five fields/)
    expect(failure('* * * * *', 'Mars/Olympus').message).toBe('unknown time zone "Mars/Olympus"')
  })
})

describe('nextFire', () => {
  it('finds the next slot of step, range and list fields in UTC', () => {
    expect(slots('*/20 * * * *', '2026-03-01T10:05:30Z', 3)).toEqual([
      '2026-03-01T10:20:00.000Z',
      '2026-03-01T10:40:00.000Z',
      '2026-03-01T11:00:00.000Z',
    ])
    // Strictly after: a slot exactly at `after` is not the next one.
    expect(next('0 * * * *', '2026-03-01T10:00:00Z')).toBe('2026-03-01T11:00:00.000Z')
    expect(slots('30 9 * * MON-FRI', '2026-11-27T12:00:00Z', 2)).toEqual([
      '2026-11-30T09:30:00.000Z', // Friday the 27th is past 09:30: Monday
      '2026-12-01T09:30:00.000Z',
    ])
    expect(next('0 0 29 2 *', '2026-01-01T00:00:00Z')).toBe('2028-02-29T00:00:00.000Z')
    expect(next('0 12 1,15 * *', '2026-01-02T00:00:00Z')).toBe('2026-01-15T12:00:00.000Z')
  })

  it('matches either day field when both are restricted (Vixie cron)', () => {
    // The 13th, or any Friday: Friday 2026-02-06 comes before the 13th.
    expect(next('0 0 13 * FRI', '2026-02-01T00:00:00Z')).toBe('2026-02-06T00:00:00.000Z')
    expect(next('0 0 13 * FRI', '2026-02-10T00:00:00Z')).toBe('2026-02-13T00:00:00.000Z')
  })

  it('keeps wall-clock time across daylight saving time in a time zone', () => {
    // New York: EST (UTC-5) until 2026-03-08 02:00, EDT (UTC-4) after.
    expect(slots('0 9 * * *', '2026-03-06T15:00:00Z', 3, 'America/New_York')).toEqual([
      '2026-03-07T14:00:00.000Z',
      '2026-03-08T13:00:00.000Z',
      '2026-03-09T13:00:00.000Z',
    ])
  })

  it('fires a skipped wall time once, right after the jump (spring forward)', () => {
    // 02:30 does not exist on 2026-03-08 in New York: it fires at 03:30 EDT (07:30Z), once.
    expect(slots('30 2 * * *', '2026-03-07T12:00:00Z', 3, 'America/New_York')).toEqual([
      '2026-03-08T07:30:00.000Z',
      '2026-03-09T06:30:00.000Z',
      '2026-03-10T06:30:00.000Z',
    ])
    // 02:30 and 03:30 land on one instant that day: one slot, not two.
    expect(slots('30 2,3 * * *', '2026-03-08T05:00:00Z', 2, 'America/New_York')).toEqual([
      '2026-03-08T07:30:00.000Z',
      '2026-03-09T06:30:00.000Z',
    ])
  })

  it('fires a repeated wall time once, at its first occurrence (fall back)', () => {
    // 01:30 happens twice on 2026-11-01 in New York (EDT 05:30Z, then EST 06:30Z).
    expect(slots('30 1 * * *', '2026-10-31T12:00:00Z', 2, 'America/New_York')).toEqual([
      '2026-11-01T05:30:00.000Z',
      '2026-11-02T06:30:00.000Z',
    ])
    // Every 30 minutes through the repeated hour: no slot goes backwards or repeats.
    expect(slots('*/30 * * * *', '2026-11-01T04:50:00Z', 5, 'America/New_York')).toEqual([
      '2026-11-01T05:00:00.000Z', // 01:00 EDT
      '2026-11-01T05:30:00.000Z', // 01:30 EDT
      '2026-11-01T07:00:00.000Z', // 02:00 EST (01:00/01:30 EST were seen already)
      '2026-11-01T07:30:00.000Z',
      '2026-11-01T08:00:00.000Z',
    ])
  })

  it('works in a zone with a half-hour offset', () => {
    expect(next('0 9 * * *', '2026-06-01T00:00:00Z', 'Asia/Kolkata')).toBe('2026-06-01T03:30:00.000Z')
  })
})

describe('previousFire', () => {
  it('finds the last slot at or before a time', () => {
    const schedule = parseCron('0 */6 * * *')
    expect(previousFire(schedule, at('2026-03-01T13:59:00Z'))?.toISOString()).toBe('2026-03-01T12:00:00.000Z')
    expect(previousFire(schedule, at('2026-03-01T12:00:00Z'))?.toISOString()).toBe('2026-03-01T12:00:00.000Z')
    expect(previousFire(schedule, at('2026-03-01T00:30:00Z'))?.toISOString()).toBe('2026-03-01T00:00:00.000Z')
    const weekly = parseCron('0 9 * * MON', 'Europe/Paris')
    expect(previousFire(weekly, at('2026-11-26T00:00:00Z'))?.toISOString()).toBe('2026-11-23T08:00:00.000Z')
  })
})
