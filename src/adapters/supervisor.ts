// The one process supervisor for every adapter: spawns a CLI in its own process group, feeds stdin,
// splits stdout into lines, keeps a bounded tail of stderr, and cancels by signalling the whole group
// (SIGTERM, then SIGKILL after a grace period) until no process of it is left. Some CLIs re-spawn
// themselves (Gemini, OpenClaw) or leave helpers behind; only a group kill reaches them.
import { type ChildProcess, spawn as nodeSpawn } from 'node:child_process'
import diagnostics from 'node:diagnostics_channel'
import { chmod, mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { agentPriority, lowerAgentPriority, trackAgent } from './agent-priority.js'
import type { AgentLauncher } from './agent-launcher.js'
import type { LaunchPlan } from './types.js'

export const STDERR_TAIL_BYTES = 64 * 1024

/**
 * Each line of an agent's stdout as it is split off, before any parsing: the first stage of the event
 * pipeline's timing (runs/event-timing.ts). Published only while something in this process subscribes.
 */
export const agentLineRead = diagnostics.channel('hangar:agent-line-read')

export interface AgentLineMessage {
  line: string
}

export interface ProcessExit {
  code: number | null
  signal: NodeJS.Signals | null
  /** True when the exit followed our cancel(). */
  cancelled: boolean
}

export interface SupervisedProcess {
  pid: number
  /** The process group id (= pid: the child leads its own group). */
  pgid: number
  /** Resolves once the process has exited and its output has been read to the end. */
  exited: Promise<ProcessExit>
  /** The last STDERR_TAIL_BYTES of stderr. */
  stderrTail(): string
  /** SIGTERM to the group, SIGKILL after `graceMs`, resolves when the whole group is gone. */
  cancel(graceMs?: number): Promise<void>
}

export interface SpawnHandlers {
  onLine(line: string): void
  onStderr?(chunk: string): void
}

export type SpawnFunction = typeof nodeSpawn

/** True while the process exists (EPERM: it exists but belongs to someone else). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** True while any process of the group exists. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal)
  } catch {
    // Already gone.
  }
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() >= deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return true
}

/** Kills what is left of a process group (a restarted daemon reaping a run it owned). */
export async function reapProcessGroup(pgid: number, graceMs = 3000): Promise<void> {
  if (!groupAlive(pgid)) return
  signalGroup(pgid, 'SIGTERM')
  if (await waitUntil(() => !groupAlive(pgid), graceMs)) return
  signalGroup(pgid, 'SIGKILL')
  await waitUntil(() => !groupAlive(pgid), 5000)
}

export async function writeLaunchFiles(plan: LaunchPlan): Promise<void> {
  for (const file of plan.files) {
    await mkdir(path.dirname(file.path), { recursive: true })
    await writeFile(file.path, file.content, { mode: file.mode ?? 0o600 })
    if (file.mode !== undefined) await chmod(file.path, file.mode)
  }
}

/** A started process as the supervisor reads it, spawned here or by the agent launcher. */
interface StartedProcess {
  pid: number
  stdout: Readable
  stderr: Readable
  /** Resolves once the process has exited and its stdout and stderr are closed. */
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

async function spawnHere(spawn: SpawnFunction, plan: LaunchPlan, cwd: string): Promise<StartedProcess> {
  const child: ChildProcess = spawn(plan.command, plan.args, {
    cwd,
    // As a shell would: some CLIs (OpenCode) work in $PWD, and the inherited one is where Hangar ran.
    env: { ...plan.env, PWD: cwd },
    detached: true,
    stdio: [plan.stdin === null ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  })
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }))
  })
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve())
    child.once('error', reject)
  })
  lowerAgentPriority(child.pid!)
  if (plan.stdin !== null && child.stdin) {
    // A CLI that exits before reading all of stdin must not crash us with EPIPE.
    child.stdin.on('error', () => {})
    child.stdin.end(plan.stdin)
  }
  return { pid: child.pid!, stdout: child.stdout!, stderr: child.stderr!, closed }
}

async function spawnByLauncher(
  launcher: AgentLauncher,
  plan: LaunchPlan,
  cwd: string,
): Promise<StartedProcess> {
  const launched = await launcher.launch({
    command: plan.command,
    args: plan.args,
    cwd,
    env: { ...plan.env, PWD: cwd },
    stdin: plan.stdin,
    priority: agentPriority(),
  })
  return launched
}

export function createSupervisor(options: { spawn?: SpawnFunction; launcher?: AgentLauncher } = {}) {
  const spawn = options.spawn ?? nodeSpawn

  return {
    /** Stops the agent launcher, if any (the agents it started go on). */
    close(): void {
      options.launcher?.close()
    },

    /** Writes the plan's files, then spawns it. Throws only when the process cannot start at all. */
    async start(plan: LaunchPlan, cwd: string, handlers: SpawnHandlers): Promise<SupervisedProcess> {
      await writeLaunchFiles(plan)
      const child = options.launcher
        ? await spawnByLauncher(options.launcher, plan, cwd)
        : await spawnHere(spawn, plan, cwd)
      const pid = child.pid
      // In the agents' shared CPU weight while it runs (agent-priority.ts).
      const untrack = trackAgent(pid)
      let cancelled = false
      let stderr = ''

      const decoder = new StringDecoder('utf8')
      let pending = ''
      const emitLine = (line: string) => {
        if (agentLineRead.hasSubscribers) agentLineRead.publish({ line })
        handlers.onLine(line)
      }
      const emitLines = (text: string) => {
        pending += text
        let newline = pending.indexOf('\n')
        while (newline !== -1) {
          const line = pending.slice(0, newline).replace(/\r$/, '')
          pending = pending.slice(newline + 1)
          if (line.length > 0) emitLine(line)
          newline = pending.indexOf('\n')
        }
      }
      child.stdout.on('data', (chunk: Buffer) => emitLines(decoder.write(chunk)))
      child.stderr.on('data', (chunk: Buffer) => {
        const text = chunk.toString('utf8')
        stderr = (stderr + text).slice(-STDERR_TAIL_BYTES)
        handlers.onStderr?.(text)
      })

      const exited = child.closed.then(({ code, signal }): ProcessExit => {
        untrack()
        emitLines(decoder.end())
        if (pending.trim().length > 0) emitLine(pending.replace(/\r$/, ''))
        pending = ''
        return { code, signal, cancelled }
      })

      return {
        pid,
        pgid: pid,
        exited,
        stderrTail: () => stderr,
        async cancel(graceMs = 3000) {
          cancelled = true
          signalGroup(pid, 'SIGTERM')
          const gone = await waitUntil(() => !groupAlive(pid), graceMs)
          if (!gone) {
            signalGroup(pid, 'SIGKILL')
            await waitUntil(() => !groupAlive(pid), 5000)
          }
          await exited
        },
      }
    },
  }
}

export type Supervisor = ReturnType<typeof createSupervisor>
