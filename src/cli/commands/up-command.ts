// hangar up — the daemon: API (and later web, MCP, proxy) on one port. Prints where it listens and a
// sign-in link; writes daemon.json for the CLI; stops cleanly on SIGINT/SIGTERM.
import { randomUUID } from 'node:crypto'
import { type Command, Option } from 'commander'
import { AppError, describeError } from '../../core/errors.js'
import { describeDetection, describeDetectionSource } from '../../adapters/detection.js'
import type { Runtime } from '../../main.js'
import { describeBuiltin } from '../../runs/builtin-readiness.js'
import { configProfileWarnings } from '../../runs/profile-problems.js'
import { type GlobalOptions, openRuntime, resolveDataDir } from '../context.js'
import {
  type DaemonFile,
  readDaemonFile,
  readStaleDaemonToken,
  removeDaemonFile,
  writeDaemonFile,
} from '../daemon-file.js'
import { type DaemonReady, startDetachedDaemon } from '../daemon-process.js'
import { type CliIo, usageError } from '../output.js'
import { createRotatingLogFile, daemonLogPath } from '../../rotating-log-file.js'
import { DEFAULT_PORT, loginUrl } from './login-command.js'

/**
 * The CLI's session in daemon.json: minted at every start (the one a crashed daemon left behind is
 * revoked then), renewed while the daemon runs, revoked on a clean stop. A file copied off the machine, or
 * left by a daemon that never came back, stops working within a day.
 */
export const CLI_SESSION_TTL_MS = 86_400_000
const CLI_SESSION_RENEW_MS = CLI_SESSION_TTL_MS / 2

export interface DaemonSignals {
  /** SIGINT / SIGTERM: stop cleanly. */
  onShutdown(handler: (signal: string) => void): void
  /** SIGHUP: detect the agent CLIs again. */
  onReload(handler: () => void): void
  /** Set in a daemon started by `hangar up --detach`: told once the daemon is ready. */
  notifyParent?: (message: DaemonReady) => void
}

interface UpOptions {
  host: string
  port: string
  nodeId?: string
  public?: boolean
  detach?: boolean
  /** Internal: the detached daemon itself, writing its output to <data-dir>/logs/hangar.log. */
  logToFile?: boolean
}

function parsePort(value: string): number {
  const port = Number(value)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw usageError(
      `--port ${value} is not a port number`,
      'use a number from 1 to 65535 (0 picks a free one)',
    )
  }
  return port
}

export function registerUpCommand(
  program: Command,
  io: CliIo,
  globals: () => GlobalOptions,
  signals: DaemonSignals,
): void {
  program
    .command('up')
    .description('start the daemon (API, web UI, MCP endpoint and LLM proxy)')
    .option(
      '--host <address>',
      'address to bind; anything but loopback is reachable from the network',
      '127.0.0.1',
    )
    .option('--port <port>', 'port to listen on', String(DEFAULT_PORT))
    .option('--public', 'allow a non-loopback --host (or set server.public: true in hangar.yaml)')
    .option('--node-id <name>', 'this daemon’s name when several share one PostgreSQL')
    .option(
      '--detach',
      'run in the background (its own session); output goes to <data-dir>/logs/hangar.log, rotated at 10 MiB, 5 kept. Stop it with "hangar down"',
    )
    .addOption(new Option('--log-to-file').hideHelp())
    .action(async (options: UpOptions) => {
      const port = parsePort(options.port)
      const dataDir = resolveDataDir(globals(), io)
      const running = await readDaemonFile(dataDir)
      if (running) {
        throw new AppError(
          'conflict',
          `a daemon is already running for ${dataDir} at ${running.url} (pid ${running.pid})`,
          {
            hint: 'stop it first ("hangar down"), or use another --data-dir',
          },
        )
      }
      if (options.detach) return detach(io, globals(), dataDir, options)
      // The detached daemon: everything it says, and its log, goes to the rotating log file.
      const daemonIo = options.logToFile ? fileIo(io, dataDir) : io
      const runtime = await openRuntime(
        daemonIo,
        // Agents are spawned by the agent launcher (adapters/agent-launcher.ts) unless
        // HANGAR_AGENT_LAUNCHER=0 asks for the daemon's own spawn.
        { ...globals(), nodeId: options.nodeId, agentLauncher: io.env.HANGAR_AGENT_LAUNCHER !== '0' },
        { logLevel: 'info' },
      )
      await serveUntilStopped(
        runtime,
        daemonIo,
        { host: options.host, port, public: options.public === true },
        {
          onShutdown: signals.onShutdown,
          onReload: signals.onReload,
          // Into a log file, never a sign-in link: it goes to `up --detach` (or nowhere, started by hand).
          ...(options.logToFile && { notifyParent: signals.notifyParent ?? (() => {}) }),
        },
      )
    })
}

