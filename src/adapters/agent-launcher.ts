// Spawns agent CLIs from a small long-lived child process instead of from the daemon. Forking blocks the
// forking process until the new one has exec'd — the fork of a ~120 MB daemon, then the child's wait for a
// CPU on a busy machine (20-70 ms a spawn measured under the 20-run bench): every other run's stdout lines
// waited that long. The launcher (a bare `node -e`, ~40 MB) takes that wait instead. It never reads the
// agent's output: it stops reading the stdout and stderr pipes before its event loop can turn, and passes
// them to the daemon over its IPC channel (SCM_RIGHTS), so lines go from the agent to the daemon directly,
// with no relay. The supervisor keeps the rest: own process group (detached), signals to the group, the
// exit code and signal (sent back by the launcher), stdin (written by the launcher, then closed).
import { type ChildProcess, spawn } from 'node:child_process'
import type { Socket } from 'node:net'

/** A process the launcher started: its pid, its stdout and stderr, and how it ended. */
export interface LaunchedProcess {
  pid: number
  stdout: Socket
  stderr: Socket
  /**
   * Once it has exited and its stdout and stderr are closed (as a child's 'close'): the exit code and
   * signal, both null when the launcher died before telling.
   */
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

export interface LaunchRequest {
  command: string
  args: string[]
  cwd: string
  env: Record<string, string>
  stdin: string | null
  /**
   * The agent's CPU priority (agent-priority.ts), set by the launcher right after the spawn: before it reports
   * the agent started, rather than once the daemon hears of it (a wait while twenty agents boot at full
   * priority, the daemon's loop among them).
   */
  priority?: { niceness: number; groupNiceness: number }
}

export interface AgentLauncher {
  launch(request: LaunchRequest): Promise<LaunchedProcess>
  /** Stops the launcher (the agents it started go on: they lead their own process groups). */
  close(): void
}

// The launcher itself (CommonJS for `node -e`). Reading is stopped synchronously after spawn(), before
// any I/O callback of the launcher can run, so no byte of the agent's output is read here.
const LAUNCHER_SOURCE = `
const { spawn } = require('node:child_process')
const { writeFileSync } = require('node:fs')
const { setPriority } = require('node:os')
process.title = 'hangar-agent-launcher'
// Best effort, as lowerAgentPriority. The agent leads a session of its own (detached), and so a scheduling
// group of its own: lowering that group never lowers the daemon's (a kernel without autogroups refuses it).
const lower = (pid, { niceness, groupNiceness }) => {
  try { setPriority(pid, niceness) } catch {}
  try { writeFileSync('/proc/' + pid + '/autogroup', String(groupNiceness)) } catch {}
}
process.on('disconnect', () => process.exit(0))
const describe = (error) => ({ message: error.message, code: error.code, errno: error.errno, syscall: error.syscall, path: error.path })
process.on('message', (message) => {
  if (message.type !== 'launch') return
  const { id, command, args, cwd, env, stdin, priority } = message
  let child
  try {
    child = spawn(command, args, { cwd, env, detached: true, stdio: [stdin === null ? 'ignore' : 'pipe', 'pipe', 'pipe'] })
  } catch (error) {
    return void process.send({ type: 'error', id, error: describe(error) })
  }
  if (child.pid === undefined) {
    return void child.once('error', (error) => process.send({ type: 'error', id, error: describe(error) }))
  }
  child.on('error', () => {})
  if (priority) lower(child.pid, priority)
  for (const stream of [child.stdout, child.stderr]) {
    stream._handle.readStop()
    stream._handle.reading = false
  }
  if (stdin !== null) {
    child.stdin.on('error', () => {})
    child.stdin.end(stdin)
  }
  child.once('exit', (code, signal) => process.send({ type: 'exit', id, code, signal }))
  process.send({ type: 'stdout', id, pid: child.pid }, child.stdout)
  process.send({ type: 'stderr', id }, child.stderr)
})
`

interface Pending {
  resolve(launched: LaunchedProcess): void
  reject(error: Error): void
  pid?: number
  stdout?: Socket
  /** Closes of stdout and stderr, watched from the moment each arrives (an empty one closes at once). */
  ended: Promise<void>[]
  exit: (value: { code: number | null; signal: NodeJS.Signals | null }) => void
  exitPromise: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

interface LauncherMessage {
  type: 'stdout' | 'stderr' | 'exit' | 'error'
  id: number
  pid?: number
  code?: number | null
  signal?: NodeJS.Signals | null
  error?: { message: string; code?: string; errno?: number; syscall?: string; path?: string }
}

function toError(described: NonNullable<LauncherMessage['error']>): Error {
  return Object.assign(new Error(described.message), {
    ...(described.code !== undefined && { code: described.code }),
    ...(described.errno !== undefined && { errno: described.errno }),
    ...(described.syscall !== undefined && { syscall: described.syscall }),
    ...(described.path !== undefined && { path: described.path }),
  })
}

const closeOf = (socket: Socket) => new Promise<void>((resolve) => socket.once('close', () => resolve()))

/** A launcher started on first use, and again after it died or was closed. */
export function createAgentLauncher(options: { execPath?: string } = {}): AgentLauncher {
  /** The launcher process, and its launches not yet started or whose exit is not yet known. */
  let current: { process: ChildProcess; pending: Map<number, Pending>; settleRef(): void } | undefined
  let nextId = 1

  const start = () => {
    const launcher = spawn(options.execPath ?? process.execPath, ['-e', LAUNCHER_SOURCE], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      env: { PATH: process.env.PATH ?? '' },
    })
    const pending = new Map<number, Pending>()
    // Keeps the daemon's loop alive only while an answer is due (an idle launcher holds nothing open).
    const settleRef = () => {
      if (pending.size > 0) launcher.channel?.ref()
      else launcher.channel?.unref()
    }
    const instance = { process: launcher, pending, settleRef }
    launcher.on('message', (message: LauncherMessage, handle: unknown) => {
      const entry = pending.get(message.id)
      if (!entry) return
      if (message.type === 'error') {
        pending.delete(message.id)
        entry.reject(toError(message.error!))
      } else if (message.type === 'stdout') {
        entry.pid = message.pid!
        entry.stdout = handle as Socket
        entry.ended.push(closeOf(entry.stdout))
      } else if (message.type === 'stderr') {
        const stderr = handle as Socket
        entry.ended.push(closeOf(stderr))
        const closed = Promise.all([entry.exitPromise, ...entry.ended]).then(([exit]) => exit)
        entry.resolve({ pid: entry.pid!, stdout: entry.stdout!, stderr, closed })
      } else if (message.type === 'exit') {
        pending.delete(message.id)
        entry.exit({ code: message.code ?? null, signal: message.signal ?? null })
      }
      settleRef()
    })
    launcher.on('error', () => {})
    launcher.once('exit', () => {
      if (current === instance) current = undefined
      // What it had not answered: not started, or started and its exit never to be known.
      for (const entry of pending.values()) {
        if (entry.pid === undefined)
          entry.reject(Object.assign(new Error('the agent launcher stopped'), { code: 'ELAUNCHER' }))
        else entry.exit({ code: null, signal: null })
      }
      pending.clear()
    })
    launcher.unref()
    return instance
  }

  return {
    launch(request) {
      current ??= start()
      const { process: launcher, pending, settleRef } = current
      const id = nextId++
      return new Promise<LaunchedProcess>((resolve, reject) => {
        let exit!: Pending['exit']
        const exitPromise = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
          (resolveExit) => (exit = resolveExit),
        )
        pending.set(id, { resolve, reject, exit, exitPromise, ended: [] })
        settleRef()
        launcher.send({ type: 'launch', id, ...request })
      })
    },
    close() {
      const launcher = current?.process
      current = undefined
      if (launcher?.connected) launcher.disconnect()
    },
  }
}
