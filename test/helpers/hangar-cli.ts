// Runs the built `hangar` binary as a user would (npm test builds it first).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { existsSync, readFileSync, readlinkSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { loadFactor } from './load-factor.js'

export const HANGAR_BIN = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../dist/bin/hangar.js',
)

function assertBuilt(): void {
  if (!existsSync(HANGAR_BIN))
    throw new Error(`${HANGAR_BIN} is missing: run "npm run build" (npm test does)`)
}

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

export interface CliOptions {
  env?: NodeJS.ProcessEnv
  cwd?: string
  input?: string
  /** SIGKILLed after this long; by default 20 s, times the machine's load factor. */
  timeoutMs?: number
  /** An installed `hangar` executable to run instead of `node dist/bin/hangar.js` (startDaemon only). */
  bin?: string
}

/**
 * An environment with nothing of the caller's Hangar settings in it, and nothing of the test runner's:
 * agents see what they would under a person's shell (OpenClaw, told VITEST/NODE_ENV=test, prints no result).
 */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of Object.keys(env))
    if (name.startsWith('HANGAR_') || name.startsWith('VITEST') || name === 'NODE_ENV') delete env[name]
  return { ...env, NO_COLOR: '1', ...extra }
}

export function runHangar(args: string[], options: CliOptions = {}): Promise<CliResult> {
  assertBuilt()
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [HANGAR_BIN, ...args], {
      env: options.env ?? cleanEnv(),
      cwd: options.cwd ?? process.cwd(),
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    // A command's own default, like the tests' (load-aware-timeouts), grows with the machine's load.
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000 * loadFactor())
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    child.stdin.end(options.input ?? '')
  })
}

export interface RunningDaemon {
  child: ChildProcess
  url: string
  /** The one-time sign-in link `hangar up` printed. */
  signInLink: string
  stdout: () => string
  stderr: () => string
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/** How long a daemon's stdout and stderr may stay open after it exited (its own buffers draining). */
const OUTPUT_CLOSE_MS = 10_000

/**
 * The daemon's exit code once its stdout and stderr are closed too. A process it started that still holds
 * them would keep that from ever happening: that fails here, naming the process, instead of hanging.
 */
export async function outputClosed(
  child: ChildProcess,
  closed: Promise<number | null>,
  graceMs = OUTPUT_CLOSE_MS,
): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), graceMs)
  })
  const outcome = await Promise.race([closed, late])
  clearTimeout(timer)
  if (outcome !== 'late') return outcome
  const holders = [child.stdout, child.stderr].flatMap((stream) => pipeHolders(stream))
  child.stdout?.destroy()
  child.stderr?.destroy()
  throw new Error(
    `daemon ${child.pid} exited, but its output stayed open for ${graceMs / 1000} s; held by: ${holders.join('; ') || 'no process found'}`,
  )
}

/**
 * The processes (pid and command line) that hold the other end of a child's output. Node's stdio pipes
 * are socket pairs, whose ends have inodes of their own: `ss` tells which socket is our end's peer.
 */
function pipeHolders(stream: Readable | null): string[] {
  const fd = (stream as unknown as { _handle?: { fd?: number } } | null)?._handle?.fd
  if (fd === undefined || fd < 0) return []
  try {
    const inode = /socket:\[(\d+)\]/.exec(readlinkSync(`/proc/self/fd/${fd}`))?.[1]
    if (!inode) return []
    const sockets = execFileSync('ss', ['-xpn'], { encoding: 'utf8' }).split('\n')
    // "u_str ESTAB 0 0 * <inode> * <peer inode> users:(("sleep",pid=1881,fd=1))"
    const pids = sockets
      .filter((line) => line.split(/\s+/)[7] === inode)
      .flatMap((line) => [...line.matchAll(/pid=(\d+)/g)].map((match) => match[1]!))
    return [...new Set(pids)].map((pid) => `${pid} ${commandLine(pid)}`)
  } catch {
    return []
  }
}

function commandLine(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim().slice(0, 200)
  } catch {
    return '(gone)'
  }
}

/** Starts `hangar up --port 0 …` and resolves once it prints its URL. */
export function startDaemon(args: string[], options: CliOptions = {}): Promise<RunningDaemon> {
  if (options.bin === undefined) assertBuilt()
  return new Promise((resolve, reject) => {
    const command = options.bin === undefined ? [process.execPath, HANGAR_BIN] : [options.bin]
    const child = spawn(command[0]!, [...command.slice(1), 'up', '--port', '0', ...args], {
      env: options.env ?? cleanEnv(),
      cwd: options.cwd ?? process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)))
    const died = new Promise<void>((done) => child.on('exit', () => done()))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`daemon did not start in time\nstdout: ${stdout}\nstderr: ${stderr}`))
    }, options.timeoutMs ?? 20_000)
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(stdout)
      const signIn = /Sign in: (\S+)/.exec(stdout)
      if (match && signIn) {
        clearTimeout(timer)
        resolve({
          child,
          url: match[1]!,
          signInLink: signIn[1]!,
          stdout: () => stdout,
          stderr: () => stderr,
          stop: async (signal = 'SIGTERM') => {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal)
            await died
            return outputClosed(child, exited)
          },
        })
      }
    })
    void exited.then((code) => {
      clearTimeout(timer)
      reject(
        new Error(`daemon exited with ${code} before it was ready\nstdout: ${stdout}\nstderr: ${stderr}`),
      )
    })
  })
}

/** The owner's CLI session of the daemon running on this data dir (`<data-dir>/daemon.json`). */
export async function readDaemonToken(dataDir: string): Promise<string> {
  return (JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string }).token
}

/** A personal access token made through the API with `bearer` (e.g. the daemon's CLI session). */
export async function createToken(
  url: string,
  bearer: string,
  name: string,
  scopes: ('api' | 'approve')[] = [],
): Promise<string> {
  const response = await fetch(`${url}/api/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, scopes }),
  })
  if (!response.ok) throw new Error(`POST /api/tokens answered ${response.status}: ${await response.text()}`)
  return ((await response.json()) as { token: string }).token
}

/** stdout and stderr are separate pipes: a line written to one may arrive after a later line on the other. */
export async function waitForOutput(read: () => string, text: string, timeoutMs = 5000): Promise<string> {
  const deadline = Date.now() + timeoutMs
  while (!read().includes(text)) {
    if (Date.now() > deadline) throw new Error(`"${text}" did not appear in:\n${read()}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return read()
}
