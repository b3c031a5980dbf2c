// Readable log lines for a person at a terminal: `19:48:01 WARN  [scheduler] message key=value …`.
// pino writes JSON; on a TTY (or with HANGAR_LOG_FORMAT=pretty) each JSON line is re-said this way on
// its way out, after redaction, so both formats carry exactly the same (redacted) fields.

export type LogFormat = 'json' | 'pretty'

const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
}

/** Fields every line has, shown in the line's head (or not at all) rather than as key=value. */
const HEAD_FIELDS = new Set(['level', 'time', 'msg', 'service', 'component', 'pid', 'hostname'])

/** HANGAR_LOG_FORMAT when it names a format; else readable on a terminal, JSON lines anywhere else. */
export function logFormatFor(env: NodeJS.ProcessEnv, isTty: boolean): LogFormat {
  const chosen = env.HANGAR_LOG_FORMAT?.trim().toLowerCase()
  if (chosen === 'json' || chosen === 'pretty') return chosen
  return isTty ? 'pretty' : 'json'
}

function fieldValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value)
  return JSON.stringify(value) ?? String(value)
}

/** One pino JSON line as one readable line; a line that is not JSON is passed on as it is. */
export function formatLogLine(line: string): string {
  let entry: Record<string, unknown>
  try {
    entry = JSON.parse(line) as Record<string, unknown>
  } catch {
    return line
  }
  if (!entry || typeof entry !== 'object') return line
  const time = typeof entry.time === 'string' ? entry.time.slice(11, 19) : ''
  const level = (LEVEL_NAMES[Number(entry.level)] ?? String(entry.level)).padEnd(5)
  const component = typeof entry.component === 'string' ? ` [${entry.component}]` : ''
  const fields = Object.entries(entry)
    .filter(([key]) => !HEAD_FIELDS.has(key))
    .map(([key, value]) => `${key}=${fieldValue(value)}`)
  return [`${time} ${level}${component} ${String(entry.msg ?? '')}`.trim(), ...fields].join(' ')
}

/** A pino destination that writes each line readable to `out`. */
export function prettyDestination(out: NodeJS.WritableStream): { write(chunk: string): boolean } {
  return {
    write(chunk: string) {
      for (const line of chunk.split('\n')) if (line) out.write(`${formatLogLine(line)}\n`)
      return true
    },
  }
}
