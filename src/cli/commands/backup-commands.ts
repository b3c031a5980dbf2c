// hangar backup FILE / hangar restore FILE — owner-only by nature: they read and write the data dir itself,
// so they work on the files directly (a running daemon keeps serving; SQLite's WAL lets us read alongside).
import path from 'node:path'
import type { Command } from 'commander'
import { AppError } from '../../core/errors.js'
import { writeBackup, restoreBackup, type BackupSummary } from '../../store/backup.js'
import { KEY_FILE_NAME } from '../../store/keyring.js'
import { openDatabase, redactDatabaseUrl, sqliteStoreFile } from '../../store/open-database.js'
import { VERSION } from '../../version.js'
import { type GlobalOptions, resolveDatabaseUrl, resolveDataDir } from '../context.js'
import { type CliIo, printJson } from '../output.js'

export function registerBackupCommands(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  program
    .command('backup')
    .description(
      'write a consistent snapshot of the SQLite store and the instance key to FILE (safe while the daemon runs)',
    )
    .argument('<file>', 'the backup file to create; an existing file is never overwritten')
    .option('--json', 'print { file, bytes, hangarVersion, createdAt, files } as JSON')
    .action(async (file: string, options: { json?: boolean }) => {
      const dataDir = resolveDataDir(globals(), io)
      const url = resolveDatabaseUrl(globals(), io)
      const storeFile = sqliteStoreFile({ url, dataDir })
      if (!storeFile) {
        // Anything but sqlite: and postgres: is refused by the store's own URL check, with its message.
        if (!url || !/^postgres(ql)?:\/\//.test(url))
          await openDatabase({ url, dataDir }).then((h) => h.close())
        throw postgresBackupRefusal(url ?? '')
      }
      const summary = await writeBackup({
        storeFile,
        keyFile: path.join(dataDir, KEY_FILE_NAME),
        target: path.resolve(io.cwd, file),
        hangarVersion: VERSION,
      })
      if (options.json) return printJson(io, summary)
      io.stdout.write(`${summary.file}\n`)
      io.stderr.write(`Backed up ${describe(summary)}.\n`)
      if (!summary.files.includes(KEY_FILE_NAME) || io.env.HANGAR_SECRET_KEYS?.trim()) {
        io.stderr.write(
          'The instance key comes from HANGAR_SECRET_KEYS and is not in the backup: keep it with the backup, or stored provider keys cannot be read after a restore.\n',
        )
      } else {
        io.stderr.write(
          'The backup holds the instance key that decrypts stored provider keys: keep it as private as the data dir.\n',
        )
      }
    })

  program
    .command('restore')
    .description('restore a backup made by "hangar backup" into an empty or new data dir')
    .argument('<file>', 'the backup file')
    .option('--json', 'print { file, bytes, hangarVersion, createdAt, files } as JSON')
    .action(async (file: string, options: { json?: boolean }) => {
      const dataDir = resolveDataDir(globals(), io)
      const url = resolveDatabaseUrl(globals(), io)
      if (url) {
        throw new AppError(
          'usage',
          'hangar restore writes a SQLite store into a data dir, not into --database',
          {
            hint: 'unset --database / HANGAR_DATABASE_URL and pick the data dir with --data-dir; for PostgreSQL use pg_restore',
          },
        )
      }
      const summary = await restoreBackup(path.resolve(io.cwd, file), dataDir)
      if (options.json) return printJson(io, summary)
      io.stderr.write(
        `Restored ${describe(summary)} into ${dataDir}. Start it with: hangar up --data-dir ${dataDir}\n`,
      )
    })
}

function describe(summary: BackupSummary): string {
  return `${summary.files.join(' and ')} (${summary.bytes} bytes, Hangar ${summary.hangarVersion}, ${summary.createdAt})`
}

/** On PostgreSQL the database server owns the data: pg_dump is the tool, and the key is in the environment. */
function postgresBackupRefusal(url: string): AppError {
  return new AppError(
    'usage',
    `hangar backup copies the SQLite store; this instance uses PostgreSQL (${redactDatabaseUrl(url)})`,
    {
      hint: `run: pg_dump --format=custom --file=hangar.pgdump "<your database URL>", and keep HANGAR_SECRET_KEYS (the key ring) with the dump`,
    },
  )
}
