// Talking to an SSH target with the system `ssh`, so the user's ~/.ssh/config, agent and known hosts
// apply. One master connection per target is reused (ControlMaster) so the many short commands of a run
// (ship, launch, cancel, sync back) cost one handshake. `HANGAR_SSH_COMMAND` replaces `ssh` the way
// GIT_SSH_COMMAND does for git (e.g. `ssh -F ./ssh_config`).
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Readable } from 'node:stream'
import type { TargetConfig } from '../../core/config.js'
import { AppError } from '../../core/errors.js'

export interface SshTarget extends TargetConfig {
  /** The target's name in hangar.yaml, for messages. */
  name: string
}

export interface SshIo {
  input?: Buffer | string | Readable
  /** Consumes stdout as a stream (e.g. into tar); without it stdout is collected. */
  output?: (stdout: Readable) => Promise<void>
  signal?: AbortSignal
}

export interface SshResult {
  code: number
  stdout: Buffer
  stderr: string
}

/** Quotes one word for a POSIX shell. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`
}

/** `sh -c <script> sh <args…>` as one remote command line (ssh joins its words with spaces). */
export function remoteShell(script: string, args: readonly string[] = []): string {
  return ['sh', '-c', shellQuote(script), 'sh', ...args.map(shellQuote)].join(' ')
}

/**
 * Hands a child's stdout to `output` and settles the outcome at once: the consumer may fail before the
 * child exits (a truncated stream makes tar give up first), and a rejection left pending until 'close'
 * would be unhandled and take the daemon down. The child is then stopped, since nobody reads what it
 * still sends. Resolves to the consumer's error, or undefined.
 */
export function consumeOutput(
  child: ChildProcessWithoutNullStreams,
  output: ((stdout: Readable) => Promise<void>) | undefined,
): Promise<Error | undefined> {
  if (!output) return Promise.resolve(undefined)
  return output(child.stdout).then(
    () => undefined,
    (error: unknown) => {
      child.kill('SIGTERM')
      child.stdout.resume()
      return error instanceof Error ? error : new Error(String(error))
    },
  )
}

function expandHome(file: string): string {
  return file === '~' || file.startsWith('~/') ? path.join(os.homedir(), file.slice(1)) : file
}

/** Where master sockets live: short (unix socket paths are limited to ~100 bytes) and private. */
function controlDirectory(): string {
  const directory = path.join(os.tmpdir(), `hangar-ssh-${process.getuid?.() ?? 'user'}`)
  mkdirSync(directory, { recursive: true, mode: 0o700 })
  return directory
}

/**
 * The master socket for one ssh command line and destination. A master applies its own options (SetEnv,
 * -F config, forwards) to every session it carries, so a different `HANGAR_SSH_COMMAND` must not reuse
 * a master another one left behind (ControlPersist keeps it up to a minute, longer than a killed daemon).
 */
export function controlPath(command: readonly string[]): string {
  const key = createHash('sha256').update(JSON.stringify(command)).digest('hex').slice(0, 10)
  return path.join(controlDirectory(), `${key}-%C`)
}

