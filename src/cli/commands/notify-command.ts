// hangar notify add|list|remove|test|log — the caller's (the owner's) notification channels. Through the
// running daemon when there is one (it sends at once), else straight to the store (a daemon sends later).
import type { Command } from 'commander'
import { AppError } from '../../core/errors.js'
import type { Project } from '../../core/api-types.js'
import { NOTIFICATION_EVENTS } from '../../notifications/notification-events.js'
import type {
  ChannelView,
  DeliveryView,
  NewChannelRequest,
} from '../../notifications/notification-service.js'
import { connectDaemon } from '../daemon-client.js'
import { type GlobalOptions, resolveDataDir, viaDaemonOrStore } from '../context.js'
import { type CliIo, EXIT, ExitWith, formatTable, printJson } from '../output.js'

const FORMATS = ['generic', 'slack', 'discord', 'ntfy'] as const
const FINAL = new Set(['delivered', 'failed'])
/** Its first attempt is over: delivered, failed, or back to pending for a retry (not while `sending`). */
const attempted = (delivery: DeliveryView) =>
  FINAL.has(delivery.status) || (delivery.status === 'pending' && delivery.attempts > 0)

function splitList(value: string, previous: string[] = []): string[] {
  return [
    ...previous,
    ...value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean),
  ]
}

