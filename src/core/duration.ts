// Durations as people type them on a command line or in hangar.yaml: `90s`, `90m`, `12h`, `30d`, `2w`;
// where a limit may be switched off (run limits), also `off`.
import { AppError } from './errors.js'

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const
const DURATION = /^\s*(\d+)\s*([smhdw])\s*$/

/** What a duration that may be off is expected to look like, for error messages. */
export const LIMIT_DURATION_EXPECTED = 'expected a duration such as "90s", "30m" or "2h", or "off"'

/** Milliseconds of `text`, or undefined when it is not a whole number above 0 with a unit. */
function durationMs(text: string): number | undefined {
  const match = DURATION.exec(text)
  if (!match || Number(match[1]) <= 0) return undefined
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]
}

export function parseDuration(text: string, what = 'duration'): number {
  const ms = durationMs(text)
  if (ms === undefined) {
    throw new AppError('usage', `${what} "${text}" is not a duration`, {
      hint: 'use a whole number with a unit: 90s, 90m, 12h, 30d or 2w',
    })
  }
  return ms
}

/** A limit's duration in milliseconds, `null` for `off`, undefined when `text` is neither. */
export function limitDurationMs(text: string): number | null | undefined {
  if (text.trim().toLowerCase() === 'off') return null
  return durationMs(text)
}

/** As limitDurationMs, throwing a usage error (what was given, what is expected) for anything else. */
export function parseLimitDuration(text: string, what = 'limit'): number | null {
  const ms = limitDurationMs(text)
  if (ms === undefined)
    throw new AppError('usage', `${what} "${text}" is not a duration`, { hint: LIMIT_DURATION_EXPECTED })
  return ms
}
