import { describe, expect, it } from 'vitest'
import { AppError } from './errors.js'
import { limitDurationMs, parseDuration, parseLimitDuration } from './duration.js'

describe('duration', () => {
  it('reads a whole number with a unit, seconds to weeks', () => {
    expect(parseDuration('90s')).toBe(90_000)
    expect(parseDuration('30m')).toBe(1_800_000)
    expect(parseDuration(' 2h ')).toBe(7_200_000)
    expect(parseDuration('30d')).toBe(30 * 86_400_000)
    expect(parseDuration('2w')).toBe(2 * 604_800_000)
  })

  it('refuses what is not a duration, saying what was given and what is expected', () => {
    for (const text of ['', '0m', '90', '1.5h', 'soon', '-1h', '5 minutes', 'off']) {
      expect(() => parseDuration(text, '--expires-in')).toThrow(AppError)
      expect(() => parseDuration(text, '--expires-in')).toThrow(`--expires-in "${text}" is not a duration`)
    }
  })

  // Issue 18 item 1: run limits may also be switched off.
  it('reads a limit as a duration, or off as null', () => {
    expect(limitDurationMs('2s')).toBe(2000)
    expect(limitDurationMs('off')).toBeNull()
    expect(limitDurationMs(' OFF ')).toBeNull()
    expect(limitDurationMs('never')).toBeUndefined()
    expect(limitDurationMs('0s')).toBeUndefined()
    expect(parseLimitDuration('15m', '--timeout')).toBe(900_000)
    expect(parseLimitDuration('off', '--timeout')).toBeNull()
    let thrown: unknown
    try {
      parseLimitDuration('soon', '--timeout')
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(AppError)
    expect(thrown).toMatchObject({
      code: 'usage',
      message: '--timeout "soon" is not a duration',
      hint: 'expected a duration such as "90s", "30m" or "2h", or "off"',
    })
  })
})
