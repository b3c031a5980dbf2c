// The workspace lifecycle service: what a new workspace gets (the project's git-ignored files it names,
// its own ports), the setup command before its first agent turn — here, or on the SSH host the run goes
// to — and the teardown when it is removed. Approving a repository's `.hangar/workspace.yaml` is the
// owner's alone (it runs commands on the host): the check is here, so REST and the CLI share it.
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { stat } from 'node:fs/promises'
import path from 'node:path'
import type { HangarConfig } from '../../core/config.js'
import { AppError } from '../../core/errors.js'
import { type Logger, silentLogger } from '../../core/logger.js'
import type { Run } from '../../store/repositories/runs-repository.js'
import {
  DEFAULT_PORT_RANGE,
  type PortBlock,
  type PortRange,
} from '../../store/repositories/workspace-lifecycle-repository.js'
import type { Workspace } from '../../store/repositories/workspaces-repository.js'
import type { Store } from '../../store/store.js'
import { remoteShell, type SshConnection } from '../ssh/ssh-connection.js'
import { copyIgnoredFiles, matchIgnoredFiles } from './copy-ignored-files.js'
import { type CommandOutcome, type CommandPlace, runLifecycleCommand } from './lifecycle-command.js'
import {
  type LifecycleProject,
  projectFromDirectory,
  resolveLifecycle,
  type ResolvedLifecycle,
} from './lifecycle-config.js'

/** Where a run's workspace is set up: here, or its copy on an SSH target. */
export type SetupPlace =
  | { target: 'local'; dir: string }
  | { target: string; connection: SshConnection; dir: string; localDir: string }

export interface SetupHooks {
  /** The base environment of a local command (Hangar's secrets already removed). */
  env: Readonly<Record<string, string | undefined>>
  onStart?: (info: { command: string; target: string }) => void
  onOutput?: (stream: 'stdout' | 'stderr', text: string) => void
  signal?: AbortSignal
}

export type SetupResult =
  /** `unapproved`: the repository's lifecycle file that would apply but waits for the owner's approval. */
  | { status: 'skipped'; unapproved?: string }
  | { status: 'succeeded'; exitCode: number }
  | { status: 'failed'; exitCode: number; tail: string; command: string; target: string }

export interface TeardownResult {
  target: string
  exitCode: number
  tail: string
}

export interface WorkspaceLifecycleOptions {
  store: Store
  config: Pick<HangarConfig, 'projects'>
  /** The daemon's project (today there is one): its directory, and its name (default: the basename). */
  defaultProject: LifecycleProject
  /**
   * The project a workspace was made from. Default: named after its source directory. Once projects are
   * first-class this looks the name up (the workspace's conversation's project).
   */
  projectOf?: (workspace: Workspace) => LifecycleProject | Promise<LifecycleProject>
  /** The environment of local setup and teardown commands (Hangar's secrets already removed). */
  env: Readonly<Record<string, string | undefined>>
  /** SSH connections by target name (teardown on the hosts a workspace was set up on). */
  connection?: (target: string) => SshConnection | undefined
  portRange?: PortRange
  /** A teardown that runs longer is stopped (default 10 minutes). */
  teardownTimeoutMs?: number
  log?: Logger
}

const commandHash = (command: string) => createHash('sha256').update(command).digest('hex')

/** HANGAR_PORT (the first port) and HANGAR_PORT_COUNT, for a workspace's processes. */
export function portVariables(block: PortBlock | undefined): Record<string, string> {
  if (!block) return {}
  return { HANGAR_PORT: String(block.first), HANGAR_PORT_COUNT: String(block.count) }
}

