// How the CLI talks to people: data on stdout (JSON with --json), notes and errors on stderr, errors on
// one line with what, where and how to fix, and exit codes from the contract.
import { AppError, describeError, isAppError } from '../core/errors.js'

export interface CliIo {
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
  /** Absent in tests that give no input; a TTY is never read for a prompt. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean }
  env: NodeJS.ProcessEnv
  cwd: string
}

export const EXIT = { ok: 0, failed: 1, usage: 2, awaitingConfirmation: 3, cancelled: 130 } as const

export function exitCodeOf(error: unknown): number {
  if (isAppError(error) && ['usage', 'config_invalid', 'database_url_invalid'].includes(error.code))
    return EXIT.usage
  return EXIT.failed
}

/** Every error line the CLI prints starts with this, whether Hangar or Commander found the mistake. */
export const ERROR_PREFIX = 'hangar: error:'

export function printError(io: CliIo, error: unknown): void {
  const line = describeError(error)
  io.stderr.write(`${ERROR_PREFIX} ${line}\n`)
  if (!isAppError(error) && io.env.HANGAR_DEBUG)
    io.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`)
}

/**
 * Commander's own usage errors ("error: unknown option '--x'" plus, at times, "(Did you mean --y?)" on a
 * second line) as one Hangar error line that says where the usage is.
 */
export function formatUsageError(text: string, commandPath: string): string {
  const [first = '', ...rest] = text.trim().split('\n')
  const parts = [first.replace(/^error:\s*/, '').replace(/\.$/, '')]
  for (const line of rest.map((each) => each.trim()).filter(Boolean))
    parts.push(line.replace(/^\(Did you mean (.*)\)$/, 'did you mean $1'))
  const said = parts.join('; ')
  return `${ERROR_PREFIX} ${said}${said.endsWith('?') ? ' See' : '; see'} ${commandPath} --help`
}

export function printJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`)
}

/** Dollars as the CLI shows them: four decimals (a short run costs fractions of a cent). */
export const cliDollars = (usd: number) => `$${usd.toFixed(4)}`

/** A plain aligned table; empty cells show as "-". */
export function formatTable(headers: string[], rows: (string | null | undefined)[][]): string {
  const cells = [
    headers,
    ...rows.map((row) =>
      row.map((cell) => (cell === null || cell === undefined || cell === '' ? '-' : cell)),
    ),
  ]
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)))
  return `${cells
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`
}

export function usageError(message: string, hint?: string): AppError {
  return new AppError('usage', message, hint ? { hint } : {})
}

/** Thrown by a command that already printed its outcome and only needs a non-zero exit code. */
export class ExitWith extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`)
  }
}
