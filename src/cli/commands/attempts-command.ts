// hangar run --agents a,b,c "…" — the same prompt with several agents at once, each in a worktree of its
// own, shown side by side when all finished; hangar attempts list|show|pick. Through the daemon when one
// runs (it schedules the runs), else in this process (its scheduler runs them, its proxy meters them).
import { realpath } from 'node:fs/promises'
import path from 'node:path'
import type { Command } from 'commander'
import type { AttemptGroup, Project } from '../../core/api-types.js'
import { AppError } from '../../core/errors.js'
import type { Runtime } from '../../main.js'
import type { PickResult } from '../../runs/attempts-service.js'
import { describeFinishedAttempt, printAttemptGroup } from '../attempts-output.js'
import { type GlobalOptions, openRuntime, resolveDataDir, viaDaemonOrStore, withRuntime } from '../context.js'
import { connectDaemon, type DaemonClient } from '../daemon-client.js'
import { type CliIo, EXIT, ExitWith, formatTable, printJson, usageError } from '../output.js'
import { describeRemoval } from './workspaces-command.js'

const POLL_MS = 500

export interface AttemptsRunOptions {
  agents: string
  cwd?: string
  json?: boolean
}

/** The agent names of `--agents a,b,c` (the service checks them; an empty list is a usage error here). */
function agentList(value: string): string[] {
  const agents = value
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean)
  if (agents.length === 0)
    throw usageError('--agents: name at least one agent', 'e.g. --agents claude-code,codex,builtin')
  return agents
}

/** The registered project holding `cwd` (attempts work on a project, in worktrees of it). */
async function projectAt(runtime: Runtime, io: CliIo, cwd: string): Promise<Project> {
  const real = await realpath(path.resolve(io.cwd, cwd)).catch(() => {
    throw usageError(`--cwd: ${cwd} does not exist`)
  })
  const project = await runtime.projects.containing(real)
  if (!project) {
    throw new AppError('invalid_request', `${real} is in no registered project`, {
      hint: 'attempts work in worktrees of a project: hangar projects add PATH',
    })
  }
  return project
}