export function createWorkspaceLifecycle(options: WorkspaceLifecycleOptions) {
  const { store } = options
  const log = options.log ?? silentLogger
  const repository = store.workspaceLifecycle

  const resolve = (project: LifecycleProject = options.defaultProject) =>
    resolveLifecycle(project, options.config, (name) => repository.approval(name))

  async function projectOf(workspace: Workspace): Promise<LifecycleProject> {
    return options.projectOf ? options.projectOf(workspace) : projectFromDirectory(workspace.projectPath)
  }

  /** Uploads the copied files of the local workspace to its copy on a host (ignored files never travel). */
  async function uploadCopies(place: Extract<SetupPlace, { connection: SshConnection }>, globs: string[]) {
    const files = await matchIgnoredFiles(place.localDir, globs)
    if (files.length === 0) return
    const tar = spawn('tar', ['-cf', '-', '-C', place.localDir, '--', ...files], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    await place.connection.check(
      'copying the workspace files',
      remoteShell('set -eu; tar -xf - -C "$1"', [place.dir]),
      { input: tar.stdout },
    )
  }

  return {
    /** The lifecycle that applies to a project (default: the daemon's), and the repository file's state. */
    resolve,

    /** What any user may see: the commands, where they come from, and whether the file is approved. */
    async show(userId: string, project?: LifecycleProject): Promise<ResolvedLifecycle> {
      if (!(await store.users.findById(userId))) throw new AppError('not_found', 'no such user')
      return resolve(project)
    },

    /**
     * Approves the repository's `.hangar/workspace.yaml` as it is now. Owner only. `contentHash` is the hash
     * the owner saw (GET shows it): a file changed since is a conflict, so what runs is what was read.
     */
    async approve(
      userId: string,
      expectedHash: string,
      project?: LifecycleProject,
    ): Promise<ResolvedLifecycle> {
      const user = await store.users.findById(userId)
      if (user?.role !== 'owner') {
        throw new AppError(
          'forbidden',
          'only the owner may approve workspace commands: they run on the host',
          {
            hint: 'ask the owner to review and approve .hangar/workspace.yaml',
          },
        )
      }
      const resolved = await resolve(project)
      const file = resolved.repositoryFile
      if (!file) {
        throw new AppError('not_found', `the project ${resolved.project} has no .hangar/workspace.yaml`)
      }
      if (file.problem)
        throw new AppError('config_invalid', file.problem, { hint: 'fix the file, then approve it' })
      if (file.contentHash !== expectedHash) {
        throw new AppError(
          'conflict',
          `${file.path} changed since it was shown (its hash is ${file.contentHash})`,
          {
            hint: 'review it again, then approve the hash shown now',
            details: { contentHash: file.contentHash },
          },
        )
      }
      await repository.approve(resolved.project, file.contentHash, userId)
      return resolve(project)
    },

    /**
     * Right after a workspace's files are made: the project's git-ignored files it lists are copied in, and
     * its ports are taken (kept until it is removed). A workspace in place is the project itself: nothing.
     */
    async prepareFiles(workspace: Workspace, cwd: string): Promise<{ copied: string[]; ports?: PortBlock }> {
      if (workspace.kind === 'in_place') return { copied: [] }
      const project = await projectOf(workspace)
      const { config } = await resolve(project)
      if (!config) return { copied: [] }
      const { copied } = await copyIgnoredFiles(project.dir, cwd, config.copy)
      const ports = await this.allocatePorts(workspace.id, config.ports)
      return { copied, ...(ports && { ports }) }
    },

    async allocatePorts(workspaceId: string, count: number): Promise<PortBlock | undefined> {
      if (count <= 0) return undefined
      const block = await repository.allocatePorts(
        workspaceId,
        count,
        options.portRange ?? DEFAULT_PORT_RANGE,
      )
      if (!block) {
        const range = options.portRange ?? DEFAULT_PORT_RANGE
        throw new AppError(
          'conflict',
          `no ${count} free consecutive ports left in ${range.from}-${range.to - 1}`,
          {
            hint: 'remove workspaces you no longer need (hangar workspaces remove ID)',
          },
        )
      }
      return block
    },

    /**
     * The variables of a run's workspace, taking its ports first if it has none yet (a workspace made
     * before the project asked for ports keeps working, and gets them at its next run).
     */
    async variablesForRun(workspace: Workspace): Promise<Record<string, string>> {
      const held = await repository.portsOf(workspace.id)
      if (held) return portVariables(held)
      const { config } = await resolve(await projectOf(workspace))
      return portVariables(await this.allocatePorts(workspace.id, config?.ports ?? 0))
    },

    /** Gives a workspace's ports back (a workspace whose making failed half-way). */
    release: (workspaceId: string) => repository.releasePorts(workspaceId),

    /** The variables a workspace's processes get: HANGAR_PORT and HANGAR_PORT_COUNT (when it has ports). */
    async variables(workspaceId: string): Promise<Record<string, string>> {
      return portVariables(await repository.portsOf(workspaceId))
    },

    /** The active, non-in-place workspace a run works in, if any: its conversation's, or one around its cwd. */
    async workspaceOfRun(userId: string, run: Run): Promise<Workspace | undefined> {
      const scope = store.forUser(userId)
      const inside = (workspace: Workspace) =>
        run.cwd === workspace.path || run.cwd.startsWith(`${workspace.path}${path.sep}`)
      const candidates = run.conversationId
        ? await scope.workspaces.listForConversation(run.conversationId)
        : await scope.workspaces.list()
      return candidates.find((workspace) => workspace.kind !== 'in_place' && inside(workspace))
    },

    /**
     * Before a run's agent starts: runs the setup command where the run works unless it already succeeded
     * there (with the same command). On a host, the copied files go there first. A failed setup is
     * recorded, so the next run (a retry) runs it again.
     */
    async setup(workspace: Workspace, place: SetupPlace, hooks: SetupHooks): Promise<SetupResult> {
      const { config, repositoryFile } = await resolve(await projectOf(workspace))
      if (!config) {
        return repositoryFile && !repositoryFile.approved
          ? { status: 'skipped', unapproved: repositoryFile.path }
          : { status: 'skipped' }
      }
      const command = config.setup
      const hash = commandHash(command ?? '')
      const done = (await repository.setups(workspace.id)).find((record) => record.target === place.target)
      if (done?.status === 'succeeded' && done.commandHash === hash) return { status: 'skipped' }
      if ('connection' in place && config.copy.length > 0) await uploadCopies(place, config.copy)
      const record = (status: 'succeeded' | 'failed', exitCode: number | null) =>
        repository.recordSetup({
          workspaceId: workspace.id,
          target: place.target,
          dir: place.dir,
          status,
          exitCode,
          commandHash: hash,
        })
      if (!command) {
        // Nothing to run, but the place is prepared: teardown runs here later.
        await record('succeeded', null)
        return { status: 'skipped' }
      }
      hooks.onStart?.({ command, target: place.target })
      const outcome = await runLifecycleCommand(commandPlace(place), command, {
        env: hooks.env,
        variables: await this.variables(workspace.id),
        ...(hooks.onOutput && { onOutput: hooks.onOutput }),
        ...(hooks.signal && { signal: hooks.signal }),
      })
      await record(outcome.exitCode === 0 ? 'succeeded' : 'failed', outcome.exitCode)
      if (outcome.exitCode === 0) return { status: 'succeeded', exitCode: 0 }
      return {
        status: 'failed',
        exitCode: outcome.exitCode,
        tail: outcome.tail,
        command,
        target: place.target,
      }
    },

    /**
     * When a workspace is removed (before its files go): the teardown command runs in every place the
     * workspace was set up (here, and on each SSH host), then its ports are released. A failing teardown
     * is logged and reported; it never keeps the workspace.
     */
    async teardown(workspace: Workspace): Promise<TeardownResult[]> {
      const results: TeardownResult[] = []
      try {
        if (workspace.kind === 'in_place') return results
        const { config } = await resolve(await projectOf(workspace))
        const command = config?.teardown
        if (!command) return results
        const variables = await this.variables(workspace.id)
        for (const setup of await repository.setups(workspace.id)) {
          const place = await teardownPlace(workspace, setup.target, setup.dir)
          if (!place) continue
          const outcome: CommandOutcome = await runLifecycleCommand(place, command, {
            env: options.env,
            variables,
            timeoutMs: options.teardownTimeoutMs ?? 10 * 60_000,
          })
          results.push({ target: setup.target, exitCode: outcome.exitCode, tail: outcome.tail })
          if (outcome.exitCode !== 0) {
            log.warn('workspace teardown failed', {
              workspaceId: workspace.id,
              target: setup.target,
              exitCode: outcome.exitCode,
            })
          }
        }
        return results
      } finally {
        await repository.releasePorts(workspace.id)
      }
    },
  }

  function commandPlace(place: SetupPlace): CommandPlace {
    return 'connection' in place
      ? { kind: 'remote', connection: place.connection, dir: place.dir }
      : { kind: 'local', dir: place.dir }
  }

  async function teardownPlace(
    workspace: Workspace,
    target: string,
    dir: string,
  ): Promise<CommandPlace | undefined> {
    if (target === 'local') {
      const exists = await stat(dir).then(
        (info) => info.isDirectory(),
        () => false,
      )
      return exists ? { kind: 'local', dir } : undefined
    }
    const connection = options.connection?.(target)
    if (!connection) {
      log.warn('cannot tear down a workspace on a target that is no longer configured', {
        workspaceId: workspace.id,
        target,
      })
      return undefined
    }
    return { kind: 'remote', connection, dir }
  }
}

export type WorkspaceLifecycle = ReturnType<typeof createWorkspaceLifecycle>