export function registerNotifyCommand(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  const notify = program
    .command('notify')
    .description('notification channels: webhooks (generic, Slack, Discord, ntfy) and Web Push')

  const channels = () =>
    viaDaemonOrStore<ChannelView[]>(
      io,
      globals(),
      { method: 'GET', route: '/api/notifications/channels' },
      (runtime) => runtime.notifications.list(runtime.owner.id),
    )

  async function channelId(nameOrId: string): Promise<string> {
    const all = await channels()
    const found = all.find((channel) => channel.id === nameOrId || channel.name === nameOrId)
    if (!found)
      throw new AppError('not_found', `no notification channel ${nameOrId}`, {
        hint: all.length ? 'see hangar notify list' : 'add one with hangar notify add webhook URL',
      })
    return found.id
  }

  async function projectIds(names: string[]): Promise<string[]> {
    const projects = await viaDaemonOrStore<Project[]>(
      io,
      globals(),
      { method: 'GET', route: '/api/projects' },
      (runtime) => runtime.projects.list(runtime.owner.id),
    )
    return names.map((name) => {
      const project = projects.find((candidate) => candidate.id === name || candidate.name === name)
      if (!project)
        throw new AppError('not_found', `no project ${name}`, { hint: 'see hangar projects list' })
      return project.id
    })
  }

  notify
    .command('add')
    .description('add a webhook channel; its signing secret is printed once')
    .argument('<type>', 'webhook (Web Push is added from the web UI, by the browser that receives it)')
    .argument('<url>', 'where to POST')
    .option('--format <format>', `body shape: ${FORMATS.join(' | ')}`, 'generic')
    .option(
      '--events <events>',
      `comma-separated: ${NOTIFICATION_EVENTS.join(', ')} (default: all)`,
      splitList,
    )
    .option('--project <project>', 'only runs of this project (name or id; repeatable)', splitList)
    .option('--name <name>', 'a name for the channel (default: the URL host)')
    .option('--json', 'print JSON')
    .action(
      async (
        type: string,
        url: string,
        options: { format: string; events?: string[]; project?: string[]; name?: string; json?: boolean },
      ) => {
        if (type !== 'webhook')
          throw new AppError('usage', `cannot add a ${type} channel here`, {
            hint: 'hangar notify add webhook URL; Web Push is turned on in the web UI (Settings → Notifications)',
          })
        if (!(FORMATS as readonly string[]).includes(options.format))
          throw new AppError('usage', `unknown format ${options.format}`, {
            hint: `one of ${FORMATS.join(', ')}`,
          })
        const unknown = options.events?.find(
          (event) => !(NOTIFICATION_EVENTS as readonly string[]).includes(event),
        )
        if (unknown)
          throw new AppError('usage', `unknown event ${unknown}`, {
            hint: `one of ${NOTIFICATION_EVENTS.join(', ')}`,
          })
        const request: NewChannelRequest = {
          type: 'webhook',
          url,
          format: options.format as NewChannelRequest['format'],
          ...(options.name && { name: options.name }),
          ...(options.events && { events: options.events as NewChannelRequest['events'] }),
          ...(options.project && { projectIds: await projectIds(options.project) }),
        }
        const created = await viaDaemonOrStore<ChannelView & { secret?: string }>(
          io,
          globals(),
          { method: 'POST', route: '/api/notifications/channels', body: request },
          (runtime) => runtime.notifications.create(runtime.owner.id, request),
        )
        if (options.json) return printJson(io, created)
        io.stdout.write(`Added channel ${created.name} (${created.format}) as ${created.id}\n`)
        if (created.secret)
          io.stdout.write(
            `Signing secret (shown once; verify X-Hangar-Signature-256 = sha256=HMAC-SHA256(body)):\n${created.secret}\n`,
          )
      },
    )

  notify
    .command('list')
    .description('your notification channels')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const list = await channels()
      if (options.json) return printJson(io, list)
      if (list.length === 0) {
        io.stdout.write('No channels yet: hangar notify add webhook URL, or turn on Web Push in the web UI\n')
        return
      }
      io.stdout.write(
        formatTable(
          ['ID', 'NAME', 'FORMAT', 'EVENTS', 'PROJECTS', 'URL'],
          list.map((channel) => [
            channel.id,
            channel.name,
            channel.format,
            channel.events.join(','),
            channel.projectIds?.join(',') ?? 'all',
            channel.url,
          ]),
        ),
      )
    })

  notify
    .command('remove')
    .description('remove a channel (its queued deliveries go with it)')
    .argument('<channel>', 'its id or name')
    .action(async (nameOrId: string) => {
      const id = await channelId(nameOrId)
      await viaDaemonOrStore(
        io,
        globals(),
        { method: 'DELETE', route: `/api/notifications/channels/${encodeURIComponent(id)}` },
        (runtime) => runtime.notifications.remove(runtime.owner.id, id),
      )
      io.stdout.write(`Removed channel ${id}\n`)
    })

  const log = (id: string, limit = 50) =>
    viaDaemonOrStore<DeliveryView[]>(
      io,
      globals(),
      {
        method: 'GET',
        route: `/api/notifications/channels/${encodeURIComponent(id)}/deliveries?limit=${limit}`,
      },
      (runtime) => runtime.notifications.deliveries(runtime.owner.id, id, limit),
    )

  notify
    .command('test')
    .description('send a test notification and wait for its outcome (a running daemon sends it)')
    .argument('<channel>', 'its id or name')
    .option('--json', 'print JSON')
    .action(async (nameOrId: string, options: { json?: boolean }) => {
      const id = await channelId(nameOrId)
      let delivery = await viaDaemonOrStore<DeliveryView>(
        io,
        globals(),
        { method: 'POST', route: `/api/notifications/channels/${encodeURIComponent(id)}/test` },
        (runtime) => runtime.notifications.test(runtime.owner.id, id),
      )
      if (await connectDaemon(resolveDataDir(globals(), io))) {
        // The first attempt's outcome: delivered, failed, or waiting for its retry (bounded wait).
        for (let tries = 0; tries < 150 && !attempted(delivery); tries++) {
          await new Promise((resolve) => setTimeout(resolve, 100))
          delivery = (await log(id)).find((candidate) => candidate.id === delivery.id) ?? delivery
        }
      }
      if (options.json) return printJson(io, delivery)
      const outcome =
        delivery.status === 'delivered'
          ? `delivered (HTTP ${delivery.lastStatusCode})`
          : delivery.attempts === 0
            ? 'queued; the daemon sends it (start it with hangar up)'
            : `${delivery.status} after ${delivery.attempts} attempt(s): ${delivery.lastError ?? ''}`
      io.stdout.write(`Test ${delivery.id}: ${outcome}\n`)
      if (delivery.status === 'failed') throw new ExitWith(EXIT.failed)
    })

  notify
    .command('log')
    .description("a channel's deliveries, newest first")
    .argument('<channel>', 'its id or name')
    .option('--limit <n>', 'how many', (value) => Number.parseInt(value, 10), 50)
    .option('--json', 'print JSON')
    .action(async (nameOrId: string, options: { limit: number; json?: boolean }) => {
      const deliveries = await log(await channelId(nameOrId), options.limit)
      if (options.json) return printJson(io, deliveries)
      if (deliveries.length === 0) {
        io.stdout.write('No deliveries yet\n')
        return
      }
      io.stdout.write(
        formatTable(
          ['DELIVERY', 'EVENT', 'STATUS', 'ATTEMPTS', 'HTTP', 'CREATED', 'ERROR'],
          deliveries.map((delivery) => [
            delivery.id,
            delivery.event,
            delivery.status,
            String(delivery.attempts),
            delivery.lastStatusCode === null ? '' : String(delivery.lastStatusCode),
            delivery.createdAt,
            delivery.lastError ?? '',
          ]),
        ),
      )
    })
}
