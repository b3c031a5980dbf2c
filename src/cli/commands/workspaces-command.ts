// hangar workspaces list|show|remove — conversations' worktrees (or copies) and one-off --isolate
// workspaces; through the daemon when one runs, else the store directly.
import type { Command } from 'commander'
import type { Workspace } from '../../store/repositories/workspaces-repository.js'
import type { WorkspaceDetails, WorkspaceRemoval } from '../../workspaces/workspace-service.js'
import { projectFromDirectory, type ResolvedLifecycle } from '../../workspaces/lifecycle/lifecycle-config.js'
import { type GlobalOptions, viaDaemonOrStore, withRuntime } from '../context.js'
import { type CliIo, formatTable, printJson } from '../output.js'
import { findProject } from './projects-command.js'
import { registerReviewCommands } from './review-commands.js'

/** One line saying what a removal did, e.g. "removed worktree … and branch hangar/…". */
export function describeRemoval(removal: WorkspaceRemoval): string {
  const { workspace, branch } = removal
  if (workspace.kind === 'in_place')
    return `forgot workspace ${workspace.id} (it was the project itself, in place at ${workspace.path}; no files removed)`
  const noun = workspace.kind === 'copy' ? 'copy' : 'worktree'
  const files = removal.removedFiles
    ? `removed ${noun} ${workspace.path}`
    : `${noun} ${workspace.path} was already gone`
  const teardown = (removal.teardown ?? [])
    .map((run) => `; teardown${run.target === 'local' ? '' : ` on ${run.target}`} exited ${run.exitCode}`)
    .join('')
  const hosts = (removal.hostCopies ?? [])
    .map((copy) =>
      copy.removed
        ? `; removed its copy on ${copy.target}`
        : `; could not remove its copy on ${copy.target} (${copy.reason ?? 'unknown'})`,
    )
    .join('')
  const after = `${teardown}${hosts}`
  if (!branch) return `${files}${after}`
  if (branch.deleted) return `${files} and branch ${branch.name}${after}`
  return `${files}; kept branch ${branch.name} (${branch.reason ?? 'kept'})${after}`
}

