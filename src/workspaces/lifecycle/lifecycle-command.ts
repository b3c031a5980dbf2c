// Running a workspace's setup or teardown command: `sh -c COMMAND` in the workspace, here or on an SSH
// host, with its output handed over as it comes and the last lines kept for the failure message. The
// local command runs in its own process group, so a cancel (or a run limit) stops all of it.
import { spawn } from 'node:child_process'
import { remoteShell, type SshConnection } from '../ssh/ssh-connection.js'

/** Where the command runs: a local directory, or a directory on an SSH host. */
export type CommandPlace =
  { kind: 'local'; dir: string } | { kind: 'remote'; connection: SshConnection; dir: string }

export interface CommandOutcome {
  /** The command's exit code; 128+n for a signal, -1 when it could not start. */
  exitCode: number
  /** The last lines of its output (stdout and stderr, interleaved as they came). */
  tail: string
}

export interface CommandOptions {
  /** The environment of a local command (a remote one gets the host's, plus `variables`). */
  env: Readonly<Record<string, string | undefined>>
  /** Added to the environment on either side (HANGAR_PORT …). */
  variables: Readonly<Record<string, string>>
  onOutput?: (stream: 'stdout' | 'stderr', text: string) => void
  signal?: AbortSignal
  /** Stops the command after this long (its exit code is then 124, as timeout(1) says). */
  timeoutMs?: number
}

const TAIL_LINES = 20
const TAIL_BYTES = 4096

/** On the host: `DIR CMD NAME=VALUE…` — exports the variables, goes to DIR, runs CMD in a shell. */
const REMOTE_COMMAND = String.raw`set -e
DIR=$1 CMD=$2
shift 2
for pair in "$@"; do export "$pair"; done
cd "$DIR"
exec sh -c "$CMD"
`

function keepTail(tail: string, text: string): string {
  const joined = (tail + text).slice(-TAIL_BYTES * 2)
  return joined
    .split('\n')
    .slice(-(TAIL_LINES + 1))
    .join('\n')
}

export function runLifecycleCommand(
  place: CommandPlace,
  command: string,
  options: CommandOptions,
): Promise<CommandOutcome> {
  const pairs = Object.entries(options.variables).map(([name, value]) => `${name}=${value}`)
  const spawned =
    place.kind === 'local'
      ? spawn('sh', ['-c', command], {
          cwd: place.dir,
          env: { ...options.env, ...options.variables },
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: true,
        })
      : (() => {
          const { command: ssh, args } = place.connection.argv(
            { multiplex: true },
            remoteShell(REMOTE_COMMAND, [place.dir, command, ...pairs]),
          )
          return spawn(ssh, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true })
        })()
  return new Promise((resolve) => {
    let tail = ''
    let timedOut = false
    const stop = () => {
      try {
        if (spawned.pid) process.kill(-spawned.pid, 'SIGTERM')
      } catch {
        // Gone already.
      }
    }
    const timer =
      options.timeoutMs !== undefined
        ? setTimeout(() => {
            timedOut = true
            stop()
          }, options.timeoutMs)
        : undefined
    if (options.signal?.aborted) stop()
    options.signal?.addEventListener('abort', stop, { once: true })
    for (const stream of ['stdout', 'stderr'] as const) {
      spawned[stream].on('data', (chunk: Buffer) => {
        const text = chunk.toString('utf8')
        tail = keepTail(tail, text)
        options.onOutput?.(stream, text)
      })
    }
    const finish = (exitCode: number) => {
      if (timer) clearTimeout(timer)
      options.signal?.removeEventListener('abort', stop)
      resolve({ exitCode: timedOut ? 124 : exitCode, tail: tail.trimEnd() })
    }
    spawned.once('error', (error: NodeJS.ErrnoException) => {
      tail = keepTail(tail, `cannot start the command: ${error.code ?? error.message}\n`)
      finish(-1)
    })
    spawned.once('close', (code, signal) => {
      const signals: Record<string, number> = { SIGTERM: 15, SIGKILL: 9, SIGINT: 2, SIGHUP: 1 }
      finish(code ?? 128 + (signal ? (signals[signal] ?? 0) : 0))
    })
  })
}