export function createSshConnection(
  target: SshTarget,
  env: Readonly<Record<string, string | undefined>> = process.env,
) {
  const custom = env.HANGAR_SSH_COMMAND?.trim()
  const [command, ...leading] = custom ? custom.split(/\s+/) : ['ssh']
  // ssh keeps the first value it is given for an option, so these come before anything else.
  const multiplexed = [
    '-o',
    'ControlMaster=auto',
    '-o',
    `ControlPath=${controlPath([command!, ...leading])}`,
    '-o',
    'ControlPersist=60',
  ]
  // A multiplexed client hands its stdio to the master, so killing it would not close the agent's
  // output: the agent's own session gets a connection of its own.
  const standalone = ['-o', 'ControlMaster=no', '-o', 'ControlPath=none']
  const common = [
    '-o',
    'BatchMode=yes',
    '-o',
    'ServerAliveInterval=15',
    '-o',
    'ServerAliveCountMax=3',
    '-o',
    'ConnectTimeout=15',
    ...(target.port !== undefined ? ['-p', String(target.port)] : []),
    ...(target.identityFile !== undefined ? ['-i', expandHome(target.identityFile)] : []),
  ]
  const options = [...leading, ...multiplexed, ...common]
  const destination = target.ssh

  function describeFailure(what: string, result: SshResult): AppError {
    const stderr = result.stderr.trim().split('\n').filter(Boolean).slice(-3).join('; ')
    // ssh itself exits 255 when it cannot connect or the connection drops.
    const unreachable = result.code === 255
    return new AppError(
      'unavailable',
      `${what} on target ${target.name} (${destination}) failed${unreachable ? ': the connection failed or dropped' : ` with exit code ${result.code}`}${stderr ? `: ${stderr}` : ''}`,
      {
        retryable: unreachable,
        hint: unreachable
          ? `check that "ssh${target.port ? ` -p ${target.port}` : ''} ${destination} true" works without a password prompt`
          : undefined,
      },
    )
  }

  return {
    target,
    /** The argv that runs `remoteCommand` on the target (for the supervisor). */
    argv(
      how: { multiplex: boolean; extraOptions?: readonly string[] },
      remoteCommand: string,
    ): { command: string; args: string[] } {
      const chosen = how.multiplex ? options : [...leading, ...standalone, ...common]
      return {
        command: command!,
        args: [...chosen, ...(how.extraOptions ?? []), '--', destination, remoteCommand],
      }
    },

    /**
     * Runs a remote command with `input` on its stdin; stdout goes to `output` when given (a stream
     * consumer, e.g. tar), else it is collected.
     */
    run(remoteCommand: string, io: SshIo = {}): Promise<SshResult> {
      return new Promise((resolve, reject) => {
        const child = spawn(command!, [...options, '--', destination, remoteCommand], {
          stdio: ['pipe', 'pipe', 'pipe'],
          ...(io.signal && { signal: io.signal }),
        })
        const chunks: Buffer[] = []
        let stderr = ''
        const consumed = consumeOutput(child, io.output)
        if (!io.output) child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk))
        child.stderr.on('data', (chunk: Buffer) => {
          stderr = (stderr + chunk.toString('utf8')).slice(-16_384)
        })
        child.stdin.on('error', () => {})
        if (io.input === undefined) child.stdin.end()
        else if (typeof io.input === 'string' || Buffer.isBuffer(io.input)) child.stdin.end(io.input)
        else io.input.pipe(child.stdin)
        child.once('error', (error: NodeJS.ErrnoException) => {
          if (error.name === 'AbortError') return
          reject(
            new AppError(
              'unavailable',
              `cannot run ${command} for target ${target.name}: ${error.code ?? error.message}`,
              {
                retryable: false,
                hint: 'install the OpenSSH client (ssh) on the daemon host',
              },
            ),
          )
        })
        child.once('close', (code, signal) => {
          void consumed.then((failure) =>
            resolve(
              failure
                ? {
                    code: code === 0 ? 1 : (code ?? 255),
                    stdout: Buffer.concat(chunks),
                    stderr: `${stderr}\n${failure.message}`,
                  }
                : { code: code ?? (signal ? 255 : 1), stdout: Buffer.concat(chunks), stderr },
            ),
          )
        })
      })
    },

    /** The AppError saying that `what` failed where, for a result a caller inspected itself. */
    failure: describeFailure,

    /** Like run, but a non-zero exit is an AppError saying what failed where. */
    async check(what: string, remoteCommand: string, io: SshIo = {}): Promise<SshResult> {
      const result = await this.run(remoteCommand, io)
      if (result.code !== 0) throw describeFailure(what, result)
      return result
    },

    /** Closes the shared master connection (at daemon shutdown); harmless when there is none. */
    async close(): Promise<void> {
      await new Promise<void>((resolve) => {
        const child = spawn(command!, [...options, '-O', 'exit', destination], { stdio: 'ignore' })
        child.once('error', () => resolve())
        child.once('close', () => resolve())
      })
    },
  }
}

export type SshConnection = ReturnType<typeof createSshConnection>