async function serveUntilStopped(
  runtime: Runtime,
  io: CliIo,
  address: { host: string; port: number; public: boolean },
  signals: DaemonSignals,
): Promise<void> {
  let server: Awaited<ReturnType<Runtime['listen']>>
  let recovered: number
  let recoveredActions: number
  let orphanWorkspaces: number
  try {
    // Before listening: no client may see a run as still running that no process runs any more.
    recovered = await runtime.scheduler.recover()
    // Approved commands a crash left running: killed, their actions failed (never run twice).
    recoveredActions = await runtime.actions.recover()
    // Workspaces of conversations deleted while no daemon could remove them (e.g. a crash mid-delete).
    orphanWorkspaces = await runtime.workspaces.cleanupOrphans()
    server = await runtime.listen(address)
  } catch (error) {
    await runtime.close()
    throw error
  }
  const bootId = randomUUID()
  // A daemon that died without stopping (SIGKILL, power loss) could not revoke its CLI session.
  const stale = await readStaleDaemonToken(runtime.dataDir)
  if (stale) await revokeCliSession(runtime, stale)
  const daemonFile: Omit<DaemonFile, 'token'> = {
    url: server.url,
    pid: process.pid,
    bootId,
    nodeId: runtime.info.nodeId,
    version: runtime.info.version,
    startedAt: runtime.info.startedAt.toISOString(),
  }
  const cliTokens = [await runtime.auth.createSession(runtime.owner.id, 'cli', CLI_SESSION_TTL_MS)]
  // The owner's session in daemon.json: known exactly, not only by its shape, wherever a copy turns up.
  runtime.redactor.add(cliTokens[0])
  await writeDaemonFile(runtime.dataDir, { ...daemonFile, token: cliTokens[0]! })
  // The previous session stays valid until it expires, so a CLI command that read it just before is
  // not cut off; at most two live at once.
  const renewal = setInterval(() => {
    void (async () => {
      const fresh = await runtime.auth.createSession(runtime.owner.id, 'cli', CLI_SESSION_TTL_MS)
      runtime.redactor.add(fresh)
      await writeDaemonFile(runtime.dataDir, { ...daemonFile, token: fresh })
      cliTokens.unshift(fresh)
      const expired = cliTokens.splice(2)
      for (const token of expired) await revokeCliSession(runtime, token)
    })().catch((error: unknown) => runtime.log.error('renewing the CLI session failed', { error }))
  }, CLI_SESSION_RENEW_MS)
  renewal.unref()

  const say = (line: string) => io.stdout.write(`${line}\n`)
  say(`Hangar ${runtime.info.version} · ${runtime.store.engine} store at ${runtime.store.location}`)
  if (runtime.ownerCreated) say(`Created the owner account "${runtime.owner.name}".`)
  for (const line of server.exposure ?? []) io.stderr.write(`warning: ${line}\n`)
  if (!runtime.vaultState.vault)
    io.stderr.write(`warning: ${runtime.vaultState.reason}; provider keys cannot be stored.\n`)
  // hangar.yaml loaded, but some profile will not do what it says (e.g. feeds with proxy: false).
  for (const name of Object.keys(runtime.config.agents))
    for (const warning of configProfileWarnings(name, runtime.config))
      io.stderr.write(`warning: agents.${name}.${warning.path}: ${warning.message}\n`)
  // A first start in a git repository: that repository becomes the first project (said, never asked).
  const offered = await runtime.projects
    .offerFirst(runtime.owner.id, `user:${runtime.owner.id}`, runtime.projectDir)
    .catch((error: unknown) => {
      io.stderr.write(`warning: ${runtime.projectDir} was not added as a project: ${describeError(error)}\n`)
      return null
    })
  if (offered) {
    say(`Added project ${offered.name} (${offered.path}); \`hangar projects remove ${offered.name}\` to undo`)
  }
  say(`✓ listening on ${server.url}`)
  const signInUrl = loginUrl(server.url, await runtime.auth.createLoginLink(runtime.owner.id))
  if (signals.notifyParent) {
    // A sign-in link is a credential: it goes to whoever ran `up --detach`, never into the log file.
    say('Sign in: the link went to "hangar up --detach"; run "hangar login" for another')
  } else {
    say(`Sign in: ${signInUrl}`)
    say('(the link works once, within 15 minutes; run "hangar login" for another)')
  }
  if (recovered > 0) say(`Marked ${recovered} run(s) left unfinished by an earlier daemon as interrupted.`)
  if (recoveredActions > 0)
    say(`Marked ${recoveredActions} action(s) left applying by an earlier daemon as failed (interrupted).`)
  if (orphanWorkspaces > 0) say(`Removed ${orphanWorkspaces} workspace(s) of deleted conversations.`)
  // Ctrl-C from here on is a clean stop, even while the services start or the agents are detected
  // (probing seven CLIs takes seconds): daemon.json is removed and the CLI session revoked.
  const startup = (async () => {
    await runtime.heartbeat.start(server.url)
    runtime.scheduler.start()
    // Attempts whose run ended with no process left to run their check (a crash): checked now.
    await runtime.attempts.recover()
    await runtime.triggerScheduler.start()
    // Queued notifications (this daemon's and other processes') go out from here on.
    runtime.notifications.start(server.url)
    // SSH work a crash left on a host (runs interrupted above, or by another node): brought back now.
    runtime.finalizeRecovery.start()
  })()
  let stopping = false
  const stopped = new Promise<void>((resolve) => {
    signals.onShutdown((signal) => {
      if (stopping) return
      stopping = true
      say(`Stopping (${signal}): interrupting the runs this daemon executes…`)
      void (async () => {
        await startup.catch(() => {})
        await runtime.triggerScheduler.stop()
        await runtime.scheduler.stop()
        await runtime.finalizeRecovery.stop()
        await runtime.heartbeat.stop()
        await server.close()
        clearInterval(renewal)
        for (const token of cliTokens) await revokeCliSession(runtime, token)
        await removeDaemonFile(runtime.dataDir, bootId)
        await runtime.close()
        say('✓ stopped')
        resolve()
      })()
    })
  })
  // Ready for `up --detach` only now that SIGTERM is a clean stop: a `hangar down` right after it is one.
  signals.notifyParent?.({
    type: 'hangar-ready',
    url: server.url,
    pid: process.pid,
    version: runtime.info.version,
    engine: runtime.store.engine,
    signInUrl,
  })
  await startup
  const detection = await runtime.detectAgents().catch((error: unknown) => {
    if (!stopping) runtime.log.error('agent detection failed', { error })
    return undefined
  })
  if (!stopping && detection) {
    for (const adapter of detection.adapters) say(describeDetection(adapter))
    // The owner's view of the built-in agent: ready, or what provider it needs.
    const builtin = await runtime.builtinReadiness(runtime.owner.id).catch(() => undefined)
    if (builtin && !stopping) say(describeBuiltin(builtin))
    say(describeDetectionSource(detection))
  }
  signals.onReload(() => {
    void runtime.detectAgents({ refresh: true }).then(
      (fresh) => {
        say('Agents detected again (SIGHUP):')
        for (const adapter of fresh.adapters) say(describeDetection(adapter))
      },
      (error: unknown) => runtime.log.error('agent detection failed', { error }),
    )
  })
  await stopped
}

