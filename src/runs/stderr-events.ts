// An agent's stderr in the run's event log: each line a `raw {stream: "stderr"}` event (ARCHITECTURE's
// event table), so a warning or a crash trace the CLI printed is seen where the run is seen. Bounded per
// run — a CLI that logs verbosely to stderr must not flood the store — with one note when lines were left
// out. These are not the stdout lines a parser failed to understand: they raise no format warning.
// Secrets in them are redacted by the event writer, like every event.
import type { AgentEvent } from '../core/events.js'

export interface StderrLimits {
  /** Lines recorded per run; later ones are counted and summed up in one note. */
  lines: number
  /** Bytes (UTF-16 code units, close enough) recorded per run. */
  bytes: number
  /** A longer line is cut to this many characters. */
  lineChars: number
}

export const DEFAULT_STDERR_LIMITS: StderrLimits = { lines: 200, bytes: 32 * 1024, lineChars: 2000 }

export interface StderrEvents {
  /** A chunk of stderr as it arrived (lines may be split across chunks). */
  chunk(text: string): void
  /** The process ended: its last partial line, then the note about what was left out, if anything. */
  finish(): void
}

export function createStderrEvents(
  emit: (event: AgentEvent) => void,
  limits: StderrLimits = DEFAULT_STDERR_LIMITS,
): StderrEvents {
  let pending = ''
  let lines = 0
  let bytes = 0
  let omitted = 0

  const record = (raw: string) => {
    const line = raw.replace(/\r$/, '')
    if (line.trim() === '') return
    const value = line.length > limits.lineChars ? `${line.slice(0, limits.lineChars)}…` : line
    if (omitted > 0 || lines >= limits.lines || bytes + value.length > limits.bytes) {
      omitted++
      return
    }
    lines++
    bytes += value.length
    emit({ type: 'raw', stream: 'stderr', value })
  }

  return {
    chunk(text) {
      pending += text
      let newline = pending.indexOf('\n')
      while (newline !== -1) {
        record(pending.slice(0, newline))
        pending = pending.slice(newline + 1)
        newline = pending.indexOf('\n')
      }
      // A line without end (a progress bar redrawn with \r) is cut here rather than held forever.
      if (pending.length > limits.lineChars) {
        record(pending)
        pending = ''
      }
    },
    finish() {
      if (pending !== '') record(pending)
      pending = ''
      if (omitted === 0) return
      emit({
        type: 'raw',
        stream: 'stderr',
        value: `[hangar] ${omitted} more stderr line(s) not recorded (at most ${limits.lines} lines or ${Math.round(limits.bytes / 1024)} KB per run)`,
      })
      omitted = 0
    },
  }
}
