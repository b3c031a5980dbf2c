// hangar token create|list|revoke — run as the local owner, straight against the store.
import type { Command } from 'commander'
import { parseDuration } from '../../core/duration.js'
import type { AccessTokenRecord } from '../../store/repositories/tokens-repository.js'
import { type GlobalOptions, withRuntime } from '../context.js'
import { type CliIo, formatTable, printJson, usageError } from '../output.js'

const LOCAL_CLI = 'system' as const

function day(iso: string | null): string | null {
  return iso ? iso.slice(0, 10) : null
}

export function registerTokenCommand(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  const token = program.command('token').description('create, list and revoke personal access tokens')

  token
    .command('create')
    .description('create a personal access token (shown once)')
    .requiredOption('--name <name>', 'a name to recognise the token by')
    .option('--expires-in <duration>', 'lifetime, e.g. 30d, 12h, 2w', '90d')
    .option('--scope <scope...>', 'extra scopes: approve (may commit proposals over MCP)')
    .option('--json', 'print { id, name, token, ... } as JSON')
    .action(async (options: { name: string; expiresIn: string; scope?: string[]; json?: boolean }) => {
      const name = options.name.trim()
      if (!name) throw usageError('--name must not be empty')
      const scopes = options.scope ?? []
      for (const scope of scopes) {
        if (scope !== 'approve' && scope !== 'api')
          throw usageError(`unknown scope "${scope}"`, 'use --scope approve')
      }
      const expiresInMs = parseDuration(options.expiresIn, '--expires-in')
      const { record, token: secret } = await withRuntime(io, globals(), (runtime) =>
        runtime.auth.createToken(LOCAL_CLI, runtime.owner.id, {
          name,
          expiresInMs,
          scopes: scopes as ('api' | 'approve')[],
        }),
      )
      if (options.json) {
        printJson(io, {
          id: record.id,
          name: record.name,
          token: secret,
          scopes: record.scopes,
          expiresAt: record.expiresAt,
        })
        return
      }
      io.stderr.write(
        `Created token "${record.name}" (id ${record.id}, scopes ${record.scopes.join(',')}, expires ${day(record.expiresAt)}).\nCopy it now: it is shown only once.\n`,
      )
      io.stdout.write(`${secret}\n`)
    })

  token
    .command('list')
    .description('list tokens that are not revoked (including proxy tokens)')
    .option('--all', 'include revoked tokens')
    .option('--json', 'print JSON')
    .action(async (options: { all?: boolean; json?: boolean }) => {
      const tokens = await withRuntime(io, globals(), (runtime) =>
        runtime.store.forUser(runtime.owner.id).tokens.list({ includeRevoked: options.all ?? false }),
      )
      if (options.json) return printJson(io, tokens)
      if (tokens.length === 0) {
        io.stderr.write('No tokens. Create one with: hangar token create --name NAME\n')
        return
      }
      io.stdout.write(
        formatTable(
          ['ID', 'NAME', 'KIND', 'SCOPES', 'CREATED', 'EXPIRES', 'LAST USED', 'STATUS'],
          tokens.map((record: AccessTokenRecord) => [
            record.id,
            record.name,
            record.kind,
            record.scopes.join(','),
            day(record.createdAt),
            day(record.expiresAt),
            day(record.lastUsedAt),
            record.revokedAt
              ? 'revoked'
              : record.expiresAt <= new Date().toISOString()
                ? 'expired'
                : 'active',
          ]),
        ),
      )
    })

  token
    .command('revoke')
    .description('revoke a token by id (see hangar token list)')
    .argument('<id>', 'token id')
    .option('--json', 'print the revoked token as JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const record = await withRuntime(io, globals(), (runtime) =>
        runtime.auth.revokeToken(LOCAL_CLI, runtime.owner.id, id),
      )
      if (options.json) return printJson(io, record)
      io.stdout.write(`Revoked token ${record.id} ("${record.name}").\n`)
    })
}
