// hangar down / hangar status — the daemon of this data dir, found by its daemon.json: stopped the way
// Ctrl-C stops it (runs interrupted and their process groups reaped, logs flushed, daemon.json removed), and
// asked how it is.
import type { Command } from 'commander'
import { AppError } from '../../core/errors.js'
import { daemonLogPath } from '../../rotating-log-file.js'
import { type GlobalOptions, resolveDataDir } from '../context.js'
import { type DaemonFile, readDaemonFile } from '../daemon-file.js'
import { looksLikeHangar, waitForExit } from '../daemon-process.js'
import { type CliIo, ExitWith, printJson, usageError } from '../output.js'

/** `hangar status` when no daemon runs: 3, "program is not running", as `systemctl status` and LSB say. */
export const EXIT_NOT_RUNNING = 3
const DEFAULT_STOP_TIMEOUT_SECONDS = 60

interface Health {
  version: string
  nodeId: string
  engine: string
  database: string
  vault: string
  uptimeSeconds: number
}

export function registerDaemonControlCommands(
  program: Command,
  io: CliIo,
  globals: () => GlobalOptions,
): void {
  program
    .command('down')
    .description(
      'stop the daemon of this data dir cleanly: its runs are interrupted (resumable) and their agents stopped, logs flushed. Exits 0 when none is running (as "systemctl stop" does)',
    )
    .option(
      '--timeout <seconds>',
      'how long to wait for a clean stop before killing it (SIGKILL)',
      String(DEFAULT_STOP_TIMEOUT_SECONDS),
    )
    .option('--json', 'print { stopped, pid, killed } as JSON')
    .action(async (options: { timeout: string; json?: boolean }) => {
      const timeoutSeconds = Number(options.timeout)
      if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0)
        throw usageError(`--timeout ${options.timeout} is not a number of seconds`, 'e.g. --timeout 60')
      const dataDir = resolveDataDir(globals(), io)
      const daemon = await readDaemonFile(dataDir)
      if (!daemon) {
        if (options.json) return printJson(io, { stopped: false, running: false })
        io.stderr.write(`No daemon is running for ${dataDir}.\n`)
        return
      }
      if (!looksLikeHangar(daemon.pid)) {
        throw new AppError(
          'conflict',
          `process ${daemon.pid} of ${dataDir}/daemon.json is not a Hangar daemon`,
          {
            hint: 'the daemon.json is stale; "hangar up" replaces it',
          },
        )
      }
      const killed = await stopDaemon(io, daemon, timeoutSeconds, options.json === true)
      if (options.json) return printJson(io, { stopped: true, pid: daemon.pid, killed })
      if (killed) {
        io.stderr.write(
          `The daemon (pid ${daemon.pid}) did not stop within ${timeoutSeconds} s and was killed (SIGKILL): the runs it left are marked interrupted at the next "hangar up". See ${daemonLogPath(dataDir)}.\n`,
        )
        throw new ExitWith(1)
      }
      io.stdout.write(`✓ stopped the daemon at ${daemon.url} (pid ${daemon.pid})\n`)
    })

  program
    .command('status')
    .description(
      'whether the daemon of this data dir runs, where, which version, since when and how many runs are active. Exits 3 when it is not running (as "systemctl status" does)',
    )
    .option('--json', 'print the status as JSON')
    .action(async (options: { json?: boolean }) => {
      const dataDir = resolveDataDir(globals(), io)
      const daemon = await readDaemonFile(dataDir)
      if (!daemon) {
        if (options.json) printJson(io, { running: false, dataDir })
        else io.stdout.write(`● not running (data dir ${dataDir}); start it with "hangar up --detach"\n`)
        throw new ExitWith(EXIT_NOT_RUNNING)
      }
      const status = await daemonStatus(daemon, dataDir)
      if (options.json) return printJson(io, status)
      const rows: [string, string][] = [
        ['url', status.url],
        ['pid', String(status.pid)],
        ['version', status.version],
        ['uptime', formatUptime(status.uptimeSeconds)],
        ['data dir', status.dataDir],
        ['store', `${status.engine} (${status.database})`],
        ['runs', `${status.runs.running} running, ${status.runs.queued} queued (yours)`],
        ['log', status.logFile],
      ]
      io.stdout.write(`● running${status.responding ? '' : ' but not answering'}\n`)
      for (const [name, value] of rows) io.stdout.write(`  ${`${name}:`.padEnd(10)} ${value}\n`)
    })
}

/** SIGTERM (the daemon's clean stop), then SIGKILL past the timeout; true when it had to be killed. */
async function stopDaemon(io: CliIo, daemon: DaemonFile, timeoutSeconds: number, quiet: boolean) {
  if (!quiet) io.stderr.write(`Stopping the daemon at ${daemon.url} (pid ${daemon.pid})…\n`)
  signal(daemon.pid, 'SIGTERM')
  if (await waitForExit(daemon.pid, timeoutSeconds * 1000)) return false
  signal(daemon.pid, 'SIGKILL')
  if (!(await waitForExit(daemon.pid, 10_000)))
    throw new AppError('internal', `the daemon (pid ${daemon.pid}) is still there after SIGKILL`)
  return true
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EPERM')
      throw new AppError('forbidden', `not allowed to stop process ${pid}`, {
        hint: 'run "hangar down" as the user the daemon runs as',
      })
    // ESRCH: it is already gone.
  }
}

async function daemonStatus(daemon: DaemonFile, dataDir: string) {
  const headers = { authorization: `Bearer ${daemon.token}` }
  const get = async <T>(route: string): Promise<T | null> => {
    try {
      const response = await fetch(`${daemon.url}${route}`, { headers, signal: AbortSignal.timeout(10_000) })
      return response.ok || response.status === 503 ? ((await response.json()) as T) : null
    } catch {
      return null
    }
  }
  const [health, running, queued] = await Promise.all([
    get<Health>('/api/health'),
    get<unknown[]>('/api/runs?status=running&limit=500'),
    get<unknown[]>('/api/runs?status=queued&limit=500'),
  ])
  const startedAt = Date.parse(daemon.startedAt)
  return {
    running: true,
    responding: health !== null,
    url: daemon.url,
    pid: daemon.pid,
    version: health?.version ?? daemon.version,
    nodeId: daemon.nodeId,
    startedAt: daemon.startedAt,
    uptimeSeconds: health?.uptimeSeconds ?? Math.max(0, Math.round((Date.now() - startedAt) / 1000)),
    dataDir,
    engine: health?.engine ?? 'unknown',
    database: health?.database ?? 'unknown',
    runs: { running: running?.length ?? 0, queued: queued?.length ?? 0 },
    logFile: daemonLogPath(dataDir),
  }
}

function formatUptime(seconds: number): string {
  const days = Math.floor(seconds / 86_400)
  const hours = Math.floor((seconds % 86_400) / 3600)
  const minutes = Math.floor((seconds % 3600) / 60)
  if (days > 0) return `${days}d ${hours}h ${minutes}m`
  if (hours > 0) return `${hours}h ${minutes}m`
  if (minutes > 0) return `${minutes}m ${seconds % 60}s`
  return `${seconds}s`
}
