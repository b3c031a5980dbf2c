// hangar runs list|show|cancel|finalize — through the daemon when one runs, else the store directly.
import type { Command } from 'commander'
import { processAlive } from '../../adapters/supervisor.js'
import { AppError } from '../../core/errors.js'
import { RUN_STATUSES } from '../../core/events.js'
import type { CostSource, UsageTotals } from '../../core/events.js'
import { describeRunCost } from '../../core/usage-cost.js'
import type { ProxyRequestRecord } from '../../store/repositories/proxy-requests-repository.js'
import type { Run } from '../../store/repositories/runs-repository.js'
import { type GlobalOptions, resolveDataDir, withRuntime } from '../context.js'
import { connectDaemon } from '../daemon-client.js'
import { type CliIo, cliDollars, formatTable, printJson, usageError } from '../output.js'

function duration(run: Run): string | null {
  if (!run.startedAt) return null
  const end = run.endedAt ? Date.parse(run.endedAt) : Date.now()
  const seconds = Math.round((end - Date.parse(run.startedAt)) / 1000)
  return seconds < 120 ? `${seconds}s` : `${Math.round(seconds / 60)}m`
}

/** A run's cost: `$0.1234`, `$0.1234 (agent)` when the agent reported it, or `unknown`. */
function runCost(run: Pick<Run, 'usage' | 'costUsd'>): string {
  return describeRunCost(run.costUsd ?? run.usage?.costUsd, run.usage?.costSource, cliDollars)
}

/** Tokens in the compact form of a table cell: 1234 → 1.2k, 3400000 → 3.4M. */
function compactTokens(usage: UsageTotals | null): string | null {
  if (!usage) return null
  const total = usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens
  if (total < 1000) return String(total)
  return total < 1_000_000 ? `${(total / 1000).toFixed(1)}k` : `${(total / 1_000_000).toFixed(1)}M`
}

function formatUsage(usage: UsageTotals, costSource: CostSource | undefined = usage.costSource): string {
  const cache = usage.cacheReadTokens || usage.cacheWriteTokens
  return [
    `${usage.inputTokens} in / ${usage.outputTokens} out`,
    cache ? ` / cache ${usage.cacheReadTokens} read, ${usage.cacheWriteTokens} written` : '',
    ` / ${describeRunCost(usage.costUsd, costSource, cliDollars)}`,
  ].join('')
}

/** One line of the run's request log: what was asked, what it cost, and which feeds went with it. */
function formatProxyRequest(request: ProxyRequestRecord): string {
  const feeds = request.feeds.map(
    (feed) => `${feed.name} (${feed.status}, ${feed.bytes} B${feed.truncated ? ', truncated' : ''})`,
  )
  return [
    request.startedAt.slice(11, 19),
    `${request.method} ${request.path}`,
    String(request.status),
    request.model ?? '-',
    `${request.durationMs} ms`,
    // A request is priced by the proxy or not at all.
    formatUsage(request.usage, request.usage.costUsd === undefined ? 'unknown' : 'proxy'),
    feeds.length ? `feeds: ${feeds.join(', ')}` : 'no feeds',
  ].join('  ')
}