/** `hangar up --detach`: the same `up` in the background, and where it runs once it is ready. */
async function detach(io: CliIo, globals: GlobalOptions, dataDir: string, options: UpOptions): Promise<void> {
  const upArgs = ['--host', options.host, '--port', options.port]
  if (options.public) upArgs.push('--public')
  if (options.nodeId) upArgs.push('--node-id', options.nodeId)
  const ready = await startDetachedDaemon({
    dataDir,
    globalArgs: ['--data-dir', dataDir, ...(globals.database ? ['--database', globals.database] : [])],
    upArgs,
    cwd: io.cwd,
    env: io.env,
  })
  const say = (line: string) => io.stdout.write(`${line}\n`)
  say(`Hangar ${ready.version} · ${ready.engine} store · running in the background (pid ${ready.pid})`)
  say(`✓ listening on ${ready.url}`)
  say(`Sign in: ${ready.signInUrl}`)
  say('(the link works once, within 15 minutes; run "hangar login" for another)')
  say(`Log: ${ready.logFile}`)
  say('"hangar status" tells how it is; "hangar down" stops it.')
}

/** The detached daemon's output: stdout and stderr lines both into <data-dir>/logs/hangar.log. */
function fileIo(io: CliIo, dataDir: string): CliIo {
  const file = createRotatingLogFile({ file: daemonLogPath(dataDir) })
  return { ...io, stdout: file, stderr: file }
}

/** Signs a CLI session out; one already expired or revoked (or from another store) is left as it is. */
async function revokeCliSession(runtime: Runtime, token: string): Promise<void> {
  const principal = await runtime.auth.authenticate(token).catch(() => null)
  if (principal?.via === 'session' && principal.sessionKind === 'cli')
    await runtime.auth.endSession(principal).catch(() => {})
}
