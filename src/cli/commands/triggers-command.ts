// hangar triggers add|list|show|remove|run — schedules and inbound webhooks that start runs as their
// creator (the CLI acts as the owner). The store is the truth, so these work with or without a daemon; a
// fire by `run` goes through the daemon when one runs, else its run waits queued for one.
import type { Command } from 'commander'
import type { Runtime } from '../../main.js'
import { type FireOutcomeJson, fireOutcomeJson } from '../../triggers/trigger-fire.js'
import { type GlobalOptions, viaDaemonOrStore, withRuntime } from '../context.js'
import { type CliIo, formatTable, printJson, usageError } from '../output.js'
import { findProject } from './projects-command.js'

const actorOf = (runtime: Runtime) => `user:${runtime.owner.id}`

/** One of the owner's channels by name or id (an unknown one is left for the trigger service to refuse). */
async function channelIdOf(runtime: Runtime, nameOrId: string): Promise<string> {
  const channels = await runtime.notifications.list(runtime.owner.id)
  return channels.find((channel) => channel.id === nameOrId || channel.name === nameOrId)?.id ?? nameOrId
}

interface AddOptions {
  cron?: string
  timezone?: string
  missed?: string
  webhook?: boolean
  project?: string
  agent?: string
  prompt: string
  conversation?: string
  event?: string
  action?: string
  label?: string
  reportGithub?: boolean
  reportChannel?: string
  json?: boolean
}

function describeOutcome(outcome: FireOutcomeJson): string {
  if (outcome.fired) return `Fired: run ${outcome.runId} in conversation ${outcome.conversationId ?? '-'}`
  if (outcome.duplicate) return 'Not fired: a duplicate'
  return `Not fired (${outcome.status}): ${outcome.reason}`
}

