// hangar actions list|confirm|reject — decide what the built-in agent proposed. Deciding the last open
// proposal of a run starts its continuation run, streamed here like `hangar run`.
import type { Command } from 'commander'
import type { Runtime } from '../../main.js'
import type { Decision } from '../../runs/actions-service.js'
import type { PendingAction } from '../../store/repositories/actions-repository.js'
import type { Run } from '../../store/repositories/runs-repository.js'
import { type GlobalOptions, openRuntime, resolveDataDir, withRuntime } from '../context.js'
import { connectDaemon, type DaemonClient } from '../daemon-client.js'
import { type CliIo, EXIT, ExitWith, formatTable, printJson } from '../output.js'
import { createRunPrinter } from '../run-output.js'

const EXIT_BY_STATUS: Record<string, number> = {
  succeeded: EXIT.ok,
  awaiting_confirmation: EXIT.awaitingConfirmation,
  cancelled: EXIT.cancelled,
}

function row(action: PendingAction): string[] {
  return [
    action.id,
    action.status,
    action.tool,
    action.classification,
    action.summary,
    action.expiresAt.slice(0, 16),
  ]
}

async function decide(
  runtime: Runtime,
  io: CliIo,
  id: string,
  decision: Decision,
  options: { json?: boolean },
  onCancel: (handler: () => void) => void,
): Promise<number> {
  const owner = runtime.owner
  // No daemon: this process opened the store itself, as the owner at the daemon's host.
  const result = await runtime.actions.decide({ via: 'local', user: owner }, id, decision)
  const { action } = result
  const verb = result.replayed ? 'was already' : 'is now'
  io.stderr.write(`${action.id} ${verb} ${action.status}: ${action.summary}\n`)
  const outcome = action.result as { content?: string } | null
  if (action.status === 'conflict' || action.status === 'failed')
    io.stderr.write(`  ${outcome?.content ?? ''}\n`)
  if (result.replayed || result.remaining > 0 || !action.runId) {
    if (result.remaining > 0)
      io.stderr.write(`${result.remaining} more proposal(s) of this run wait for a decision.\n`)
    return EXIT.ok
  }
  const printer = createRunPrinter(io, { json: options.json ?? false })
  const controller = new AbortController()
  onCancel(() => controller.abort())
  const run = await runtime.builtin.continueAfter(owner.id, action.runId, {
    onDelivered: (envelopes) => envelopes.forEach(printer),
    signal: controller.signal,
  })
  return EXIT_BY_STATUS[run.status] ?? EXIT.failed
}

export function registerActionsCommand(
  program: Command,
  io: CliIo,
  globals: () => GlobalOptions,
  signals: { onShutdown(handler: (signal: string) => void): void },
): void {
  const actions = program
    .command('actions')
    .description("confirm or reject the built-in agent's proposed changes")

  actions
    .command('list')
    .description('list proposals waiting for a decision')
    .option('--all', 'include decided ones')
    .option('--json', 'print an array of actions')
    .action(async (options: { all?: boolean; json?: boolean }) => {
      const list = await withRuntime(io, globals(), (runtime) =>
        runtime.actions.list(runtime.owner.id, options.all ? {} : { status: 'pending' }),
      )
      if (options.json) return printJson(io, list)
      if (list.length === 0) {
        io.stderr.write('Nothing waits for a decision.\n')
        return
      }
      io.stdout.write(
        formatTable(['ID', 'STATUS', 'TOOL', 'CLASSIFICATION', 'SUMMARY', 'EXPIRES'], list.map(row)),
      )
      for (const action of list.filter((candidate) => candidate.diff && candidate.status === 'pending')) {
        io.stdout.write(`\n${action.id}:\n${action.diff}\n`)
      }
    })

  /** With a daemon running, it decides and runs the continuation; we only follow it. */
  async function decideThroughDaemon(
    daemon: DaemonClient,
    id: string,
    decision: Decision,
    options: { json?: boolean },
  ): Promise<number> {
    const result = await daemon.request<{
      action: PendingAction
      replayed: boolean
      continuation: Run | null
    }>(
      'POST',
      `/api/actions/${id}/${decision.kind}`,
      decision.kind === 'reject' ? { ...(decision.reason && { reason: decision.reason }) } : undefined,
    )
    const { action } = result
    io.stderr.write(
      `${action.id} ${result.replayed ? 'was already' : 'is now'} ${action.status}: ${action.summary}\n`,
    )
    if (!result.continuation) return EXIT.ok
    const printer = createRunPrinter(io, { json: options.json ?? false })
    let status = 'failed'
    for await (const envelope of daemon.follow(result.continuation.id)) {
      printer(envelope)
      if (envelope.type === 'run-end') status = envelope.status
    }
    return EXIT_BY_STATUS[status] ?? EXIT.failed
  }

  const runDecision =
    (decisionOf: (options: { reason?: string }) => Decision) =>
    async (id: string, options: { reason?: string; json?: boolean }) => {
      const daemon = await connectDaemon(resolveDataDir(globals(), io))
      if (daemon) {
        const code = await decideThroughDaemon(daemon, id, decisionOf(options), options)
        if (code !== EXIT.ok) throw new ExitWith(code)
        return
      }
      const runtime = await openRuntime(io, globals())
      try {
        const code = await decide(runtime, io, id, decisionOf(options), options, (handler) =>
          signals.onShutdown(() => handler()),
        )
        if (code !== EXIT.ok) throw new ExitWith(code)
      } finally {
        await runtime.close()
      }
    }

  actions
    .command('confirm')
    .description('apply a proposal; when it was the last one, the agent continues')
    .argument('<id>', 'action id (see hangar actions list)')
    .option('--json', 'print the continuation run as one event envelope per line')
    .action(runDecision(() => ({ kind: 'confirm' })))

  actions
    .command('reject')
    .description('refuse a proposal (the agent is told, with your reason)')
    .argument('<id>', 'action id (see hangar actions list)')
    .option('--reason <text>', 'why, for the agent')
    .option('--json', 'print the continuation run as one event envelope per line')
    .action(runDecision((options) => ({ kind: 'reject', reason: options.reason })))
}
