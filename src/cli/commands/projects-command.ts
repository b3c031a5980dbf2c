// hangar projects add|list|remove|grant|revoke — the directories conversations and runs work on. The
// store is the truth (every daemon reads it at each check), so these work with or without a daemon.
import os from 'node:os'
import path from 'node:path'
import type { Command } from 'commander'
import type { Project } from '../../core/api-types.js'
import { AppError } from '../../core/errors.js'
import type { Runtime } from '../../main.js'
import { type GlobalOptions, withRuntime } from '../context.js'
import { type CliIo, formatTable, printJson } from '../output.js'

/** The CLI acts as the owner; its audit entries say so. */
const actorOf = (runtime: Runtime) => `user:${runtime.owner.id}`

/** A project by id or name, among those the owner has. */
export async function findProject(runtime: Runtime, nameOrId: string): Promise<Project> {
  const all = await runtime.projects.list(runtime.owner.id)
  const found = all.find((project) => project.id === nameOrId || project.name === nameOrId)
  if (!found) {
    throw new AppError('not_found', `no project ${nameOrId}`, {
      hint: all.length
        ? `one of: ${all.map((project) => project.name).join(', ')}`
        : 'add one with hangar projects add PATH',
    })
  }
  return found
}

async function findUser(runtime: Runtime, nameOrId: string) {
  const user =
    (await runtime.store.users.findById(nameOrId)) ?? (await runtime.store.users.findByName(nameOrId))
  if (!user) throw new AppError('not_found', `no user ${nameOrId}`, { hint: 'see hangar users list' })
  return user
}

export function registerProjectsCommand(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  const projects = program
    .command('projects')
    .description('the directories (git repositories or plain folders) conversations and runs work on')

  projects
    .command('add')
    .description('register a directory as a project (a git repository gets worktrees, a folder copies)')
    .argument('<path>', 'the directory (relative to here)')
    .option('--name <name>', 'its name (default: the directory name)')
    .option('--agent <agent>', 'the agent its conversations start with')
    .option('--json', 'print JSON')
    .action(async (target: string, options: { name?: string; agent?: string; json?: boolean }) => {
      const absolute = path.resolve(io.cwd, target.replace(/^~(?=$|\/)/, io.env.HOME ?? os.homedir()))
      const project = await withRuntime(io, globals(), (runtime) =>
        runtime.projects.add(runtime.owner.id, actorOf(runtime), {
          path: absolute,
          name: options.name,
          defaultAgent: options.agent,
        }),
      )
      if (options.json) return printJson(io, project)
      io.stdout.write(`Added project ${project.name} (${project.path}, ${project.kind}) as ${project.id}\n`)
    })

  projects
    .command('list')
    .description('the registered projects')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const { list, users } = await withRuntime(io, globals(), async (runtime) => ({
        list: await runtime.projects.list(runtime.owner.id),
        users: await runtime.store.users.list(),
      }))
      if (options.json) return printJson(io, { projects: list })
      if (list.length === 0) {
        io.stdout.write('No projects yet: add one with hangar projects add PATH\n')
        return
      }
      const nameOf = (id: string) => users.find((user) => user.id === id)?.name ?? id
      io.stdout.write(
        formatTable(
          ['NAME', 'KIND', 'AGENT', 'MEMBERS', 'ID', 'PATH'],
          list.map((project) => [
            project.name,
            project.kind,
            project.defaultAgent,
            (project.members ?? []).map(nameOf).join(','),
            project.id,
            project.path,
          ]),
        ),
      )
    })

  projects
    .command('remove')
    .description('unregister a project (its files stay; refused while one of its runs is going)')
    .argument('<project>', 'its name or id')
    .action(async (nameOrId: string) => {
      const removed = await withRuntime(io, globals(), async (runtime) => {
        const project = await findProject(runtime, nameOrId)
        await runtime.projects.remove(runtime.owner.id, actorOf(runtime), project.id)
        return project
      })
      io.stdout.write(`Removed project ${removed.name}; its files at ${removed.path} are untouched\n`)
    })

  for (const [verb, description] of [
    ['grant', 'let a member make conversations and runs in a project'],
    ['revoke', 'take a project away from a member'],
  ] as const) {
    projects
      .command(verb)
      .description(description)
      .argument('<project>', 'its name or id')
      .argument('<user>', 'the member’s name or id')
      .action(async (nameOrId: string, userName: string) => {
        const [project, user] = await withRuntime(io, globals(), async (runtime) => {
          const found = await findProject(runtime, nameOrId)
          const member = await findUser(runtime, userName)
          await runtime.projects[verb](runtime.owner.id, actorOf(runtime), found.id, member.id)
          return [found, member] as const
        })
        io.stdout.write(
          verb === 'grant'
            ? `Granted project ${project.name} to ${user.name}\n`
            : `Revoked project ${project.name} from ${user.name}\n`,
        )
      })
  }
}
