// The `hangar` command line. Every command has --help; data commands take --json; errors print one line
// and exit 1 (2 for usage and config errors).
import { Command, CommanderError } from 'commander'
import { VERSION } from '../version.js'
import { registerActionsCommand } from './commands/actions-command.js'
import { registerAgentsCommand } from './commands/agents-command.js'
import { registerAttemptsCommand } from './commands/attempts-command.js'
import { registerBackupCommands } from './commands/backup-commands.js'
import { registerDaemonControlCommands } from './commands/daemon-control-command.js'
import { registerDoctorCommand } from './commands/doctor-command.js'
import { registerLoginCommands } from './commands/login-command.js'
import { registerNotifyCommand } from './commands/notify-command.js'
import { registerProjectsCommand } from './commands/projects-command.js'
import { registerProxyCommands } from './commands/proxy-commands.js'
import { registerRunCommand } from './commands/run-command.js'
import { registerRunsCommand } from './commands/runs-command.js'
import { registerSecretsCommand } from './commands/secrets-command.js'
import { registerServiceCommand } from './commands/service-command.js'
import { registerTokenCommand } from './commands/token-command.js'
import { registerTriggersCommand } from './commands/triggers-command.js'
import { registerUpCommand } from './commands/up-command.js'
import { registerWorkspacesCommand } from './commands/workspaces-command.js'
import type { GlobalOptions } from './context.js'
import { type CliIo, EXIT, ExitWith, exitCodeOf, formatUsageError, printError } from './output.js'

export interface RunOptions {
  /** Called with the daemon's shutdown handler; the bin wires it to SIGINT/SIGTERM. */
  onShutdown?: (handler: (signal: string) => void) => void
  /** Called with the daemon's reload handler; the bin wires it to SIGHUP. */
  onReload?: (handler: () => void) => void
  /** The IPC channel of a daemon started by `hangar up --detach`: sends one message, then lets go. */
  notifyParent?: (message: unknown) => void
}

export function buildProgram(io: CliIo, options: RunOptions = {}): Command {
  const program = new Command('hangar')
    .description('Hangar: one daemon and one CLI for every coding agent')
    .version(VERSION, '-v, --version', 'print the version')
    .option('--data-dir <dir>', 'where Hangar keeps its state (default: $HANGAR_DATA_DIR or ~/.hangar)')
    .option('--database <url>', 'postgres://… to use PostgreSQL (default: $HANGAR_DATABASE_URL, else SQLite)')
    .configureOutput(cliOutput(io, 'hangar'))
    .exitOverride()

  const globals = () => program.opts<GlobalOptions>()
  registerUpCommand(program, io, globals, {
    onShutdown: options.onShutdown ?? (() => {}),
    onReload: options.onReload ?? (() => {}),
    ...(options.notifyParent && { notifyParent: options.notifyParent }),
  })
  registerRunCommand(program, io, globals, { onShutdown: options.onShutdown ?? (() => {}) })
  registerRunsCommand(program, io, globals)
  registerWorkspacesCommand(program, io, globals)
  registerAttemptsCommand(program, io, globals)
  registerProjectsCommand(program, io, globals)
  registerTriggersCommand(program, io, globals)
  registerNotifyCommand(program, io, globals)
  registerAgentsCommand(program, io, globals)
  registerActionsCommand(program, io, globals, { onShutdown: options.onShutdown ?? (() => {}) })
  registerLoginCommands(program, io, globals)
  registerTokenCommand(program, io, globals)
  registerProxyCommands(program, io, globals)
  registerSecretsCommand(program, io, globals)
  registerDoctorCommand(program, io, globals)
  registerBackupCommands(program, io, globals)
  registerDaemonControlCommands(program, io, globals)
  registerServiceCommand(program, io, globals)

  for (const command of program.commands) {
    command.exitOverride()
    command.configureOutput(cliOutput(io, `hangar ${command.name()}`))
    for (const sub of command.commands) {
      sub.exitOverride()
      sub.configureOutput(cliOutput(io, `hangar ${command.name()} ${sub.name()}`))
    }
  }
  return program
}

/** Commander writes help to stdout, and its usage errors in Hangar's one error format. */
function cliOutput(io: CliIo, commandPath: string) {
  return {
    writeOut: (text: string) => io.stdout.write(text),
    writeErr: (text: string) => io.stderr.write(text),
    outputError: (text: string) => io.stderr.write(`${formatUsageError(text, commandPath)}\n`),
  }
}

/** Runs the CLI and returns its exit code (never throws). */
export async function runCli(argv: string[], io: CliIo, options: RunOptions = {}): Promise<number> {
  const program = buildProgram(io, options)
  try {
    await program.parseAsync(argv, { from: 'user' })
    return EXIT.ok
  } catch (error) {
    if (error instanceof ExitWith) return error.exitCode
    if (error instanceof CommanderError) {
      // Help and version are "errors" to commander; usage mistakes were already printed by it.
      if (['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(error.code))
        return EXIT.ok
      if (error.code === 'commander.executeSubCommandAsync') return EXIT.failed
      return EXIT.usage
    }
    printError(io, error)
    return exitCodeOf(error)
  }
}
