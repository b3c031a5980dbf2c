// hangar workspaces list|show|remove — conversations' worktrees (or copies) and one-off --isolate
// workspaces; through the daemon when one runs, else the store directly.
import type { Command } from 'commander'
import type { Workspace } from '../../store/repositories/workspaces-repository.js'
import type { WorkspaceDetails, WorkspaceRemoval } from '../../workspaces/workspace-service.js'
import { type GlobalOptions, viaDaemonOrStore } from '../context.js'
import { type CliIo, formatTable, printJson } from '../output.js'

/** One line saying what a removal did, e.g. "removed worktree … and branch hangar/…". */
export function describeRemoval(removal: WorkspaceRemoval): string {
  const { workspace, branch } = removal
  if (workspace.kind === 'in_place')
    return `forgot workspace ${workspace.id} (it was the project itself, in place at ${workspace.path}; no files removed)`
  const noun = workspace.kind === 'copy' ? 'copy' : 'worktree'
  const files = removal.removedFiles
    ? `removed ${noun} ${workspace.path}`
    : `${noun} ${workspace.path} was already gone`
  if (!branch) return files
  if (branch.deleted) return `${files} and branch ${branch.name}`
  return `${files}; kept branch ${branch.name} (${branch.reason ?? 'kept'})`
}

export function registerWorkspacesCommand(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  const workspaces = program
    .command('workspaces')
    .description("list, show and remove conversations' worktrees and --isolate workspaces")

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
}
