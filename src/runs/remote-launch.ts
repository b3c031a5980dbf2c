// Running an agent CLI on an SSH target. The adapter builds its launch plan with the host's paths; the
// plan's files and environment are uploaded (the environment as a 0600 file the wrapper reads and
// deletes, never on a command line), and the local process the supervisor watches is `ssh … wrapper`,
// whose stdout is the CLI's — so the same parser reads it. The wrapper starts the CLI in its own process
// group on the host and records it, so a cancel reaches every process of the run there.
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { writeLaunchFiles } from '../adapters/supervisor.js'
import type { LaunchPlan } from '../adapters/types.js'
import { AppError } from '../core/errors.js'
import { remoteShell, shellQuote, type SshConnection } from '../workspaces/ssh/ssh-connection.js'

/** Variables that describe the daemon's host, not the target: not forwarded unless the adapter set them. */
const HOST_SPECIFIC = new Set([
  'HOME',
  'PATH',
  'PWD',
  'OLDPWD',
  'SHELL',
  'USER',
  'LOGNAME',
  'HOSTNAME',
  'TMPDIR',
  'TMP',
  'TEMP',
  'SHLVL',
  '_',
  'MAIL',
  'DISPLAY',
  'TERM',
  'COLORTERM',
  'LS_COLORS',
  'INIT_CWD',
  'NODE',
])
const HOST_SPECIFIC_PREFIXES = ['SSH_', 'XDG_', 'npm_', 'TMUX', 'DBUS_', 'VSCODE_', 'TERM_', 'LC_', 'GPG_']

/** The variables to set on the host: what the adapter added or changed, and what is not host-specific. */
export function remoteEnvironment(
  planEnv: Readonly<Record<string, string>>,
  baseEnv: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const forwarded: Record<string, string> = {}
  for (const [name, value] of Object.entries(planEnv)) {
    const inherited = baseEnv[name] === value
    const hostSpecific =
      HOST_SPECIFIC.has(name) || HOST_SPECIFIC_PREFIXES.some((prefix) => name.startsWith(prefix))
    if (!inherited || !hostSpecific) forwarded[name] = value
  }
  return forwarded
}

const WRAPPER = String.raw`set -eu
RUN=$1 WS=$2 WANTED=$3 NAME=$4
shift 4
if [ -x "$WANTED" ]; then CMD=$WANTED; else
  CMD=$(command -v "$NAME") || { echo "hangar: $NAME is not installed on this host (no $WANTED, not on PATH)" >&2; exit 127; }
fi
if [ -f "$RUN/env" ]; then set -a; . "$RUN/env"; set +a; rm -f "$RUN/env"; fi
cd "$WS"
exec setsid -w sh -c 'echo $$ > "$0/pgid"; exec "$@"' "$RUN" "$CMD" "$@"
`

// dash's kill takes no "--": a negative pid names the group.
const SIGNAL_GROUP = String.raw`RUN=$1 GRACE=$2
[ -f "$RUN/pgid" ] || exit 0
P=$(cat "$RUN/pgid")
kill -TERM "-$P" 2>/dev/null || exit 0
i=0
while kill -0 "-$P" 2>/dev/null; do
  i=$((i + 1))
  if [ "$i" -gt "$((GRACE * 10))" ]; then kill -KILL "-$P" 2>/dev/null; exit 0; fi
  sleep 0.1
done
`

// A sandboxed run's socket directory on the host is named beside its run directory (sandbox/host-probe.ts).
const CLEANUP = String.raw`RUN=$1
if [ -f "$RUN/pgid" ]; then kill -KILL "-$(cat "$RUN/pgid")" 2>/dev/null || true; fi
if [ -f "$RUN.net" ]; then
  NET=$(cat "$RUN.net")
  case $NET in /tmp/hangar-net-*) rm -rf "$NET" ;; esac
  rm -f "$RUN.net"
fi
rm -rf "$RUN"
`

export interface RemoteLaunch {
  /** Host paths the adapter builds its plan with. */
  cwd: string
  runDir: string
  home: string
  /** `user@host:dir`, for run-start. */
  display: string
  /**
   * Uploads the plan's files and environment; returns the plan that runs it through ssh. With `forward`,
   * the agent's session carries a reverse tunnel to the proxy: every mention of `forward.from` (the
   * proxy's local origin) in the plan becomes the tunnel's end on the host.
   */
  prepare(
    plan: LaunchPlan,
    baseEnv: Readonly<Record<string, string | undefined>>,
    forward?: ProxyForward,
  ): Promise<LaunchPlan>
  /** Signals the CLI's process group on the host (TERM, then KILL after the grace). */
  cancel(graceMs: number): Promise<void>
  cleanup(): Promise<void>
}

/**
 * How the agent on the host reaches the proxy: `from`, the proxy's local origin (`http://127.0.0.1:7456`),
 * through a host port `prepare` picks; or (a sandboxed run) Unix sockets on the host, each forwarded to a
 * local `host:port` or socket, the plan left as it is.
 */
export type ProxyForward = { from: string } | { sockets: readonly { hostSocket: string; to: string }[] }

/**
 * Host ports for the tunnel: below Linux's ephemeral range (32768–60999), where `listen(0)` and outgoing
 * connections take theirs, so a busy host rarely has one in use; those it lists as bound are skipped too.
 */
const TUNNEL_PORTS = { low: 20_000, high: 32_767 }

