// hangar doctor — checks what Hangar needs, one line each, and says how to fix what is wrong.
import { constants as fsConstants } from 'node:fs'
import { access } from 'node:fs/promises'
import type { Command } from 'commander'
import { AppError, describeError } from '../../core/errors.js'
import { isOlderNode, MINIMUM_NODE_LABEL } from '../../core/node-version.js'
import type { Runtime } from '../../main.js'
import { type GlobalOptions, openRuntime, resolveDatabaseUrl, resolveDataDir } from '../context.js'
import { readDaemonFile } from '../daemon-file.js'
import { type CliIo, EXIT, ExitWith, printJson } from '../output.js'
import { findProject, loadConfigFile } from '../project.js'

export interface DoctorCheck {
  name: string
  status: 'ok' | 'warn' | 'fail'
  detail: string
}

export function nodeVersionCheck(version: string = process.versions.node): DoctorCheck {
  return !isOlderNode(version)
    ? { name: 'node', status: 'ok', detail: `Node.js ${version}` }
    : {
        name: 'node',
        status: 'fail',
        detail: `Node.js ${version} is too old: install ${MINIMUM_NODE_LABEL} or newer`,
      }
}

async function runChecks(io: CliIo, globals: GlobalOptions): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [nodeVersionCheck()]
  const dataDir = resolveDataDir(globals, io)

  const project = findProject(io.cwd, io.env)
  try {
    await loadConfigFile(project.configFile, io.env)
    checks.push({
      name: 'config',
      status: 'ok',
      detail: project.configFile
        ? `${project.configFile} is valid`
        : `no hangar.yaml (project ${project.dir}); defaults apply`,
    })
  } catch (error) {
    checks.push({ name: 'config', status: 'fail', detail: describeError(error) })
    return checks
  }

  let runtime: Runtime | undefined
  try {
    runtime = await openRuntime(io, globals)
    await access(dataDir, fsConstants.W_OK)
    checks.push({ name: 'data dir', status: 'ok', detail: `${dataDir} is writable` })
    const integrity = await runtime.store.integrityCheck()
    checks.push({
      name: 'database',
      status: integrity === 'ok' ? 'ok' : 'fail',
      detail:
        integrity === 'ok'
          ? `${runtime.store.engine} at ${runtime.store.location}, schema up to date`
          : `${runtime.store.location} failed its integrity check: ${integrity}`,
    })
    checks.push(await clusterCheck(runtime))
    checks.push(
      runtime.vaultState.vault
        ? {
            name: 'vault',
            status: 'ok',
            detail: `instance key "${runtime.vaultState.vault.activeKeyId}" is active`,
          }
        : {
            name: 'vault',
            status: 'warn',
            detail: `${runtime.vaultState.reason}; provider keys cannot be stored`,
          },
    )
  } catch (error) {
    const code = error instanceof AppError ? error.code : 'internal'
    const name =
      code === 'data_dir_unwritable' ? 'data dir' : code === 'config_invalid' ? 'config' : 'database'
    checks.push({ name, status: 'fail', detail: describeError(error) })
    if (name !== 'database' && resolveDatabaseUrl(globals, io) === undefined) return checks
  } finally {
    await runtime?.close()
  }

  const daemon = await readDaemonFile(dataDir)
  if (!daemon) {
    checks.push({ name: 'daemon', status: 'warn', detail: 'not running (start it with hangar up)' })
  } else {
    try {
      const response = await fetch(`${daemon.url}/api/health`, {
        headers: { authorization: `Bearer ${daemon.token}` },
        signal: AbortSignal.timeout(3000),
      })
      const body = (await response.json()) as { status?: string; version?: string }
      checks.push({
        name: 'daemon',
        status: response.ok ? 'ok' : 'fail',
        detail: `${daemon.url} (pid ${daemon.pid}, version ${body.version ?? '?'}): ${body.status ?? response.status}`,
      })
    } catch {
      checks.push({
        name: 'daemon',
        status: 'fail',
        detail: `pid ${daemon.pid} is alive but ${daemon.url} does not answer`,
      })
    }
  }
  return checks
}

/** The daemons sharing this store, from their heartbeat rows: a lost one is worth a warning. */
async function clusterCheck(runtime: Runtime): Promise<DoctorCheck> {
  const since = Date.now() - runtime.config.server.leaseMs
  const nodes = await runtime.store.nodes.list()
  if (nodes.length === 0)
    return { name: 'cluster', status: 'ok', detail: 'no daemon has used this store yet' }
  const state = (node: (typeof nodes)[number]) =>
    node.stoppedAt ? 'stopped' : Date.parse(node.heartbeatAt) >= since ? 'alive' : 'lost'
  const lost = nodes.filter((node) => state(node) === 'lost')
  return {
    name: 'cluster',
    status: lost.length > 0 ? 'warn' : 'ok',
    detail: nodes.map((node) => `${node.id} ${state(node)}${node.url ? ` (${node.url})` : ''}`).join(', '),
  }
}

export function registerDoctorCommand(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  program
    .command('doctor')
    .description('check Node.js, the data dir, the database, the vault, the config and the daemon')
    .option('--json', 'print the checks as JSON')
    .action(async (options: { json?: boolean }) => {
      const checks = await runChecks(io, globals())
      if (options.json) printJson(io, checks)
      else {
        const mark = { ok: '✓', warn: '!', fail: '✗' } as const
        for (const check of checks) io.stdout.write(`${mark[check.status]} ${check.name}: ${check.detail}\n`)
      }
      if (checks.some((check) => check.status === 'fail')) throw new ExitWith(EXIT.failed)
    })
}
