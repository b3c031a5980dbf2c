// A run's sandbox on an SSH target (`sandbox: workspace`): the same confinement as a local run's
// (run-sandbox.ts), built on the host from what it says of itself (host-probe.ts):
// - the root read-only; the host user's home and the target's `dir` (other workspaces, the git cache,
//   other runs) hidden, /tmp and /dev/shm private; the CLI's install and node shown again read-only when
//   they live in the home; the shared git dir read-only;
// - writable: the workspace copy, the run's directory (but not its pgid file, which cancel trusts), the
//   sandbox home (kept per agent and workspace under the target's dir), the worktree's own git dir;
// - own PID, network, IPC and UTS namespaces; the model proxy is reached through an SSH reverse forward
//   to a Unix socket in a private directory on the host, bound read-only into the sandbox, where the
//   forwarder (run by the host's node) relays 127.0.0.1:<port> to it.
// A host without bubblewrap (or that refuses the namespaces, or has no node) runs the agent unsandboxed,
// and run-start says why and how to fix it.
import { createHash } from 'node:crypto'
import path from 'node:path'
import type { LaunchPlan, ResolvedExecutable } from '../adapters/types.js'
import { AppError } from '../core/errors.js'
import type { RunSandbox } from '../core/events.js'
import type { Logger } from '../core/logger.js'
import type { ProxyForward } from '../runs/remote-launch.js'
import { remoteShell, shellQuote, type SshConnection } from '../workspaces/ssh/ssh-connection.js'
import { type BwrapLayout, bwrapArgs } from './bwrap-args.js'
import { FORWARDER_FILE, FORWARDER_SCRIPT } from './forwarder-script.js'
import { HOST_CHECK, HOST_PROBE, type HostProbe, hostUnavailable, parseHostProbe } from './host-probe.js'
import type { RunSandboxHandle, SandboxSettings } from './run-sandbox.js'
import { SANDBOX_HOME_FILES } from './sandbox-home.js'
import { openSandboxNetwork, type SandboxNetwork } from './sandbox-network.js'
import { inside, installRootOf, sandboxRoutes } from './sandbox-routes.js'

/** Copied for every adapter (as for local runs): who commits. */
const COMMON_FILES = ['.gitconfig']

export interface RemoteSandboxHandle extends RunSandboxHandle {
  /** The reverse forwards the agent's ssh session must carry (instead of the TCP tunnel). */
  forward: ProxyForward
}

export type OpenedRemoteSandbox =
  { handle: RemoteSandboxHandle } | { unsandboxed: Extract<RunSandbox, { mode: 'off' }> }

export interface RemoteSandboxRun {
  runId: string
  agent: string
  adapterId: string
  executable: ResolvedExecutable
  /** Host paths: the target's dir, the workspace copy, the run's directory. */
  remoteRoot: string
  cwd: string
  runDir: string
  useLogin: boolean
  /** The model proxy's local origin; undefined = an unproxied run. */
  proxyOrigin: string | undefined
  log: Logger
}

/** The sandbox's mounts on the host, from what the probe said. Pure. */
export function hostLayout(
  probe: HostProbe,
  run: { remoteRoot: string; cwd: string; runDir: string; home: string },
  paths: SandboxSettings['paths'],
): BwrapLayout {
  const hidden = [...new Set([probe.home, run.remoteRoot])].filter(
    (directory) => directory !== '' && directory !== '/',
  )
  for (const directory of hidden)
    if (inside(directory, run.cwd))
      throw new AppError(
        'sandbox_unavailable',
        `the workspace ${run.cwd} on the host contains ${directory}, which a sandbox hides`,
        { hint: "set the target's dir to a directory of its own, not the home directory or its parents" },
      )
  const readOnly: string[] = []
  for (const real of probe.reals) {
    const root = installRootOf(real)
    if (hidden.some((directory) => inside(root, directory))) readOnly.push(root)
  }
  const writable = [run.cwd, run.runDir, run.home]
  if (probe.commonDir && !inside(probe.commonDir, run.cwd)) readOnly.push(probe.commonDir)
  if (probe.gitDir && !inside(probe.gitDir, run.cwd)) writable.push(probe.gitDir)
  const expand = (entry: string) =>
    entry.startsWith('~/') ? path.posix.join(probe.home, entry.slice(2)) : entry
  readOnly.push(...paths.readOnly.map(expand))
  writable.push(...paths.writable.map(expand))
  return {
    hidden,
    readOnly,
    writable,
    // The wrapper writes the pgid before bubblewrap starts; cancel kills that group, so the agent must not
    // be able to name another one.
    readOnlyLast: [probe.net!, path.posix.join(run.runDir, 'pgid')],
    cwd: run.cwd,
  }
}

/** The plan run through bubblewrap and the forwarder on the host; the forwarder travels with the launch files. */
export function wrapOnHost(
  plan: LaunchPlan,
  probe: HostProbe,
  layout: BwrapLayout,
  routes: readonly { port: number; socket: string }[],
  runDir: string,
): LaunchPlan {
  const forwarder = path.posix.join(runDir, FORWARDER_FILE)
  // The CLI as the launch wrapper would have resolved it (its path, else its name on the host's PATH).
  const inner = [probe.node!, forwarder, JSON.stringify(routes), '--', probe.command!, ...plan.args]
  return {
    ...plan,
    command: probe.bwrap!,
    args: bwrapArgs(layout, inner),
    files: [...plan.files, { path: forwarder, content: FORWARDER_SCRIPT, mode: 0o600 }],
  }
}

