// Durations as people type them on a command line or in hangar.yaml: `90m`, `12h`, `30d`, `2w`.
import { AppError } from './errors.js'

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const

export function parseDuration(text: string, what = 'duration'): number {
  const match = /^\s*(\d+)\s*([smhdw])\s*$/.exec(text)
  if (!match || Number(match[1]) <= 0) {
    throw new AppError('usage', `${what} "${text}" is not a duration`, {
      hint: 'use a whole number with a unit: 90m, 12h, 30d or 2w',
    })
  }
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]
}
