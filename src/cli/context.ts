// Turning command-line options and the environment into a runtime: data dir, database, project config.
import os from 'node:os'
import path from 'node:path'
import { logFormatFor } from '../log-format.js'
import type { LogLevel } from '../logger.js'
import { createRuntime, type Runtime } from '../main.js'
import { connectDaemon } from './daemon-client.js'
import type { CliIo } from './output.js'
import { findProject, loadConfigFile } from './project.js'

export interface GlobalOptions {
  dataDir?: string
  database?: string
}

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent']

export function resolveDataDir(options: GlobalOptions, io: CliIo): string {
  const value = options.dataDir ?? io.env.HANGAR_DATA_DIR ?? path.join(os.homedir(), '.hangar')
  return path.resolve(io.cwd, value.replace(/^~(?=$|\/)/, os.homedir()))
}

export function resolveDatabaseUrl(options: GlobalOptions, io: CliIo): string | undefined {
  const value = options.database ?? io.env.HANGAR_DATABASE_URL
  return value?.trim() ? value.trim() : undefined
}

function logLevel(io: CliIo, fallback: LogLevel): LogLevel {
  const value = io.env.HANGAR_LOG_LEVEL as LogLevel | undefined
  return value && LOG_LEVELS.includes(value) ? value : fallback
}

export async function openRuntime(
  io: CliIo,
  options: GlobalOptions & { nodeId?: string | undefined; agentLauncher?: boolean },
  defaults: { logLevel: LogLevel } = { logLevel: 'warn' },
): Promise<Runtime> {
  const project = findProject(io.cwd, io.env)
  const config = await loadConfigFile(project.configFile, io.env)
  return createRuntime({
    dataDir: resolveDataDir(options, io),
    databaseUrl: resolveDatabaseUrl(options, io),
    config,
    projectDir: project.dir,
    env: io.env,
    nodeId: options.nodeId,
    ...(options.agentLauncher && { agentLauncher: true }),
    logLevel: logLevel(io, defaults.logLevel),
    logDestination: io.stderr,
    logFormat: logFormatFor(io.env, (io.stderr as { isTTY?: boolean }).isTTY === true),
  })
}

/** Opens a runtime for one command and always closes it. */
export async function withRuntime<T>(
  io: CliIo,
  options: GlobalOptions,
  work: (runtime: Runtime) => Promise<T>,
): Promise<T> {
  const runtime = await openRuntime(io, options)
  try {
    return await work(runtime)
  } finally {
    await runtime.close()
  }
}

/** Asks the running daemon when there is one (it owns the live state), else opens the store directly. */
export async function viaDaemonOrStore<T>(
  io: CliIo,
  options: GlobalOptions,
  request: { method: string; route: string; body?: unknown },
  direct: (runtime: Runtime) => Promise<T>,
): Promise<T> {
  const daemon = await connectDaemon(resolveDataDir(options, io))
  if (daemon) return daemon.request<T>(request.method, request.route, request.body)
  return withRuntime(io, options, direct)
}