export async function openRemoteSandbox(
  connection: SshConnection,
  settings: SandboxSettings,
  run: RemoteSandboxRun,
): Promise<OpenedRemoteSandbox> {
  const host = `${connection.target.name} (${connection.target.ssh})`
  // Kept per agent and workspace, as locally: the CLI's own sessions (resume, the next turn) live there.
  // Under the workspace's key, so forgetting the workspace on the host (sync-scripts FORGET) removes them.
  const workspaceKey = path.posix
    .relative(path.posix.join(run.remoteRoot, 'workspaces'), run.cwd)
    .split('/')[0]
  const home = path.posix.join(
    run.remoteRoot,
    'sandbox-homes',
    ...(workspaceKey && !workspaceKey.startsWith('..') ? [workspaceKey] : []),
    createHash('sha256').update(`${run.agent}\0${run.cwd}`).digest('hex').slice(0, 24),
  )
  const wanted = run.executable.interpreter ?? run.executable.path
  const known = [run.executable.path, ...(run.executable.interpreter ? [run.executable.interpreter] : [])]
  const files = [...COMMON_FILES, ...(run.useLogin ? (SANDBOX_HOME_FILES[run.adapterId] ?? []) : [])]
  const answer = await connection.check(
    'checking for bubblewrap',
    remoteShell(HOST_PROBE, [
      run.runDir,
      run.cwd,
      wanted,
      path.posix.basename(wanted),
      home,
      String(known.length),
      ...known,
      ...files,
    ]),
  )
  const probe = parseHostProbe(answer.stdout.toString('utf8'))
  const reason =
    hostUnavailable(probe, host) ??
    (probe.net === undefined
      ? `${host}: cannot make a private directory in /tmp there, so runs there are not sandboxed; check that /tmp is writable on that host`
      : undefined)
  if (reason !== undefined) {
    run.log.info('run not sandboxed on its host', {
      runId: run.runId,
      target: connection.target.name,
      reason,
    })
    return { unsandboxed: { mode: 'off', reason } }
  }
  const net = probe.net!
  const proxySocket = path.posix.join(net, 'proxy.sock')
  const hostsSocket = settings.hosts.length > 0 ? path.posix.join(net, 'hosts.sock') : undefined
  // The CONNECT proxy of an allow-list runs here (the daemon's side), reached through its own forward.
  let network: SandboxNetwork | undefined
  const removeNet = () =>
    connection.run(`rm -rf ${shellQuote(net)} ${shellQuote(`${run.runDir}.net`)}`).then(() => undefined)
  try {
    if (probe.command === undefined)
      throw new AppError(
        'sandbox_unavailable',
        `${path.posix.basename(wanted)} is not installed on ${host} (no ${wanted}, not on PATH)`,
        { hint: 'install the CLI on that host' },
      )
    if (hostsSocket)
      network = await openSandboxNetwork({
        runId: run.runId,
        proxyOrigin: undefined,
        hosts: settings.hosts,
        log: run.log,
      })
    const layout = hostLayout(probe, { ...run, home }, settings.paths)
    const { routes, endpoint, environment } = sandboxRoutes(run.proxyOrigin, {
      proxy: proxySocket,
      hosts: hostsSocket,
    })
    const origin = run.proxyOrigin ? new URL(run.proxyOrigin) : undefined
    const sockets = [
      ...(origin ? [{ hostSocket: proxySocket, to: `${origin.hostname}:${origin.port || 80}` }] : []),
      ...(hostsSocket && network?.hostsSocket ? [{ hostSocket: hostsSocket, to: network.hostsSocket }] : []),
    ]
    return {
      handle: {
        home,
        copied: probe.copied,
        record: {
          mode: 'workspace',
          by: `${probe.version ?? 'bubblewrap'} on ${connection.target.name}`,
          ...(settings.hosts.length > 0 && { hosts: settings.hosts }),
        },
        forward: { sockets },
        endpoint,
        environment,
        wrap: (plan) => wrapOnHost(plan, probe, layout, routes, run.runDir),
        async close() {
          await network?.close()
          await removeNet().catch(() => {})
        },
      },
    }
  } catch (error) {
    await network?.close()
    await removeNet().catch(() => {})
    throw error
  }
}

/** What `hangar agents` says of a target: the bubblewrap that would confine its runs, or why none would. */
export async function checkHostSandbox(
  connection: SshConnection,
): Promise<{ by: string } | { reason: string }> {
  const answer = await connection.check('checking for bubblewrap', remoteShell(HOST_CHECK))
  const probe = parseHostProbe(answer.stdout.toString('utf8'))
  const reason = hostUnavailable(probe, `${connection.target.name} (${connection.target.ssh})`)
  return reason !== undefined ? { reason } : { by: probe.version ?? 'bubblewrap' }
}
