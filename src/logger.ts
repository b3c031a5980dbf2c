// The logger implementation: pino, JSON lines on stderr (readable lines with format 'pretty'), every
// field and message passed through the redactor first. Prompts and tool payloads are the callers' to keep
// out (debug only).
import pino from 'pino'
import { type LogFormat, prettyDestination } from './log-format.js'
import type { LogFields, Logger } from './core/logger.js'
import type { Redactor } from './core/redact.js'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'

export function createLogger(options: {
  service: string
  redactor: Redactor
  level?: LogLevel
  destination?: NodeJS.WritableStream
  /** 'json' (default): one JSON object a line; 'pretty': `time LEVEL [component] message key=value`. */
  format?: LogFormat
}): Logger {
  const destination =
    options.format === 'pretty'
      ? prettyDestination(options.destination ?? process.stderr)
      : (options.destination ?? pino.destination({ dest: 2, sync: false }))
  const base = pino(
    {
      level: options.level ?? 'info',
      base: { service: options.service },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  )
  const { redactor } = options
  const wrap = (instance: pino.Logger): Logger => ({
    debug: (message, fields) => write(instance, 'debug', message, fields),
    info: (message, fields) => write(instance, 'info', message, fields),
    warn: (message, fields) => write(instance, 'warn', message, fields),
    error: (message, fields) => write(instance, 'error', message, fields),
    child: (bindings) => wrap(instance.child(redactor.value(bindings))),
  })
  const write = (
    instance: pino.Logger,
    level: Exclude<LogLevel, 'silent'>,
    message: string,
    fields?: LogFields,
  ) => {
    if (!instance.isLevelEnabled(level)) return
    if (fields) instance[level](redactor.value(fields), redactor.text(message))
    else instance[level](redactor.text(message))
  }
  return wrap(base)
}