/** Polls the group until every attempt finished, saying each one's end as it comes. */
async function follow(
  io: CliIo,
  load: () => Promise<AttemptGroup>,
  options: { json: boolean; cancelled: () => boolean },
): Promise<AttemptGroup> {
  const said = new Set<string>()
  for (;;) {
    const group = await load()
    for (const attempt of group.attempts) {
      if (!attempt.finished || said.has(attempt.conversationId)) continue
      said.add(attempt.conversationId)
      if (!options.json) io.stderr.write(`${describeFinishedAttempt(attempt)}\n`)
    }
    if (group.finished || options.cancelled()) return group
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}

function finish(io: CliIo, group: AttemptGroup, json: boolean, cancelled: boolean): void {
  if (json) printJson(io, group)
  else printAttemptGroup(io, group)
  if (cancelled) throw new ExitWith(EXIT.cancelled)
  // A failing check is a result to compare, and a proposal waiting is the built-in agent's normal end.
  if (group.attempts.some((attempt) => ['failed', 'interrupted', 'cancelled'].includes(attempt.status)))
    throw new ExitWith(EXIT.failed)
}

function announce(io: CliIo, group: AttemptGroup, project: Project, json: boolean): void {
  if (json) return
  io.stderr.write(
    `Attempts ${group.id} in project ${project.name}: ${group.attempts.map((attempt) => attempt.agent).join(', ')} (each in its own worktree)\n`,
  )
}

async function cancelAll(daemon: DaemonClient, group: AttemptGroup): Promise<void> {
  for (const attempt of group.attempts) {
    if (attempt.runId)
      await daemon.request('POST', `/api/runs/${attempt.runId}/cancel`).catch(() => undefined)
  }
}

export async function runAttempts(
  io: CliIo,
  globals: GlobalOptions,
  prompt: string,
  options: AttemptsRunOptions,
  onCancel: (handler: () => void) => void,
): Promise<void> {
  const agents = agentList(options.agents)
  const json = options.json ?? false
  let cancelled = false
  onCancel(() => (cancelled = true))
  const daemon = await connectDaemon(resolveDataDir(globals, io))
  if (daemon) {
    const project = await withRuntime(io, globals, (runtime) => projectAt(runtime, io, options.cwd ?? '.'))
    const started = await daemon.request<AttemptGroup>('POST', '/api/attempts', {
      projectId: project.id,
      prompt,
      agents,
    })
    announce(io, started, project, json)
    const group = await follow(io, () => daemon.request<AttemptGroup>('GET', `/api/attempts/${started.id}`), {
      json,
      cancelled: () => cancelled,
    })
    if (cancelled) await cancelAll(daemon, group)
    return finish(
      io,
      cancelled ? await daemon.request('GET', `/api/attempts/${group.id}`) : group,
      json,
      cancelled,
    )
  }
  const runtime = await openRuntime(io, globals)
  try {
    // The runs' model traffic goes through a proxy served by this process, as `hangar run`'s does.
    const proxy = await runtime.serveProxy()
    try {
      const project = await projectAt(runtime, io, options.cwd ?? '.')
      const owner = runtime.owner.id
      const started = await runtime.attempts.start(owner, { projectId: project.id, prompt, agents })
      announce(io, started, project, json)
      runtime.scheduler.start(POLL_MS)
      const group = await follow(io, () => runtime.attempts.get(owner, started.id), {
        json,
        cancelled: () => cancelled,
      })
      // Stopping the scheduler cancels what still runs; the checks under way end before the store closes.
      await runtime.scheduler.stop()
      await runtime.attempts.settled()
      finish(io, cancelled ? await runtime.attempts.get(owner, group.id) : group, json, cancelled)
    } finally {
      await proxy.close()
    }
  } finally {
    await runtime.close()
  }
}

export function registerAttemptsCommand(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  const attempts = program
    .command('attempts')
    .description('compared attempts (hangar run --agents a,b,c): list, show side by side, pick one')

  attempts
    .command('list')
    .description('your attempt groups, newest first')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const { attempts: groups } = await viaDaemonOrStore<{ attempts: AttemptGroup[] }>(
        io,
        globals(),
        { method: 'GET', route: '/api/attempts' },
        async (runtime) => ({ attempts: await runtime.attempts.list(runtime.owner.id) }),
      )
      if (options.json) return printJson(io, groups)
      io.stdout.write(
        formatTable(
          ['ID', 'AGENTS', 'FINISHED', 'PICKED', 'PROMPT'],
          groups.map((group) => [
            group.id,
            group.attempts.map((attempt) => attempt.agent).join(','),
            group.finished ? 'yes' : 'no',
            group.pickedConversationId,
            group.prompt.replace(/\s+/g, ' ').slice(0, 50),
          ]),
        ),
      )
    })

  attempts
    .command('show')
    .description('the attempts side by side: status, time, tokens, cost, files, diff stats, check')
    .argument('<id>', 'attempt group id (atg_…)')
    .option('--json', 'print JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const group = await viaDaemonOrStore<AttemptGroup>(
        io,
        globals(),
        { method: 'GET', route: `/api/attempts/${encodeURIComponent(id)}` },
        (runtime) => runtime.attempts.get(runtime.owner.id, id),
      )
      if (options.json) return printJson(io, group)
      printAttemptGroup(io, group)
    })

  attempts
    .command('pick')
    .description("keep one attempt; the others' workspaces (and branches) are removed unless --keep-others")
    .argument('<id>', 'attempt group id (atg_…)')
    .argument('<conversation>', 'the attempt to keep: its conversation id')
    .option('--keep-others', "keep the other attempts' workspaces")
    .option('--json', 'print JSON')
    .action(async (id: string, conversationId: string, options: { keepOthers?: boolean; json?: boolean }) => {
      const body = { conversationId, ...(options.keepOthers && { keepOthers: true }) }
      const result = await viaDaemonOrStore<PickResult>(
        io,
        globals(),
        { method: 'POST', route: `/api/attempts/${encodeURIComponent(id)}/pick`, body },
        (runtime) => runtime.attempts.pick(runtime.owner.id, id, body),
      )
      if (options.json) return printJson(io, result)
      for (const removal of result.removed) io.stderr.write(`${describeRemoval(removal)}\n`)
      printAttemptGroup(io, result.group)
    })
}