export function registerRunsCommand(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  const runs = program.command('runs').description('list, show, cancel and finalize runs')

  runs
    .command('list')
    .description('the most recent runs')
    .option('--status <status>', `only runs in this status (${RUN_STATUSES.join(', ')})`)
    .option('--limit <n>', 'how many', '30')
    .option('--json', 'print JSON')
    .action(async (options: { status?: string; limit: string; json?: boolean }) => {
      if (options.status && !(RUN_STATUSES as readonly string[]).includes(options.status)) {
        throw usageError(`unknown status "${options.status}"`, `use one of ${RUN_STATUSES.join(', ')}`)
      }
      const limit = Number(options.limit)
      if (!Number.isInteger(limit) || limit < 1) throw usageError('--limit must be a positive whole number')
      const list = await withRuntime(io, globals(), (runtime) =>
        runtime.store.forUser(runtime.owner.id).runs.list({
          limit,
          ...(options.status && { status: options.status as Run['status'] }),
        }),
      )
      if (options.json) return printJson(io, list)
      io.stdout.write(
        formatTable(
          ['ID', 'STATUS', 'AGENT', 'CREATED', 'TOOK', 'TOKENS', 'COST', 'REASON'],
          list.map((run) => [
            run.id,
            run.status,
            run.agent,
            run.createdAt.slice(0, 19),
            duration(run),
            compactTokens(run.usage),
            // A run that has not ended has no cost yet ("-"); an ended one without a price says unknown.
            run.usage ? runCost(run) : null,
            run.reason?.slice(0, 60),
          ]),
        ),
      )
    })

  runs
    .command('show')
    .description('one run, with its events (--events)')
    .argument('<id>', 'run id')
    .option('--events', 'print its stored events too')
    .option('--json', 'print JSON (with --events and its model requests)')
    .action(async (id: string, options: { events?: boolean; json?: boolean }) => {
      const { run, events, requests } = await withRuntime(io, globals(), async (runtime) => {
        const scope = runtime.store.forUser(runtime.owner.id)
        const found = await scope.runs.get(id)
        if (!found) throw new AppError('not_found', `no run ${id}`, { hint: 'see hangar runs list' })
        return {
          run: found,
          events: options.events ? await scope.runs.listEvents(id) : [],
          requests: await scope.proxyRequests.listForRun(id),
        }
      })
      if (options.json) return printJson(io, { ...run, requests, ...(options.events && { events }) })
      for (const [key, value] of Object.entries({
        id: run.id,
        status: run.status,
        agent: `${run.agent} (${run.adapter})`,
        model: run.model,
        cwd: run.cwd,
        created: run.createdAt,
        took: duration(run),
        reason: run.reason,
        session: run.sessionId,
        continues: run.continues,
        finalize: run.workspaceFinalize
          ? `${run.workspaceFinalize}${run.finalizeReason ? `: ${run.finalizeReason}; retry with hangar runs finalize ${run.id}` : ''}`
          : null,
        usage: run.usage ? formatUsage(run.usage) : null,
      })) {
        if (value) io.stdout.write(`${key.padEnd(10)} ${value}\n`)
      }
      if (requests.length > 0) io.stdout.write(`requests  (${requests.length}, through the proxy)\n`)
      for (const request of requests) io.stdout.write(`  ${formatProxyRequest(request)}\n`)
      for (const event of events) io.stdout.write(`${JSON.stringify(event)}\n`)
    })

  runs
    .command('cancel')
    .description('cancel a queued or running run')
    .argument('<id>', 'run id')
    .option('--json', 'print the run as JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const daemon = await connectDaemon(resolveDataDir(globals(), io))
      let run: Run
      if (daemon) run = await daemon.request<Run>('POST', `/api/runs/${id}/cancel`)
      else {
        run = await withRuntime(io, globals(), async (runtime) => {
          const found = await runtime.store.forUser(runtime.owner.id).runs.get(id)
          if (!found) throw new AppError('not_found', `no run ${id}`, { hint: 'see hangar runs list' })
          // A run executing in another `hangar run` on this host: ask that process to cancel it (Ctrl-C).
          const owner = found.owner.pid
          if (found.status !== 'queued' && owner !== null && owner !== process.pid && processAlive(owner)) {
            process.kill(owner, 'SIGINT')
            return found
          }
          return runtime.scheduler.cancel(runtime.owner.id, id)
        })
      }
      if (options.json) return printJson(io, run)
      io.stdout.write(
        `${run.id} ${run.status === 'cancelled' ? 'cancelled' : `asked to cancel (${run.status})`}\n`,
      )
    })

  runs
    .command('finalize')
    .description("bring a run's changes back from its SSH target (a failed finalize, or an interrupted run)")
    .argument('<id>', 'run id')
    .option('--json', 'print the run as JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const daemon = await connectDaemon(resolveDataDir(globals(), io))
      const run = daemon
        ? await daemon.request<Run>('POST', `/api/runs/${id}/finalize`)
        : await withRuntime(io, globals(), (runtime) => runtime.finalizeRun(runtime.owner.id, id))
      if (options.json) return printJson(io, run)
      io.stdout.write(`${run.id} finalized: its changes are back in ${run.cwd}; the run is ${run.status}\n`)
    })
}
