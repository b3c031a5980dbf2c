// Notifications end to end on a daemon runtime in this process (API, scheduler, built-in agent on the mock
// model), with no browser open: a pending approval reaches a signed generic webhook, a Slack-shaped one
// and a Web Push subscription (VAPID checked, payload decrypted by the fake push service) within 5 s; the
// run's end follows; a failing channel is retried and logged while the run goes on untouched; a member
// cannot point a channel at a project not granted to them, nor see another user's channels.
import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/core/config.js'
import { createRuntime, type Runtime } from '../../src/main.js'
import { generateKeyEntry } from '../../src/store/keyring.js'
import type { RunningServer } from '../../src/server/listen.js'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { createApiClient } from '../helpers/api-client.js'
import { cleanEnv } from '../helpers/hangar-cli.js'
import { gitRepo } from '../helpers/in-process-daemon.js'
import {
  makeSubscription,
  startPushService,
  startWebhookReceiver,
} from '../helpers/notification-receivers.js'
import { freshPostgresUrl, makeTempDir, STORE_ENGINES } from '../helpers/store-engines.js'

interface Channel {
  id: string
  secret?: string
  url: string
}
interface Delivery {
  id: string
  event: string
  status: string
  attempts: number
  lastError: string | null
  lastStatusCode: number | null
}
interface RunEventJson {
  type: string
  ts: string
  actionId?: string
}

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!
}

