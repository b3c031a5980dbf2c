// The daemon as a process the CLI starts in the background (`hangar up --detach`) and stops (`hangar
// down`): a new session (setsid) whose output goes to <data-dir>/logs/hangar.log, which tells the CLI
// over an IPC channel once it serves, then lets go of it.
import { type ChildProcess, spawn } from 'node:child_process'
import { openSync, closeSync, mkdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { processAlive } from '../adapters/supervisor.js'
import { AppError } from '../core/errors.js'
import { daemonLogPath } from '../rotating-log-file.js'

/**
 * The installed `hangar` entry point, whatever started this process: dist/bin/hangar.js beside the bundle's
 * chunks (dist/src/bin/hangar.js for tsc's output, src/bin/hangar.js for the sources).
 */
export function hangarBinPath(): string {
  return fileURLToPath(new URL('../bin/hangar.js', import.meta.url))
}

/** What a detached daemon tells the CLI that started it, once it listens and daemon.json is written. */
export interface DaemonReady {
  type: 'hangar-ready'
  url: string
  pid: number
  version: string
  engine: string
  signInUrl: string
}

export function isDaemonReady(message: unknown): message is DaemonReady {
  return (message as Partial<DaemonReady> | null)?.type === 'hangar-ready'
}

/** A daemon start can take a while on a loaded machine (migrations, a slow PostgreSQL). */
const START_TIMEOUT_MS = 120_000

/**
 * Starts `hangar … up <upArgs> --log-to-file` in its own session and resolves once it is ready. A daemon
 * that exits first is an error quoting the end of its log.
 */
export async function startDetachedDaemon(options: {
  dataDir: string
  /** Global options for the child (--data-dir, --database …) and the `up` options after `up`. */
  globalArgs: string[]
  upArgs: string[]
  cwd: string
  env: NodeJS.ProcessEnv
}): Promise<DaemonReady & { logFile: string }> {
  const logFile = daemonLogPath(options.dataDir)
  mkdirSync(path.dirname(logFile), { recursive: true, mode: 0o700 })
  const output = openSync(logFile, 'a', 0o600)
  const offset = statSync(logFile).size
  let child: ChildProcess
  try {
    child = spawn(
      process.execPath,
      [...process.execArgv, hangarBinPath(), ...options.globalArgs, 'up', ...options.upArgs, '--log-to-file'],
      { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', output, output, 'ipc'] },
    )
  } finally {
    closeSync(output)
  }
  try {
    const ready = await new Promise<DaemonReady>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(
          new AppError('timeout', `the daemon (pid ${child.pid}) is still starting after 120 s`, {
            hint: `see ${logFile}, and "hangar status" for when it is up`,
          }),
        )
      }, START_TIMEOUT_MS)
      child.on('message', (message) => {
        if (!isDaemonReady(message)) return
        clearTimeout(timer)
        resolve(message)
      })
      child.on('error', (error) => {
        clearTimeout(timer)
        reject(new AppError('internal', `could not start the daemon: ${error.message}`))
      })
      child.on('exit', (code, signal) => {
        clearTimeout(timer)
        const how = signal ? `was killed by ${signal}` : `exited with code ${code}`
        const tail = logTail(logFile, offset)
        reject(
          new AppError('internal', `the daemon ${how} while starting${tail ? `: ${tail}` : ''}`, {
            hint: `see ${logFile}`,
          }),
        )
      })
    })
    return { ...ready, logFile }
  } finally {
    child.removeAllListeners()
    // A channel closing under the parent as it lets go is no error of the command's.
    child.on('error', () => {})
    if (child.connected) child.disconnect()
    child.unref()
  }
}

/** The error the daemon wrote while starting: the last `hangar: error:` line since `offset`, else the last line. */
function logTail(logFile: string, offset: number): string {
  let text: string
  try {
    text = readFileSync(logFile).subarray(offset).toString('utf8')
  } catch {
    return ''
  }
  const lines = text.split('\n').filter((line) => line.trim() !== '')
  const error = lines.findLast((line) => line.startsWith('hangar: error:'))
  return (error ?? lines.at(-1) ?? '').replace(/^hangar: error:\s*/, '')
}

/** Gone, or a zombie nobody reaped yet (a daemon whose parent exited is reparented; PID 1 may be slow). */
export function processGone(pid: number): boolean {
  if (!processAlive(pid)) return true
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')
  } catch {
    return false
  }
}

/** Whether pid still looks like a Hangar daemon (Linux /proc; elsewhere: assumed so). */
export function looksLikeHangar(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('hangar')
  } catch {
    return true
  }
}

/** Polls until the process is gone; false when it is still there at the deadline. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (!processGone(pid)) {
    if (Date.now() >= deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return true
}
