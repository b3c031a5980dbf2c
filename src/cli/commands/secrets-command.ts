// hangar secrets rewrap — re-encrypt stored provider keys under the active key (after a rotation:
// put the new key first in HANGAR_SECRET_KEYS, keep the old one after it, rewrap, then drop the old one).
import type { Command } from 'commander'
import { AppError } from '../../core/errors.js'
import { type GlobalOptions, withRuntime } from '../context.js'
import { type CliIo, printJson } from '../output.js'

export function registerSecretsCommand(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  const secrets = program.command('secrets').description('manage the key vault')
  secrets
    .command('rewrap')
    .description('re-encrypt every stored secret under the active key of HANGAR_SECRET_KEYS')
    .option('--json', 'print { rewrapped, current, failed } as JSON')
    .action(async (options: { json?: boolean }) => {
      const summary = await withRuntime(io, globals(), (runtime) => runtime.credentials.rewrapAll())
      if (options.json) printJson(io, summary)
      else {
        io.stdout.write(
          `Rewrapped ${summary.rewrapped} secret(s); ${summary.current} already under the active key.\n`,
        )
        for (const failure of summary.failed)
          io.stderr.write(`  could not rewrap ${failure.id}: ${failure.reason}\n`)
      }
      if (summary.failed.length > 0) {
        throw new AppError('secret_unreadable', `${summary.failed.length} secret(s) could not be rewrapped`, {
          hint: 'add the key they were encrypted with to HANGAR_SECRET_KEYS (after the active one) and run again',
        })
      }
    })
}
