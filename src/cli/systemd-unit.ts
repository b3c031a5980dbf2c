// The systemd unit `hangar service install` writes: `hangar up` in the foreground (systemd is the
// supervisor, so no --detach), restarted when it fails. On stop systemd sends SIGTERM to hangar alone
// (KillMode=mixed): hangar cancels its runs and stops their agents' process groups itself, and whatever is
// left after TimeoutStopSec is killed.
import os from 'node:os'
import path from 'node:path'
import { AppError } from '../core/errors.js'

export const SERVICE_NAME = 'hangar'
/** Longer than `hangar down`'s default wait: a clean stop finishes before systemd kills anything. */
export const STOP_TIMEOUT_SECONDS = 90

export interface UnitOptions {
  scope: 'user' | 'system'
  node: string
  bin: string
  dataDir: string
  workingDirectory: string
  /** PATH as the installing shell has it: the agent CLIs are found where `hangar up` finds them. */
  path: string | undefined
  /** System-wide only: the account the daemon runs as. */
  user?: string
  version: string
}

/** Where the unit goes: ~/.config/systemd/user (or $XDG_CONFIG_HOME) for --user, /etc/systemd/system else. */
export function unitPath(scope: 'user' | 'system', env: NodeJS.ProcessEnv): string {
  if (scope === 'system') return `/etc/systemd/system/${SERVICE_NAME}.service`
  const config = env.XDG_CONFIG_HOME?.trim() || path.join(env.HOME ?? os.homedir(), '.config')
  return path.join(config, 'systemd', 'user', `${SERVICE_NAME}.service`)
}

/** The optional file of secrets the unit reads (HANGAR_DATABASE_URL, provider keys): never the unit itself. */
export function serviceEnvFile(dataDir: string): string {
  return path.join(dataDir, 'service.env')
}

export function renderUnit(options: UnitOptions): string {
  const lines = [
    `# Hangar daemon, written by "hangar service install${options.scope === 'user' ? ' --user' : ''}" (Hangar ${options.version}).`,
    '# Secrets (HANGAR_DATABASE_URL, provider keys) go in the EnvironmentFile, mode 0600, never here.',
    '[Unit]',
    'Description=Hangar daemon for AI coding agents',
    'After=network-online.target',
    'Wants=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${[options.node, options.bin, 'up'].map(quoteArgument).join(' ')}`,
    `WorkingDirectory=${quoteValue(options.workingDirectory)}`,
    `Environment=${quoteArgument(`HANGAR_DATA_DIR=${options.dataDir}`)}`,
    ...(options.path ? [`Environment=${quoteArgument(`PATH=${options.path}`)}`] : []),
    `EnvironmentFile=-${quoteValue(serviceEnvFile(options.dataDir))}`,
    ...(options.scope === 'system' && options.user ? [`User=${checkedUserName(options.user)}`] : []),
    'Restart=on-failure',
    'RestartSec=5',
    'KillMode=mixed',
    'KillSignal=SIGTERM',
    `TimeoutStopSec=${STOP_TIMEOUT_SECONDS}`,
    '',
    '[Install]',
    `WantedBy=${options.scope === 'user' ? 'default.target' : 'multi-user.target'}`,
    '',
  ]
  return lines.join('\n')
}

/** The commands that enable and start the unit; `hangar service install` never runs them itself. */
export function nextCommands(scope: 'user' | 'system', user?: string): string[] {
  if (scope === 'user') {
    return [
      'systemctl --user daemon-reload && systemctl --user enable --now hangar',
      `loginctl enable-linger ${user ?? '$USER'}   # keep it running after you log out`,
      'journalctl --user -u hangar -f   # its output',
    ]
  }
  return [
    'sudo systemctl daemon-reload && sudo systemctl enable --now hangar',
    'journalctl -u hangar -f   # its output',
  ]
}

function refuseControlCharacters(value: string): string {
  // A newline would end the directive and start another: a path is hostile until checked.
  if ([...value].some((character) => character.charCodeAt(0) < 0x20 || character.charCodeAt(0) === 0x7f))
    throw new AppError('usage', `${JSON.stringify(value)} has a control character and cannot go in a unit`)
  return value
}

/** One word of ExecStart= or Environment=: double-quoted, with systemd's specifiers (%) and $ escaped. */
function quoteArgument(value: string): string {
  const escaped = refuseControlCharacters(value)
    .replace(/\\/g, '\\\\')
    .replace(/"/g, '\\"')
    .replace(/%/g, '%%')
    .replace(/\$/g, '$$$$')
  return `"${escaped}"`
}

/** A path setting (WorkingDirectory=, EnvironmentFile=): taken verbatim but for specifiers. */
function quoteValue(value: string): string {
  if (!path.isAbsolute(value)) throw new AppError('usage', `${value} is not an absolute path`)
  return refuseControlCharacters(value).replace(/%/g, '%%')
}

function checkedUserName(name: string): string {
  if (!/^[a-z_][a-z0-9_.-]*[$]?$/i.test(name) || name.length > 32)
    throw new AppError('usage', `"${name}" is not a user name`, { hint: 'pass --run-as <user>' })
  return name
}
