// A run's sandbox (`sandbox: workspace`): bubblewrap around the agent's process, a per-run home, and the
// model proxy as the only way out. The one place that decides what a sandboxed agent sees:
// - the root file system read-only; the daemon user's home, the data dir, /tmp and /dev/shm empty;
// - read-only again: the CLI's own install and node (when they live in a hidden directory), a git
//   worktree's shared git dir, the profile's `sandboxPaths.readOnly`;
// - writable: the workspace, the run's own directory (its home, settings files, TMPDIR), a worktree's own
//   git dir, the profile's `sandboxPaths.writable`;
// - its own PID namespace (no /proc/<daemon pid>), network namespace (loopback only: the forwarder relays
//   the proxy's port to the daemon), IPC and UTS namespaces, and it dies with its parent.
import { readFile, realpath, stat } from 'node:fs/promises'
import { writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { agentPriority } from '../adapters/agent-priority.js'
import type { LaunchPlan, ModelEndpoint, ResolvedExecutable } from '../adapters/types.js'
import type { HangarConfig, ProfileConfig } from '../core/config.js'
import { AppError } from '../core/errors.js'
import type { RunSandbox } from '../core/events.js'
import type { Logger } from '../core/logger.js'
import type { SandboxMode, SandboxPathsConfig } from '../core/sandbox-schema.js'
import { type Bubblewrap, checkBubblewrap, locateBubblewrap } from './bubblewrap.js'
import { type BwrapLayout, bwrapArgs } from './bwrap-args.js'
import { FORWARDER_FILE, FORWARDER_SCRIPT } from './forwarder-script.js'
import { prepareSandboxHome } from './sandbox-home.js'
import { openSandboxNetwork, type SandboxNetwork } from './sandbox-network.js'
import { inside, installRootOf, sandboxRoutes } from './sandbox-routes.js'

export interface SandboxSettings {
  mode: SandboxMode
  paths: SandboxPathsConfig
  hosts: string[]
}

/**
 * A profile's sandbox: its own `sandbox`, else its project's default, else `off`. For a member, a project's
 * `sandbox: workspace` is a floor, not a default: the operator set it for the project, and a member's own
 * profile (`sandbox: off`) or a bare adapter name cannot take it away.
 */
export function sandboxSettingsFor(
  profile: Pick<ProfileConfig, 'sandbox' | 'sandboxPaths' | 'sandboxHosts'> | null | undefined,
  config: Pick<HangarConfig, 'projects'>,
  projectName: string | undefined,
  role: 'owner' | 'member' = 'owner',
): SandboxSettings {
  const projectDefault = projectName !== undefined ? config.projects[projectName]?.sandbox : undefined
  const floor = role === 'member' && projectDefault === 'workspace'
  return {
    mode: floor ? 'workspace' : (profile?.sandbox ?? projectDefault ?? 'off'),
    paths: profile?.sandboxPaths ?? { readOnly: [], writable: [] },
    hosts: profile?.sandboxHosts ?? [],
  }
}

type Environment = Readonly<Record<string, string | undefined>>

function expandHome(value: string, home: string): string {
  return value.startsWith('~/') ? path.join(home, value.slice(2)) : value
}

async function isDirectory(file: string): Promise<boolean> {
  return (await stat(file).catch(() => null))?.isDirectory() ?? false
}

/** What of an executable must stay visible: its whole node_modules tree, else its directory. */
async function installRoot(file: string): Promise<string> {
  return installRootOf(await realpath(file).catch(() => file))
}

/** A git worktree's own git dir (writable: its index, HEAD) and the shared one (read-only: hooks live there). */
async function worktreeGitDirs(workspace: string): Promise<{ own?: string; shared?: string }> {
  const pointer = await readFile(path.join(workspace, '.git'), 'utf8').catch(() => undefined)
  const match = pointer ? /^gitdir:\s*(.+)$/m.exec(pointer) : null
  if (!match) return {}
  const own = path.resolve(workspace, match[1]!.trim())
  const common = await readFile(path.join(own, 'commondir'), 'utf8').catch(() => undefined)
  return { own, ...(common && { shared: path.resolve(own, common.trim()) }) }
}

export interface SandboxBase {
  dataDir: string
  env: Environment
  settings: SandboxSettings
  /** The directories hidden as the daemon user's home (default: $HOME and the passwd entry's home). */
  userHomes?: readonly string[]
}

/** The hidden, read-only and writable sets every sandbox shares; checks the profile's paths. */
async function baseLayout(
  base: SandboxBase,
  cwd: string,
  executables: readonly string[],
): Promise<Omit<BwrapLayout, 'readOnlyLast'>> {
  const userHome = base.env.HOME ?? os.homedir()
  const homes = base.userHomes ?? [userHome, os.userInfo().homedir]
  const hidden: string[] = []
  for (const directory of [...homes, base.dataDir]) {
    const resolved = path.resolve(directory)
    if (resolved !== '/' && (await isDirectory(resolved))) hidden.push(resolved)
  }
  const readOnly: string[] = []
  // /tmp and /dev/shm are private inside too: a CLI installed there is shown again like one in a home.
  const masked = [...hidden, '/tmp', '/dev/shm']
  for (const file of executables) {
    const root = await installRoot(file)
    if (masked.some((directory) => inside(root, directory))) readOnly.push(root)
  }
  // A workspace around a hidden directory would bind it back, ~/.ssh and all: refused, not half-confined.
  for (const directory of hidden)
    if (inside(directory, path.resolve(cwd)))
      throw new AppError(
        'sandbox_unavailable',
        `the workspace ${cwd} contains ${directory}, which a sandbox hides`,
        {
          hint: 'run the agent in a project directory, not the home directory or its parents',
        },
      )
  const writable: string[] = [cwd]
  const git = await worktreeGitDirs(cwd)
  if (git.shared && !inside(git.shared, cwd)) readOnly.push(git.shared)
  if (git.own && !inside(git.own, cwd)) writable.push(git.own)
  for (const [list, target] of [
    [base.settings.paths.readOnly, readOnly],
    [base.settings.paths.writable, writable],
  ] as const) {
    for (const entry of list) {
      const resolved = path.resolve(expandHome(entry, userHome))
      if (inside(resolved, base.dataDir) || inside(base.dataDir, resolved))
        throw new AppError('config_invalid', `sandbox path ${entry} overlaps the data dir ${base.dataDir}`, {
          hint: 'the data dir holds every key and token: name another directory in sandboxPaths',
        })
      target.push(resolved)
    }
  }
  return { hidden, readOnly, writable, cwd }
}

async function bubblewrapFor(env: Environment): Promise<Bubblewrap> {
  return checkBubblewrap(await locateBubblewrap(env))
}

export interface RunSandboxHandle {
  /** The HOME the agent gets (inside the run's directory). */
  home: string
  /** Files copied into it from the user's home (relative names). */
  copied: string[]
  /** What run-start records. */
  record: RunSandbox
  /** The endpoint as the agent must reach it: the forwarder's port on the sandbox's loopback. */
  endpoint(endpoint: ModelEndpoint | undefined): ModelEndpoint | undefined
  /** Variables the agent gets on top of its environment (the CONNECT proxy when hosts are allowed). */
  environment(env: Record<string, string | undefined>): Record<string, string | undefined>
  /** The launch plan run through bubblewrap and the forwarder. */
  wrap(plan: LaunchPlan): LaunchPlan
  close(): Promise<void>
}

export async function openRunSandbox(
  base: SandboxBase,
  run: {
    runId: string
    runDir: string
    /** The sandbox home to use (kept between runs); default `<runDir>/home`. */
    home?: string
    cwd: string
    adapterId: string
    executable: ResolvedExecutable | undefined
    /** Copy the CLI's sign-in files (the profile uses the user's login, not an isolated home). */
    useLogin: boolean
    /** The model proxy's origin; undefined = an unproxied run, which has no way out at all. */
    proxyOrigin: string | undefined
    log: Logger
  },
): Promise<RunSandboxHandle> {
  const bubblewrap = await bubblewrapFor(base.env)
  const executables = [process.execPath]
  if (run.executable) executables.push(run.executable.path)
  if (run.executable?.interpreter) executables.push(run.executable.interpreter)
  const layout = await baseLayout(base, run.cwd, executables)
  const { home, copied } = await prepareSandboxHome({
    home: run.home ?? path.join(run.runDir, 'home'),
    adapterId: run.adapterId,
    userHome: base.env.HOME ?? os.homedir(),
    useLogin: run.useLogin,
  })
  const network: SandboxNetwork = await openSandboxNetwork({
    runId: run.runId,
    proxyOrigin: run.proxyOrigin,
    hosts: base.settings.hosts,
    log: run.log,
  })
  const { routes, endpoint, environment } = sandboxRoutes(run.proxyOrigin, {
    proxy: network.proxySocket,
    hosts: network.hostsSocket,
  })
  const forwarder = path.join(run.runDir, FORWARDER_FILE)
  await writeFile(forwarder, FORWARDER_SCRIPT, { mode: 0o600 })
  return {
    home,
    copied,
    record: {
      mode: 'workspace',
      by: bubblewrap.version,
      ...(base.settings.hosts.length > 0 && { hosts: base.settings.hosts }),
    },
    endpoint,
    environment,
    wrap(plan) {
      // The sandbox is a session of its own: the forwarder lowers its priority, as the daemon does an agent's.
      const priority = JSON.stringify(agentPriority())
      const command = [
        process.execPath,
        forwarder,
        JSON.stringify(routes),
        priority,
        '--',
        plan.command,
        ...plan.args,
      ]
      const args = bwrapArgs(
        { ...layout, writable: [...layout.writable, run.runDir, home], readOnlyLast: [network.directory] },
        command,
      )
      return { ...plan, command: bubblewrap.path, args }
    },
    close: () => network.close(),
  }
}

/**
 * The built-in agent's commands (`run_command`): the same confinement, no network at all (the built-in
 * agent's model calls are the daemon's own), HOME an empty tmpfs.
 */
export async function commandSandbox(
  base: SandboxBase,
  workspace: string,
): Promise<{
  record: RunSandbox
  wrap(command: string, args: string[]): { command: string; args: string[] }
}> {
  const bubblewrap = await bubblewrapFor(base.env)
  const layout = await baseLayout(base, workspace, [process.execPath])
  return {
    record: { mode: 'workspace', by: bubblewrap.version },
    wrap: (command, args) => ({
      command: bubblewrap.path,
      args: bwrapArgs({ ...layout, readOnlyLast: [] }, [
        ...loweredPriority(agentPriority()),
        command,
        ...args,
      ]),
    }),
  }
}

/**
 * A shell prelude that lowers its own priority and its session's (the sandbox's own, behind --new-session),
 * then runs the command: what the forwarder does for a CLI agent. Nicer only; best effort.
 */
function loweredPriority({ niceness, groupNiceness }: { niceness: number; groupNiceness: number }): string[] {
  const script = `echo ${groupNiceness} > /proc/self/autogroup 2>/dev/null; d=$((${niceness} - $(nice))); [ "$d" -gt 0 ] && exec nice -n "$d" "$@"; exec "$@"`
  return ['/bin/sh', '-c', script, 'hangar-priority']
}

/**
 * What a built-in agent run records at its start: its commands' sandbox. A profile that asks for one where
 * bubblewrap cannot run throws (sandbox_unavailable) so the run fails before any command is proposed.
 */
export async function commandSandboxRecord(settings: SandboxSettings, env: Environment): Promise<RunSandbox> {
  if (settings.mode === 'off') return { mode: 'off', reason: 'the profile sets sandbox: off' }
  const bubblewrap = await bubblewrapFor(env)
  return { mode: 'workspace', by: bubblewrap.version }
}
