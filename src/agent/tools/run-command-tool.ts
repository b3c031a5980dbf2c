// run_command: a shell command in the workspace, only ever after approval. It is classified
// destructive_update because a shell can do anything the daemon's user can. Nothing here restricts the
// network or the file system beyond the working directory: containment is the sandbox's job (a profile
// that allows no network must run the daemon where there is none). What this file does guarantee is
// that the command and everything it started die on timeout or abort, and that the daemon's own
// secrets (provider keys, database URL) are not in the command's environment. A profile with
// `sandbox: workspace` gives the context a `wrapCommand`: bubblewrap, no network, no home (src/sandbox/).
import { spawn } from 'node:child_process'
import { realpath } from 'node:fs/promises'
import { z } from 'zod'
import { describeError } from './file-state.js'
import type { ToolOutput, WriteTool } from './types.js'

export const RUN_COMMAND_DEFAULT_TIMEOUT_SECONDS = 120
export const RUN_COMMAND_MAX_TIMEOUT_SECONDS = 600
/** The output kept: its start (what ran) and, mostly, its end (where errors and summaries are). */
export const RUN_COMMAND_OUTPUT_HEAD_BYTES = 10 * 1024
export const RUN_COMMAND_OUTPUT_TAIL_BYTES = 20 * 1024
/** Between SIGTERM and SIGKILL, so well-behaved programs can clean up. */
const KILL_GRACE_MILLISECONDS = 2000

/** Variables passed through from the daemon: what shells and toolchains need, nothing secret. */
const INHERITED_VARIABLES = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TZ', 'TMPDIR']

/** The default environment of commands: the safe subset of the daemon's, and no prompts or pagers. */
export function commandEnvironment(source: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const environment: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(source)) {
    if (value !== undefined && (INHERITED_VARIABLES.includes(name) || name.startsWith('LC_')))
      environment[name] = value
  }
  // There is no terminal and no one to answer: fail instead of waiting on a prompt or a pager.
  return {
    ...environment,
    TERM: 'dumb',
    NO_COLOR: '1',
    PAGER: 'cat',
    GIT_PAGER: 'cat',
    GIT_TERMINAL_PROMPT: '0',
  }
}

const runCommandInput = z.object({
  command: z
    .string()
    .min(1)
    .describe('Shell command, run with /bin/sh -c in the workspace root. stdin is empty.'),
  timeout_seconds: z
    .number()
    .int()
    .min(1)
    .max(RUN_COMMAND_MAX_TIMEOUT_SECONDS)
    .optional()
    .describe(
      `Seconds before the command and its child processes are killed (default ${RUN_COMMAND_DEFAULT_TIMEOUT_SECONDS}).`,
    ),
})

export type RunCommandInput = z.infer<typeof runCommandInput>

export interface RunCommandToolOptions {
  /** The full environment of commands; defaults to commandEnvironment(). */
  environment?: NodeJS.ProcessEnv
}

function createOutputCollector() {
  const head: Buffer[] = []
  const tail: Buffer[] = []
  let headSize = 0
  let tailSize = 0
  let total = 0
  return {
    push(chunk: Buffer): void {
      total += chunk.length
      const intoHead = Math.min(RUN_COMMAND_OUTPUT_HEAD_BYTES - headSize, chunk.length)
      if (intoHead > 0) {
        head.push(chunk.subarray(0, intoHead))
        headSize += intoHead
        chunk = chunk.subarray(intoHead)
      }
      if (chunk.length === 0) return
      tail.push(chunk)
      tailSize += chunk.length
      while (tailSize - tail[0]!.length >= RUN_COMMAND_OUTPUT_TAIL_BYTES) tailSize -= tail.shift()!.length
      if (tailSize > RUN_COMMAND_OUTPUT_TAIL_BYTES) {
        tail[0] = tail[0]!.subarray(tailSize - RUN_COMMAND_OUTPUT_TAIL_BYTES)
        tailSize = RUN_COMMAND_OUTPUT_TAIL_BYTES
      }
    },
    text(): string {
      const omitted = total - headSize - tailSize
      const start = Buffer.concat(head).toString('utf8')
      const end = Buffer.concat(tail).toString('utf8')
      if (omitted === 0) return start + end
      return `${start}\n… [${omitted} bytes of output omitted; redirect to a file and grep it to see everything] …\n${end}`
    },
  }
}