/** The local ports of every socket in a `/proc/net/tcp{,6}` listing. */
export function boundPorts(listing: string): Set<number> {
  const ports = new Set<number>()
  for (const match of listing.matchAll(/^\s*\d+:\s+[0-9A-Fa-f]+:([0-9A-Fa-f]{4})\s/gm))
    ports.add(parseInt(match[1]!, 16))
  return ports
}

export function pickTunnelPort(taken: ReadonlySet<number>, random: () => number = Math.random): number {
  const span = TUNNEL_PORTS.high - TUNNEL_PORTS.low + 1
  let port = TUNNEL_PORTS.low + Math.floor(random() * span)
  for (let tries = 0; taken.has(port) && tries < span; tries++)
    port = port === TUNNEL_PORTS.high ? TUNNEL_PORTS.low : port + 1
  return port
}

async function hostTunnelPort(connection: SshConnection): Promise<number> {
  // Hosts without /proc (macOS, BSD) list nothing; ExitOnForwardFailure still catches a taken port.
  const listing = await connection.run('cat /proc/net/tcp /proc/net/tcp6 2>/dev/null; true')
  return pickTunnelPort(boundPorts(listing.stdout.toString('utf8')))
}

function forwarded(plan: LaunchPlan, forward: { from: string }, remotePort: number): LaunchPlan {
  const to = `http://127.0.0.1:${remotePort}`
  const swap = (text: string) => text.split(forward.from).join(to)
  return {
    ...plan,
    args: plan.args.map(swap),
    env: Object.fromEntries(Object.entries(plan.env).map(([name, value]) => [name, swap(value)])),
    stdin: plan.stdin,
    files: plan.files.map((file) => ({ ...file, content: swap(file.content) })),
  }
}

function envFile(variables: Record<string, string>): string {
  return Object.entries(variables)
    .filter(([name]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
    .map(([name, value]) => `export ${name}=${shellQuote(value)}\n`)
    .join('')
}

export function createRemoteLaunch(
  connection: SshConnection,
  workspace: { remoteRoot: string; remoteDir: string; remoteHome: string },
  runId: string,
  options: { isolateHome: boolean },
): RemoteLaunch {
  const runDir = path.posix.join(workspace.remoteRoot, 'runs', runId)
  const home = options.isolateHome ? path.posix.join(runDir, 'home') : workspace.remoteHome

  return {
    cwd: workspace.remoteDir,
    runDir,
    home,
    display: `${connection.target.ssh}:${workspace.remoteDir}`,

    async prepare(original, baseEnv, forward) {
      const tunnel = forward && 'from' in forward ? forward : undefined
      const remotePort = tunnel ? await hostTunnelPort(connection) : 0
      const plan = tunnel ? forwarded(original, tunnel, remotePort) : original
      const staging = await mkdtemp(path.join(os.tmpdir(), 'hangar-launch-'))
      try {
        // The plan's files, at their places under the host's run dir, staged here by the supervisor's writer.
        const staged = plan.files.map((file) => {
          const relative = path.posix.relative(runDir, file.path)
          if (relative.startsWith('..') || path.posix.isAbsolute(relative))
            throw new AppError('internal', `launch file ${file.path} is outside the run directory`)
          return { ...file, path: path.join(staging, relative) }
        })
        await writeLaunchFiles({ ...plan, files: staged })
        await writeFile(path.join(staging, 'env'), envFile(remoteEnvironment(plan.env, baseEnv)), {
          mode: 0o600,
        })
        const tar = spawn('tar', ['-cf', '-', '-C', staging, '.'], { stdio: ['ignore', 'pipe', 'inherit'] })
        await connection.check(
          'uploading the launch files',
          remoteShell('set -eu; mkdir -p "$1"; chmod 700 "$1"; tar -xf - -C "$1"', [runDir]),
          { input: tar.stdout },
        )
      } finally {
        await rm(staging, { recursive: true, force: true })
      }
      const target = tunnel && new URL(tunnel.from)
      const specs = target
        ? [`127.0.0.1:${remotePort}:${target.hostname}:${target.port || 80}`]
        : forward && 'sockets' in forward
          ? forward.sockets.map((socket) => `${socket.hostSocket}:${socket.to}`)
          : []
      const { command, args } = connection.argv(
        {
          multiplex: false,
          // The tunnel lives exactly as long as the agent's session; a port taken on the host fails the
          // launch instead of leaving the agent without its model.
          extraOptions:
            specs.length > 0
              ? ['-o', 'ExitOnForwardFailure=yes', ...specs.flatMap((spec) => ['-R', spec])]
              : [],
        },
        remoteShell(WRAPPER, [
          runDir,
          workspace.remoteDir,
          plan.command,
          path.basename(plan.command),
          ...plan.args,
        ]),
      )
      // The local ssh needs nothing of the agent's environment: that travelled in the env file.
      const localEnv: Record<string, string> = {}
      for (const name of ['PATH', 'HOME', 'USER', 'LOGNAME', 'SSH_AUTH_SOCK', 'LANG'])
        if (process.env[name] !== undefined) localEnv[name] = process.env[name]!
      return { command, args, env: localEnv, stdin: plan.stdin, files: [] }
    },

    async cancel(graceMs) {
      await connection.run(remoteShell(SIGNAL_GROUP, [runDir, String(Math.ceil(graceMs / 1000))]))
    },

    async cleanup() {
      await connection.run(remoteShell(CLEANUP, [runDir]))
    },
  }
}