describe.each(STORE_ENGINES)('notifications ($name)', (engine) => {
  let mock: MockModelServer
  let root: string
  let runtime: Runtime
  let server: RunningServer
  let token: string
  let webhook: Awaited<ReturnType<typeof startWebhookReceiver>>
  let slack: Awaited<ReturnType<typeof startWebhookReceiver>>
  let push: Awaited<ReturnType<typeof startPushService>>
  let daemonDir: string
  const { api, waitForStatus } = createApiClient(() => ({ url: server.url, token }))

  beforeAll(async () => {
    mock = await startMockModelServer()
    webhook = await startWebhookReceiver()
    slack = await startWebhookReceiver()
    push = await startPushService()
    root = await makeTempDir('hangar-notify-')
    daemonDir = path.join(root, 'daemon-dir')
    await mkdir(daemonDir)
    gitRepo(daemonDir)
    runtime = await createRuntime({
      dataDir: path.join(root, 'data'),
      databaseUrl: engine.name === 'postgres' ? await freshPostgresUrl({ migrated: true }) : undefined,
      config: parseConfig('notifications:\n  allowPrivateNetworks: true\n'),
      projectDir: daemonDir,
      env: cleanEnv({
        PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
        HOME: root,
        ANTHROPIC_API_KEY: 'sk-ant-test-notify-0123456789',
        ANTHROPIC_BASE_URL: mock.url,
        // PostgreSQL keeps no key file: the instance keyring comes from the environment.
        HANGAR_SECRET_KEYS: generateKeyEntry('test'),
      }),
      logLevel: 'silent',
      notificationDelivery: { baseDelayMs: 100, pollMs: 100, maxAttempts: 4 },
    })
    server = await runtime.listen({ host: '127.0.0.1', port: 0 })
    runtime.scheduler.start()
    runtime.notifications.start(server.url)
    token = (
      await runtime.auth.createToken('system', runtime.owner.id, { name: 'notify', scopes: ['approve'] })
    ).token
  })

  afterAll(async () => {
    await runtime?.scheduler.stop()
    await server?.close()
    await runtime?.close()
    await Promise.all([mock?.close(), webhook?.close(), slack?.close(), push?.close()])
    if (root) await rm(root, { recursive: true, force: true })
  })

  async function addChannels(events?: string[]) {
    const generic = await api<Channel>('POST', '/api/notifications/channels', {
      type: 'webhook',
      url: `${webhook.url}/hook`,
      ...(events && { events }),
    })
    expect(generic.status, JSON.stringify(generic.json)).toBe(201)
    expect(generic.json.secret).toMatch(/^hns_/)
    webhook.setSecret(generic.json.secret!)
    const slackChannel = await api<Channel>('POST', '/api/notifications/channels', {
      type: 'webhook',
      format: 'slack',
      url: `${slack.url}/services/T0/B0/x`,
      ...(events && { events }),
    })
    expect(slackChannel.status).toBe(201)
    slack.setSecret(slackChannel.json.secret!)
    const key = await api<{ publicKey: string }>('GET', '/api/notifications/vapid-key')
    expect(key.json.publicKey).toMatch(/^[A-Za-z0-9_-]{87}$/)
    push.setVapidKey(key.json.publicKey)
    const subscription = push.subscribe()
    const pushChannel = await api<Channel>('POST', '/api/notifications/channels', {
      type: 'webpush',
      subscription: subscription.json,
      ...(events && { events }),
    })
    expect(pushChannel.status, JSON.stringify(pushChannel.json)).toBe(201)
    expect(pushChannel.json.secret).toBeUndefined()
    return { generic: generic.json, slack: slackChannel.json, push: pushChannel.json, subscription }
  }

  const eventsOf = async (runId: string) =>
    (await runtime.store
      .forUser(runtime.owner.id)
      .runs.listEvents(runId, { afterSeq: 0, limit: 500 })) as unknown as RunEventJson[]

  it('sends a pending approval as a signed webhook, a Slack message and a Web Push within 5 s', async () => {
    const channels = await addChannels()
    // Secrets never come back: not in the list, not the push keys.
    const listed = await api<unknown[]>('GET', '/api/notifications/channels')
    const text = JSON.stringify(listed.json)
    expect(text).not.toContain(channels.generic.secret)
    expect(text).not.toContain(channels.subscription.json.keys.auth)
    expect(text).not.toContain(channels.subscription.json.endpoint)

    const run = await api<{ id: string }>('POST', '/api/runs', {
      agent: 'builtin',
      prompt: 'Please create a file. FILE=notify.txt',
      cwd: daemonDir,
    })
    expect(run.status).toBe(201)
    await waitForStatus(run.json.id, ['awaiting_confirmation'])
    const [hook] = await webhook.waitFor(1)
    const [slackMessage] = await slack.waitFor(1)
    const [pushed] = await push.waitFor(1)
    const approval = (await eventsOf(run.json.id)).find((event) => event.type === 'approval-required')!
    const requestedAt = Date.parse(approval.ts)
    for (const arrival of [hook!, slackMessage!, pushed!]) expect(arrival.at - requestedAt).toBeLessThan(5000)

    const body = hook!.json as Record<string, string>
    expect(body).toMatchObject({
      event: 'approval.requested',
      runId: run.json.id,
      actionId: approval.actionId,
      agent: 'builtin',
    })
    expect(body.summary).toContain('notify.txt')
    expect(body.delivery).toBe(hook!.headers['x-hangar-delivery'])
    expect(hook!.headers['x-hangar-event']).toBe('approval.requested')
    // It opens the approval's card in its conversation.
    const conversationId = (await api<{ conversationId: string }>('GET', `/api/runs/${run.json.id}`)).json
      .conversationId
    expect(body.conversationId).toBe(conversationId)
    expect(body.url).toBe(`${server.url}/conversations/${conversationId}?action=${approval.actionId}`)
    // A link is never a credential.
    expect(body.url).not.toMatch(/token|hgr_|session/)
    expect((slackMessage!.json as { text: string }).text).toContain('notify.txt')
    expect(pushed!.message).toMatchObject({
      event: 'approval.requested',
      url: body.url,
      tag: approval.actionId,
    })
    expect(String(pushed!.message.body)).toContain('notify.txt')
    expect(pushed!.claims.sub).toBe('mailto:hangar@localhost')

    // Approve (a signed-in user with the approve scope): the continuation finishes and that is told too.
    const decided = await api<{ continuation: { id: string } }>(
      'POST',
      `/api/actions/${approval.actionId}/confirm`,
    )
    expect(decided.status).toBe(200)
    await waitForStatus(decided.json.continuation.id, ['succeeded'])
    const [, finished] = await webhook.waitFor(2)
    expect((finished!.json as { event: string }).event).toBe('run.finished')
    const [, pushedEnd] = await push.waitFor(2)
    expect(pushedEnd!.message.event).toBe('run.finished')

    const log = await api<Delivery[]>('GET', `/api/notifications/channels/${channels.generic.id}/deliveries`)
    expect(log.json.map((delivery) => [delivery.event, delivery.status])).toEqual([
      ['run.finished', 'delivered'],
      ['approval.requested', 'delivered'],
    ])
    for (const channel of [channels.generic, channels.slack, channels.push])
      await api('DELETE', `/api/notifications/channels/${channel.id}`)
  })

  it('measures delivery latency over 20 approvals (webhook and push)', async () => {
    const before = { hook: webhook.received.length, push: push.received.length }
    const channels = await addChannels(['approval.requested'])
    const runs: string[] = []
    for (let index = 0; index < 20; index++) {
      const run = await api<{ id: string }>('POST', '/api/runs', {
        agent: 'builtin',
        prompt: `Please create a file. FILE=bench-${index}.txt`,
        cwd: daemonDir,
      })
      runs.push(run.json.id)
    }
    await webhook.waitFor(before.hook + 20, 120_000)
    await push.waitFor(before.push + 20, 120_000)
    const latencies: { hook: number[]; push: number[] } = { hook: [], push: [] }
    for (const runId of runs) {
      const approval = (await eventsOf(runId)).find((event) => event.type === 'approval-required')!
      const requestedAt = Date.parse(approval.ts)
      const hook = webhook.received.find(
        (request) => (request.json as { actionId?: string }).actionId === approval.actionId,
      )!
      const pushed = push.received.find((request) => request.message.tag === approval.actionId)!
      latencies.hook.push(hook.at - requestedAt)
      latencies.push.push(pushed.at - requestedAt)
    }
    const summary = Object.fromEntries(
      Object.entries(latencies).map(([name, values]) => {
        const sorted = [...values].sort((a, b) => a - b)
        return [name, { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), n: sorted.length }]
      }),
    )
    console.log(`notification latency ms (approval-required stored → received): ${JSON.stringify(summary)}`)
    expect(summary.hook!.p99).toBeLessThan(5000)
    expect(summary.push!.p99).toBeLessThan(5000)
    for (const channel of [channels.generic, channels.slack, channels.push])
      await api('DELETE', `/api/notifications/channels/${channel.id}`)
  }, 180_000)

  it('retries a failing channel with backoff and logs it, without touching the run', async () => {
    const failing = await startWebhookReceiver()
    try {
      failing.failNext(2, 503)
      const created = await api<Channel>('POST', '/api/notifications/channels', {
        type: 'webhook',
        url: failing.url,
        events: ['run.finished', 'run.failed'],
      })
      failing.setSecret(created.json.secret!)
      const dead = await api<Channel>('POST', '/api/notifications/channels', {
        type: 'webhook',
        // Nothing listens there: every attempt fails to connect.
        url: 'http://127.0.0.1:9/hook',
        events: ['run.finished'],
      })
      const run = await api<{ id: string }>('POST', '/api/runs', {
        agent: 'builtin',
        prompt: 'NOTOOL',
        cwd: daemonDir,
      })
      const ended = await waitForStatus(run.json.id, ['succeeded', 'failed'])
      expect(ended.status).toBe('succeeded')
      const [arrived] = await failing.waitFor(1)
      expect((arrived!.json as { event: string }).event).toBe('run.finished')
      const waitForLog = async (channelId: string, status: string) => {
        for (let tries = 0; tries < 300; tries++) {
          const log = await api<Delivery[]>('GET', `/api/notifications/channels/${channelId}/deliveries`)
          if (log.json[0]?.status === status) return log.json[0]
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
        throw new Error(`channel ${channelId} never reached ${status}`)
      }
      expect(await waitForLog(created.json.id, 'delivered')).toMatchObject({
        attempts: 3,
        lastStatusCode: 200,
      })
      const failed = await waitForLog(dead.json.id, 'failed')
      expect(failed.attempts).toBe(4)
      expect(failed.lastError).toBeTruthy()
      // The run's own record knows nothing of it.
      const events = await eventsOf(run.json.id)
      expect(events.filter((event) => event.type === 'error')).toEqual([])
      expect((await api<{ status: string }>('GET', `/api/runs/${run.json.id}`)).json.status).toBe('succeeded')
      // `test` queues one more, visible in the log.
      const tested = await api<Delivery>('POST', `/api/notifications/channels/${created.json.id}/test`)
      expect(tested.status).toBe(202)
      await failing.waitFor(2)
      expect((failing.received[1]!.json as { event: string }).event).toBe('notification.test')
      await api('DELETE', `/api/notifications/channels/${created.json.id}`)
      await api('DELETE', `/api/notifications/channels/${dead.json.id}`)
    } finally {
      await failing.close()
    }
  })

  it('keeps a member to their own projects and channels', async () => {
    const projectDir = path.join(root, 'secret-project')
    await mkdir(projectDir)
    gitRepo(projectDir)
    const project = await api<{ id: string }>('POST', '/api/projects', { path: projectDir })
    expect(project.status).toBe(201)
    const member = await runtime.store.users.create({ name: 'mallory', role: 'member' })
    const memberToken = (await runtime.auth.createToken('system', member.id, { name: 'm' })).token
    const asMember = (method: string, route: string, body?: unknown) =>
      api<{ error?: { code: string } }>(method, route, body, memberToken)
    const refused = await asMember('POST', '/api/notifications/channels', {
      type: 'webhook',
      url: webhook.url,
      projectIds: [project.json.id],
    })
    expect(refused.status).toBe(404)
    expect(refused.json.error?.code).toBe('not_found')
    expect(await runtime.notifications.list(member.id)).toEqual([])
    // The owner's channel is not theirs to see, test, read or remove.
    const owners = await api<Channel>('POST', '/api/notifications/channels', {
      type: 'webhook',
      url: webhook.url,
    })
    for (const [method, route] of [
      ['POST', `/api/notifications/channels/${owners.json.id}/test`],
      ['GET', `/api/notifications/channels/${owners.json.id}/deliveries`],
      ['DELETE', `/api/notifications/channels/${owners.json.id}`],
    ] as const)
      expect((await asMember(method, route)).status).toBe(404)
    // Granted, the same request is fine.
    await api('PUT', `/api/projects/${project.json.id}/members/${member.id}`)
    const granted = await asMember('POST', '/api/notifications/channels', {
      type: 'webhook',
      url: webhook.url,
      projectIds: [project.json.id],
    })
    expect(granted.status).toBe(201)
    await api('DELETE', `/api/notifications/channels/${owners.json.id}`)
  })

  it('removes a Web Push channel whose subscription the push service says is gone', async () => {
    const key = await api<{ publicKey: string }>('GET', '/api/notifications/vapid-key')
    push.setVapidKey(key.json.publicKey)
    // Keys of a subscription the push service does not know (any more): it answers 404.
    const forgotten = makeSubscription(`${push.url}/push/forgotten`)
    const created = await api<Channel>('POST', '/api/notifications/channels', {
      type: 'webpush',
      subscription: forgotten.json,
    })
    expect(created.status).toBe(201)
    await api('POST', `/api/notifications/channels/${created.json.id}/test`)
    await expect
      .poll(
        async () =>
          (await api<Channel[]>('GET', '/api/notifications/channels')).json.map((channel) => channel.id),
        {
          timeout: 30_000,
        },
      )
      .not.toContain(created.json.id)
  })

  it('tells a channel limited to projects only about runs in them', async () => {
    const projectDir = path.join(root, 'limited-project')
    await mkdir(projectDir)
    gitRepo(projectDir)
    const project = await api<{ id: string }>('POST', '/api/projects', { path: projectDir })
    const everywhere = await startWebhookReceiver()
    const limited = await startWebhookReceiver()
    try {
      const all = await api<Channel>('POST', '/api/notifications/channels', {
        type: 'webhook',
        url: everywhere.url,
        events: ['run.finished'],
      })
      everywhere.setSecret(all.json.secret!)
      const only = await api<Channel>('POST', '/api/notifications/channels', {
        type: 'webhook',
        url: limited.url,
        events: ['run.finished'],
        projectIds: [project.json.id],
      })
      limited.setSecret(only.json.secret!)
      // A run outside that project: told to the first channel only.
      const outside = await api<{ id: string }>('POST', '/api/runs', {
        agent: 'builtin',
        prompt: 'NOTOOL',
        cwd: daemonDir,
      })
      await waitForStatus(outside.json.id, ['succeeded'])
      await everywhere.waitFor(1)
      await runtime.notifications.settled()
      expect(limited.received).toEqual([])
      // A run in it: told to both.
      const inside = await api<{ id: string }>('POST', '/api/runs', {
        agent: 'builtin',
        prompt: 'NOTOOL',
        projectId: project.json.id,
        isolate: true,
      })
      expect(inside.status, JSON.stringify(inside.json)).toBe(201)
      await waitForStatus(inside.json.id, ['succeeded'])
      const [told] = await limited.waitFor(1)
      expect(told!.json).toMatchObject({
        event: 'run.finished',
        runId: inside.json.id,
        projectId: project.json.id,
      })
      await everywhere.waitFor(2)
      for (const channel of [all.json, only.json])
        await api('DELETE', `/api/notifications/channels/${channel.id}`)
    } finally {
      await Promise.all([everywhere.close(), limited.close()])
    }
  })
})