export function registerTriggersCommand(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  const triggers = program
    .command('triggers')
    .description('schedules and webhooks that start runs (as you, in a project you may use)')

  triggers
    .command('add')
    .description('add a schedule (--cron) or an inbound webhook (--webhook) trigger')
    .argument('<name>', 'its name')
    .requiredOption('--prompt <text>', 'the prompt; for a webhook a template such as "{{issue.title}}"')
    .option('--cron <expression>', 'five fields, e.g. "0 9 * * MON-FRI"')
    .option('--timezone <zone>', 'IANA time zone of --cron (default UTC)')
    .option('--missed <policy>', 'slots missed while no daemon ran: skip (default) or once')
    .option('--webhook', 'an inbound webhook: POST /api/hooks/ID signed with the secret printed once')
    .option('--project <project>', 'the project (name or id) its conversations work on')
    .option('--agent <agent>', 'the agent profile or adapter')
    .option('--conversation <id>', 'post in this conversation instead of starting one each time')
    .option('--event <name>', 'webhook filter: the event (X-GitHub-Event), e.g. issues')
    .option('--action <name>', 'webhook filter: the payload action, e.g. labeled')
    .option('--label <name>', 'webhook filter: the label added, e.g. agent')
    .option('--report-github', 'comment on the originating GitHub issue when the run ends (services.github)')
    .option('--report-channel <channel>', 'send the report to your notification channel (name or id)')
    .option('--json', 'print JSON')
    .action(async (name: string, options: AddOptions) => {
      if (Boolean(options.cron) === Boolean(options.webhook))
        throw usageError('give either --cron EXPRESSION or --webhook', 'see hangar triggers add --help')
      if (options.missed && options.missed !== 'skip' && options.missed !== 'once')
        throw usageError(`--missed must be skip or once, not ${options.missed}`)
      if (options.reportGithub && options.reportChannel)
        throw usageError('give at most one of --report-github and --report-channel')
      const filter =
        options.event || options.action || options.label
          ? { event: options.event, action: options.action, label: options.label }
          : undefined
      const created = await withRuntime(io, globals(), async (runtime) =>
        runtime.triggers.create(runtime.owner.id, actorOf(runtime), {
          name,
          kind: options.webhook ? 'webhook' : 'schedule',
          cron: options.cron,
          timezone: options.timezone,
          missed: options.missed as 'skip' | 'once' | undefined,
          projectId: options.project ? (await findProject(runtime, options.project)).id : undefined,
          agent: options.agent,
          prompt: options.prompt,
          conversationId: options.conversation,
          filter,
          report: options.reportChannel
            ? { type: 'channel', channelId: await channelIdOf(runtime, options.reportChannel) }
            : options.reportGithub
              ? { type: 'github' }
              : undefined,
        }),
      )
      if (options.json) return printJson(io, created)
      io.stdout.write(`Added trigger ${created.name} (${created.id})\n`)
      if (created.secret) {
        io.stdout.write(`Webhook URL: <daemon URL>${created.url}\n`)
        io.stdout.write(`Secret (shown once, keep it now): ${created.secret}\n`)
      }
    })

  triggers
    .command('list')
    .description('your triggers')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const list = await withRuntime(io, globals(), (runtime) => runtime.triggers.list(runtime.owner.id))
      if (options.json) return printJson(io, { triggers: list })
      if (list.length === 0) {
        io.stdout.write('No triggers yet: add one with hangar triggers add NAME --cron … | --webhook\n')
        return
      }
      io.stdout.write(
        formatTable(
          ['NAME', 'KIND', 'WHEN', 'AGENT', 'PROJECT', 'ID'],
          list.map((trigger) => [
            trigger.name,
            trigger.kind,
            trigger.kind === 'schedule' ? `${trigger.cron} (${trigger.timezone})` : trigger.url,
            trigger.agent,
            trigger.projectId,
            trigger.id,
          ]),
        ),
      )
    })

  triggers
    .command('show')
    .description('a trigger and its fires (newest first), each with its run and outcome')
    .argument('<trigger>', 'its name or id')
    .option('--json', 'print JSON')
    .action(async (nameOrId: string, options: { json?: boolean }) => {
      const { trigger, fires } = await withRuntime(io, globals(), async (runtime) => ({
        trigger: await runtime.triggers.get(runtime.owner.id, nameOrId),
        fires: await runtime.triggers.fires(runtime.owner.id, nameOrId),
      }))
      if (options.json) return printJson(io, { ...trigger, fires })
      io.stdout.write(`${trigger.name} (${trigger.id}) ${trigger.kind}\n`)
      if (fires.length === 0) {
        io.stdout.write('No fires yet\n')
        return
      }
      io.stdout.write(
        formatTable(
          ['AT', 'SOURCE', 'STATUS', 'RUN', 'OUTCOME', 'REPORT', 'REASON'],
          fires.map((fire) => [
            fire.createdAt,
            fire.source,
            fire.status,
            fire.runId,
            fire.runStatus,
            fire.reportStatus,
            fire.reason ?? fire.reportError,
          ]),
        ),
      )
    })

  triggers
    .command('remove')
    .description('remove a trigger (its runs and conversations stay)')
    .argument('<trigger>', 'its name or id')
    .action(async (nameOrId: string) => {
      await withRuntime(io, globals(), (runtime) =>
        runtime.triggers.remove(runtime.owner.id, actorOf(runtime), nameOrId),
      )
      io.stdout.write(`Removed trigger ${nameOrId}\n`)
    })

  triggers
    .command('run')
    .description('fire a trigger now (same checks as a scheduled fire)')
    .argument('<trigger>', 'its name or id')
    .option('--json', 'print JSON')
    .action(async (nameOrId: string, options: { json?: boolean }) => {
      // The daemon fires it when one runs (and executes the run); else the run waits queued for one.
      const outcome = await viaDaemonOrStore<FireOutcomeJson>(
        io,
        globals(),
        { method: 'POST', route: `/api/triggers/${encodeURIComponent(nameOrId)}/run` },
        async (runtime) => {
          await runtime.scheduler.stop()
          return fireOutcomeJson(await runtime.triggers.runNow(runtime.owner.id, nameOrId))
        },
      )
      if (options.json) return printJson(io, outcome)
      io.stdout.write(`${describeOutcome(outcome)}\n`)
    })
}