export function registerWorkspacesCommand(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  /** `--project NAME|ID`: the project's id (for the daemon) and its name and directory (for the store). */
  const projectOption = async (nameOrId: string | undefined) => {
    if (!nameOrId) return undefined
    const project = await withRuntime(io, globals(), (runtime) => findProject(runtime, nameOrId))
    return { id: project.id, lifecycle: projectFromDirectory(project.path, project.name) }
  }

  const workspaces = program
    .command('workspaces')
    .description("list, show and remove conversations' worktrees and --isolate workspaces")
  registerReviewCommands(workspaces, io, globals)

  workspaces
    .command('list')
    .description('the active workspaces')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const list = await viaDaemonOrStore<Workspace[]>(
        io,
        globals(),
        { method: 'GET', route: '/api/workspaces' },
        (runtime) => runtime.workspaces.list(runtime.owner.id),
      )
      if (options.json) return printJson(io, list)
      io.stdout.write(
        formatTable(
          ['ID', 'KIND', 'BRANCH', 'CONVERSATION', 'PATH'],
          list.map((workspace) => [
            workspace.id,
            workspace.kind,
            workspace.branch ?? (workspace.kind === 'worktree' ? '(detached)' : null),
            workspace.conversationId,
            workspace.path,
          ]),
        ),
      )
    })

  workspaces
    .command('show')
    .description('one workspace: where it is, its branch, and what changed in it')
    .argument('<id>', 'workspace id')
    .option('--json', 'print JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const workspace = await viaDaemonOrStore<WorkspaceDetails>(
        io,
        globals(),
        { method: 'GET', route: `/api/workspaces/${encodeURIComponent(id)}` },
        (runtime) => runtime.workspaces.inspect(runtime.owner.id, id),
      )
      if (options.json) return printJson(io, workspace)
      const changes =
        workspace.changedFiles === null
          ? null
          : workspace.changedFiles === 0
            ? 'none (clean)'
            : `${workspace.changedFiles} file(s) changed or untracked (git -C ${workspace.path} status)`
      for (const [key, value] of Object.entries({
        id: workspace.id,
        kind: workspace.kind,
        status: workspace.status,
        path: workspace.path,
        project: workspace.projectPath,
        branch: workspace.branch
          ? `${workspace.branch}${workspace.createdBranch ? '' : ' (not created by Hangar)'}`
          : workspace.kind === 'worktree'
            ? '(detached)'
            : null,
        base: workspace.baseRef,
        conversation: workspace.conversationId,
        node: workspace.nodeId,
        created: workspace.createdAt,
        changes,
        problem: workspace.problem,
      })) {
        if (value) io.stdout.write(`${key.padEnd(13)} ${value}\n`)
      }
    })

  workspaces
    .command('remove')
    .description('remove a workspace: its files, and its branch only if Hangar created it')
    .argument('<id>', 'workspace id')
    .option('--json', 'print JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const removal = await viaDaemonOrStore<WorkspaceRemoval>(
        io,
        globals(),
        { method: 'DELETE', route: `/api/workspaces/${encodeURIComponent(id)}` },
        (runtime) => runtime.workspaces.remove(runtime.owner.id, id),
      )
      if (options.json) return printJson(io, removal)
      io.stdout.write(`${describeRemoval(removal)}\n`)
    })

  workspaces
    .command('config')
    .description("the project's workspace lifecycle: files copied, setup and teardown commands, ports")
    .option('--project <name|id>', "the project (default: the daemon's directory)")
    .option('--json', 'print JSON')
    .action(async (options: { project?: string; json?: boolean }) => {
      const project = await projectOption(options.project)
      const resolved = await viaDaemonOrStore<ResolvedLifecycle>(
        io,
        globals(),
        { method: 'GET', route: `/api/workspace-config${project ? `?projectId=${project.id}` : ''}` },
        (runtime) => runtime.workspaceLifecycle.show(runtime.owner.id, project?.lifecycle),
      )
      if (options.json) return printJson(io, resolved)
      io.stdout.write(describeLifecycle(resolved))
    })

  workspaces
    .command('approve')
    .description(
      "approve the repository's .hangar/workspace.yaml as it is now (owner only: it runs commands)",
    )
    .option('--hash <sha256>', 'approve only if the file still has this hash (from workspaces config --json)')
    .option('--project <name|id>', "the project (default: the daemon's directory)")
    .option('--json', 'print JSON')
    .action(async (options: { hash?: string; project?: string; json?: boolean }) => {
      const project = await projectOption(options.project)
      const approve = async (contentHash: string) =>
        viaDaemonOrStore<ResolvedLifecycle>(
          io,
          globals(),
          {
            method: 'POST',
            route: '/api/workspace-config/approve',
            body: { contentHash, ...(project && { projectId: project.id }) },
          },
          (runtime) => runtime.workspaceLifecycle.approve(runtime.owner.id, contentHash, project?.lifecycle),
        )
      let hash = options.hash
      if (!hash) {
        const current = await viaDaemonOrStore<ResolvedLifecycle>(
          io,
          globals(),
          { method: 'GET', route: `/api/workspace-config${project ? `?projectId=${project.id}` : ''}` },
          (runtime) => runtime.workspaceLifecycle.show(runtime.owner.id, project?.lifecycle),
        )
        // What is approved is what was just shown; a file changed in between is refused by its hash.
        hash = current.repositoryFile?.contentHash ?? '0'.repeat(64)
      }
      const resolved = await approve(hash)
      if (options.json) return printJson(io, resolved)
      io.stdout.write(`approved ${resolved.repositoryFile?.path}\n${describeLifecycle(resolved)}`)
    })
}

/** The lifecycle as `hangar workspaces config` prints it. */
export function describeLifecycle(resolved: ResolvedLifecycle): string {
  const lines: string[] = [`project      ${resolved.project}`]
  const file = resolved.repositoryFile
  const from =
    resolved.source === 'hangar.yaml'
      ? `hangar.yaml (projects.${resolved.project}.workspace)`
      : resolved.source === 'repository'
        ? `${file?.path} (approved ${file?.approvedAt})`
        : 'nothing applies'
  lines.push(`from         ${from}`)
  const config = resolved.config ?? (file && !file.approved ? file.config : null)
  if (config) {
    const pending = resolved.config ? '' : ' (not approved: does not run)'
    if (config.copy.length) lines.push(`copy         ${config.copy.join(', ')}${pending}`)
    if (config.setup) lines.push(`setup        ${config.setup}${pending}`)
    if (config.teardown) lines.push(`teardown     ${config.teardown}${pending}`)
    if (config.ports) lines.push(`ports        ${config.ports} (HANGAR_PORT, HANGAR_PORT_COUNT)${pending}`)
  }
  if (file && !file.approved && resolved.source !== 'hangar.yaml') {
    lines.push(
      file.problem
        ? `problem      ${file.problem}`
        : `approve      hangar workspaces approve --hash ${file.contentHash} (owner only)`,
    )
  }
  return `${lines.join('\n')}\n`
}
