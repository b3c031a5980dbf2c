// hangar login — a fresh one-time sign-in link for the owner; hangar users add|list — invite people.
import type { Command } from 'commander'
import { AppError } from '../../core/errors.js'
import type { Runtime } from '../../main.js'
import { type GlobalOptions, resolveDataDir, withRuntime } from '../context.js'
import { readDaemonFile } from '../daemon-file.js'
import { type CliIo, formatTable, printJson, usageError } from '../output.js'

export const DEFAULT_PORT = 7456
const DEFAULT_URL = `http://127.0.0.1:${DEFAULT_PORT}`

export function loginUrl(baseUrl: string, secret: string): string {
  return `${baseUrl}/login#${secret}`
}

async function daemonUrl(io: CliIo, options: GlobalOptions): Promise<string | null> {
  return (await readDaemonFile(resolveDataDir(options, io)))?.url ?? null
}

function noDaemonNote(io: CliIo): void {
  io.stderr.write(`No daemon is running for this data dir: start it with "hangar up", then open the link.\n`)
}

export function registerLoginCommands(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  program
    .command('login')
    .description('print a fresh one-time sign-in link for the web UI')
    .option('--json', 'print { url, expiresInMinutes } as JSON')
    .action(async (options: { json?: boolean }) => {
      const running = await daemonUrl(io, globals())
      const secret = await withRuntime(io, globals(), (runtime) =>
        runtime.auth.createLoginLink(runtime.owner.id),
      )
      const url = loginUrl(running ?? DEFAULT_URL, secret)
      if (options.json) return printJson(io, { url, daemonRunning: running !== null, expiresInMinutes: 15 })
      if (!running) noDaemonNote(io)
      io.stdout.write(`${url}\n`)
      io.stderr.write('The link works once, within 15 minutes.\n')
    })

  const users = program.command('users').description('manage the people who can use this Hangar')

  users
    .command('add')
    .description('add a user and print their invite link (owner only)')
    .argument('<name>', 'user name: letters, digits, ".", "_" or "-"')
    .option('--json', 'print { id, name, inviteUrl } as JSON')
    .action(async (name: string, options: { json?: boolean }) => {
      if (!/^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$/.test(name)) {
        throw usageError(`"${name}" is not a valid user name`, 'use letters, digits, ".", "_" or "-"')
      }
      const running = await daemonUrl(io, globals())
      const { user, secret } = await withRuntime(io, globals(), (runtime) => addUser(runtime, name))
      const url = loginUrl(running ?? DEFAULT_URL, secret)
      if (options.json)
        return printJson(io, { id: user.id, name: user.name, role: user.role, inviteUrl: url })
      io.stderr.write(`Added ${user.name}. Send them this invite link (it works once, within 7 days):\n`)
      if (!running) noDaemonNote(io)
      io.stdout.write(`${url}\n`)
    })

  users
    .command('list')
    .description('list users')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const list = await withRuntime(io, globals(), (runtime) => runtime.store.users.list())
      if (options.json) return printJson(io, list)
      io.stdout.write(
        formatTable(
          ['ID', 'NAME', 'ROLE', 'CREATED'],
          list.map((user) => [user.id, user.name, user.role, user.createdAt.slice(0, 10)]),
        ),
      )
    })
}

async function addUser(runtime: Runtime, name: string) {
  if (runtime.owner.role !== 'owner') throw new AppError('forbidden', 'only the owner can add users')
  if (await runtime.store.users.findByName(name)) {
    throw new AppError('conflict', `a user named "${name}" already exists`, { hint: 'pick another name' })
  }
  const user = await runtime.store.transaction(async (repositories) => {
    const created = await repositories.users.create({ name, role: 'member' })
    await repositories.forUser(runtime.owner.id).audit.append({
      actor: 'system',
      action: 'user.add',
      targetType: 'user',
      targetId: created.id,
      details: { name },
    })
    return created
  })
  return { user, secret: await runtime.auth.createLoginLink(user.id, 'invite') }
}