interface CommandResult {
  output: string
  exitCode: number | null
  signal: NodeJS.Signals | null
  ending: 'exited' | 'timed-out' | 'aborted' | 'failed-to-start'
  startError?: string
}

/**
 * The shell first waits for one line on stdin (the go-ahead) and only then runs the command, with an
 * empty stdin: the process group exists — and can be recorded — before anything of the command runs.
 * If the go-ahead never comes (the daemon died, recording failed), stdin closes and nothing runs.
 */
const GATED_SHELL = 'IFS= read -r _ || exit 125; exec /bin/sh -c "$1" sh </dev/null'

/**
 * Runs the command in its own process group (detached), so a timeout or abort kills the whole tree,
 * and the group is also killed once the shell exits: background jobs never outlive the tool call.
 */
export function runShellCommand(options: {
  command: string
  cwd: string
  timeoutSeconds: number
  environment: NodeJS.ProcessEnv
  signal?: AbortSignal
  beforeStart?: (pgid: number) => Promise<void>
  /** The sandbox around the shell (its whole group dies with it: bubblewrap's --die-with-parent). */
  wrap?: (command: string, args: string[]) => { command: string; args: string[] }
}): Promise<CommandResult> {
  return new Promise((resolve) => {
    const collector = createOutputCollector()
    const shell = ['-c', GATED_SHELL, 'hangar-command', options.command]
    const launch = options.wrap?.('/bin/sh', shell) ?? { command: '/bin/sh', args: shell }
    const child = spawn(launch.command, launch.args, {
      cwd: options.cwd,
      env: options.environment,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    // EPIPE when the shell is already gone (killed before the go-ahead): its exit says what happened.
    child.stdin.on('error', () => {})
    let ending: CommandResult['ending'] = 'exited'
    let exit: { code: number | null; signal: NodeJS.Signals | null } = { code: null, signal: null }
    const timers: NodeJS.Timeout[] = []
    const killGroup = (signal: NodeJS.Signals): void => {
      if (child.pid === undefined) return
      try {
        process.kill(-child.pid, signal)
      } catch {
        // ESRCH: the group is already gone.
      }
    }
    const stop = (reason: 'timed-out' | 'aborted'): void => {
      if (ending !== 'exited') return
      ending = reason
      killGroup('SIGTERM')
      timers.push(setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MILLISECONDS))
    }
    const onAbort = (): void => stop('aborted')
    let settled = false
    const finish = (result: CommandResult): void => {
      if (settled) return
      settled = true
      for (const timer of timers) clearTimeout(timer)
      options.signal?.removeEventListener('abort', onAbort)
      resolve(result)
    }
    child.stdout.on('data', (chunk: Buffer) => collector.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => collector.push(chunk))
    child.on('error', (error) => {
      finish({
        output: '',
        exitCode: null,
        signal: null,
        ending: 'failed-to-start',
        startError: describeError(error),
      })
    })
    child.on('exit', (code, signal) => {
      exit = { code, signal }
      // Background jobs of a finished command die with it; after a timeout or abort the SIGKILL is
      // already scheduled, leaving the grace period to the rest of the group.
      if (ending === 'exited') killGroup('SIGKILL')
      // A process that left the group (setsid) may still hold the pipes; do not wait on it forever.
      timers.push(
        setTimeout(() => {
          child.stdout.destroy()
          child.stderr.destroy()
          finish({ output: collector.text(), exitCode: exit.code, signal: exit.signal, ending })
        }, KILL_GRACE_MILLISECONDS),
      )
    })
    child.on('close', () =>
      finish({ output: collector.text(), exitCode: exit.code, signal: exit.signal, ending }),
    )
    timers.push(setTimeout(() => stop('timed-out'), options.timeoutSeconds * 1000))
    options.signal?.addEventListener('abort', onAbort, { once: true })
    const pid = child.pid
    if (pid === undefined) return // 'error' follows: it could not be spawned.
    void Promise.resolve(options.beforeStart?.(pid)).then(
      () => child.stdin.end('go\n'),
      (error: unknown) => {
        // Not recorded, not started: the shell dies at its gate, and says why.
        killGroup('SIGKILL')
        finish({
          output: '',
          exitCode: null,
          signal: null,
          ending: 'failed-to-start',
          startError: `its process could not be recorded (${describeError(error)})`,
        })
      },
    )
  })
}

function formatResult(result: CommandResult, timeoutSeconds: number): ToolOutput {
  if (result.ending === 'failed-to-start') {
    return {
      content: `The command could not be started: ${result.startError ?? 'unknown error'}`,
      isError: true,
    }
  }
  const output = result.output === '' ? '(no output)' : result.output.replace(/\n$/, '')
  const status =
    result.ending === 'timed-out'
      ? `[timed out after ${timeoutSeconds} s; the command and its child processes were killed]`
      : result.ending === 'aborted'
        ? '[aborted; the command and its child processes were killed]'
        : result.signal
          ? `[killed by ${result.signal}]`
          : `[exit code ${result.exitCode ?? 'unknown'}]`
  return { content: `${output}\n${status}`, isError: result.ending !== 'exited' || result.exitCode !== 0 }
}

function describeCommand(command: string, timeoutSeconds: number): string {
  return `Run command (timeout ${timeoutSeconds} s): ${command}`
}

export function createRunCommandTool(options: RunCommandToolOptions = {}): WriteTool<RunCommandInput> {
  return {
    kind: 'write',
    name: 'run_command',
    description:
      'Run a shell command (/bin/sh -c) in the workspace root, for builds, tests, git and other tools. ' +
      'stdout and stderr are returned together with the exit code, cut to about 30 KB (start and end kept). ' +
      'The command is proposed to the user and runs once approved; it is killed after timeout_seconds.',
    inputSchema: runCommandInput,
    async propose(input, context) {
      if (input.command.trim() === '') {
        return { content: 'The command is empty; give the shell command to run.', isError: true }
      }
      try {
        await realpath(context.workspace)
      } catch {
        return {
          content: `The workspace ${context.workspace} does not exist; no command can run.`,
          isError: true,
        }
      }
      const timeoutSeconds = input.timeout_seconds ?? RUN_COMMAND_DEFAULT_TIMEOUT_SECONDS
      // The whole command, newlines included: a person approving it must see every line that will run.
      return {
        summary: describeCommand(input.command, timeoutSeconds),
        classification: 'destructive_update',
        precondition: null,
      }
    },
    async apply(input, context) {
      if (context.signal?.aborted) return { content: '[aborted before the command started]', isError: true }
      const timeoutSeconds = input.timeout_seconds ?? RUN_COMMAND_DEFAULT_TIMEOUT_SECONDS
      let cwd: string
      try {
        cwd = await realpath(context.workspace)
      } catch {
        return {
          content: `The workspace ${context.workspace} does not exist; the command did not run.`,
          isError: true,
        }
      }
      const result = await runShellCommand({
        command: input.command,
        cwd,
        timeoutSeconds,
        environment: { ...(options.environment ?? commandEnvironment()), ...context.variables },
        ...(context.signal && { signal: context.signal }),
        ...(context.beforeCommandStarts && { beforeStart: context.beforeCommandStarts }),
        ...(context.wrapCommand && { wrap: context.wrapCommand }),
      })
      return formatResult(result, timeoutSeconds)
    },
  }
}

export const runCommandTool = createRunCommandTool()
