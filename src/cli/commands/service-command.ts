// hangar service install [--user] [--print] — a systemd unit that keeps `hangar up` running. It writes
// the unit and prints the systemctl commands to enable it; it never runs systemctl itself.
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { Command } from 'commander'
import { AppError } from '../../core/errors.js'
import { VERSION } from '../../version.js'
import { type GlobalOptions, resolveDatabaseUrl, resolveDataDir } from '../context.js'
import { hangarBinPath } from '../daemon-process.js'
import { type CliIo, printJson } from '../output.js'
import { nextCommands, renderUnit, serviceEnvFile, unitPath } from '../systemd-unit.js'

interface InstallOptions {
  user?: boolean
  print?: boolean
  force?: boolean
  runAs?: string
  json?: boolean
}

export function registerServiceCommand(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  const service = program.command('service').description('run Hangar as a systemd service')

  service
    .command('install')
    .description(
      'write a systemd unit that runs "hangar up" for this data dir: ~/.config/systemd/user/hangar.service with --user, else /etc/systemd/system/hangar.service (as root, with User=). Prints the systemctl commands to enable it; never runs them',
    )
    .option('--user', 'a user unit (systemctl --user), no root needed')
    .option('--print', 'print the unit and write nothing')
    .option('--force', 'replace an existing, different hangar.service')
    .option(
      '--run-as <user>',
      'system-wide only: the account the daemon runs as (default: $SUDO_USER or you)',
    )
    .option('--json', 'print { path, written, unit, next } as JSON')
    .action(async (options: InstallOptions) => {
      const scope = options.user ? 'user' : 'system'
      if (options.user && options.runAs)
        throw new AppError('usage', '--run-as is for a system-wide unit', {
          hint: 'a --user unit runs as you; drop one of the two',
        })
      const current = os.userInfo().username
      const runAs = scope === 'system' ? (options.runAs ?? io.env.SUDO_USER ?? current) : undefined
      if (runAs && runAs !== current && !globals().dataDir && !io.env.HANGAR_DATA_DIR)
        throw new AppError('usage', `the unit runs as ${runAs}, but the default data dir is yours`, {
          hint: `pass --data-dir (e.g. --data-dir /home/${runAs}/.hangar)`,
        })
      const dataDir = resolveDataDir(globals(), io)
      const unit = renderUnit({
        scope,
        node: process.execPath,
        bin: hangarBinPath(),
        dataDir,
        workingDirectory: io.cwd,
        path: io.env.PATH,
        ...(runAs && { user: runAs }),
        version: VERSION,
      })
      const file = unitPath(scope, io.env)
      const next = nextCommands(scope, runAs)
      if (options.print) {
        if (options.json) return printJson(io, { path: file, written: false, unit, next })
        io.stdout.write(unit)
        return
      }
      const existing = await readFile(file, 'utf8').catch(() => null)
      if (existing !== null && existing !== unit && !options.force)
        throw new AppError('conflict', `${file} exists and is not this unit`, {
          hint: 'compare it with "hangar service install --print", then pass --force to replace it',
        })
      if (existing !== unit) {
        await mkdir(path.dirname(file), { recursive: true }).catch((error: unknown) => {
          throw writeError(file, error)
        })
        await writeFile(file, unit, { mode: 0o644 }).catch((error: unknown) => {
          throw writeError(file, error)
        })
      }
      if (options.json) return printJson(io, { path: file, written: existing !== unit, unit, next })
      io.stdout.write(`${file}\n`)
      io.stderr.write(
        `${existing === unit ? 'The unit is already installed' : 'Wrote the unit'} (data dir ${dataDir}).\n`,
      )
      if (resolveDatabaseUrl(globals(), io))
        io.stderr.write(
          `Put HANGAR_DATABASE_URL=… in ${serviceEnvFile(dataDir)} (mode 0600): the unit holds no secrets.\n`,
        )
      io.stderr.write(`Next:\n${next.map((line) => `  ${line}\n`).join('')}`)
    })
}

function writeError(file: string, error: unknown): AppError {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'EACCES' || code === 'EPERM')
    return new AppError('forbidden', `cannot write ${file}: permission denied`, {
      hint: 'run it with sudo for a system-wide unit, or pass --user',
    })
  return new AppError('internal', `cannot write ${file}: ${(error as Error).message}`)
}
