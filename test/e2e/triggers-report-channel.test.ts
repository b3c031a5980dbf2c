// A trigger's report to a notification channel end to end, on a daemon in this process (SQLite, its run
// scheduler and delivery queue started, the built-in agent on the mock model): a signed inbound delivery
// starts a run, and when the run ends its report arrives at a loopback webhook receiver that verifies the
// channel's HMAC — event `trigger.report` with the trigger, status, summary, diff stat and link. A member
// naming the owner's channel id gets the same 404 as for a channel that does not exist.
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../src/core/api-types.js'
import { signBody } from '../../src/triggers/webhook-signature.js'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { gitRepo, type InProcessDaemon, startInProcessDaemon } from '../helpers/in-process-daemon.js'
import { startWebhookReceiver } from '../helpers/notification-receivers.js'
import { STORE_ENGINES } from '../helpers/store-engines.js'

describe('trigger reports to a notification channel', { timeout: 180_000 }, () => {
  const engine = STORE_ENGINES.find((candidate) => candidate.name === 'sqlite')!
  let mock: MockModelServer
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>
  let daemon: InProcessDaemon
  let project: Project

  beforeAll(async () => {
    mock = await startMockModelServer()
    receiver = await startWebhookReceiver()
    daemon = await startInProcessDaemon(engine, 'hangar-triggers-report-', {
      configText: 'notifications: { allowPrivateNetworks: true }',
      env: { ANTHROPIC_API_KEY: 'sk-ant-test-report-0123456789', ANTHROPIC_BASE_URL: mock.url },
    })
    daemon.runtime.scheduler.start()
    daemon.runtime.notifications.start(daemon.url)
    const directory = path.join(daemon.root, 'widgets')
    await mkdir(directory)
    gitRepo(directory)
    const added = await daemon.api<Project>('POST', '/api/projects', { path: directory })
    expect(added.status, JSON.stringify(added.json)).toBe(201)
    project = added.json
  })
  afterAll(async () => {
    await daemon?.runtime.scheduler.stop()
    await daemon?.close()
    await receiver?.close()
    await mock?.close()
  })

  it('sends the signed report to the channel when the triggered run ends', async () => {
    // The channel wants approvals only: the trigger naming it is what counts for its report.
    const channel = await daemon.api<{ id: string; secret: string }>('POST', '/api/notifications/channels', {
      type: 'webhook',
      url: `${receiver.url}/reports`,
      events: ['approval.requested'],
    })
    expect(channel.status, JSON.stringify(channel.json)).toBe(201)
    receiver.setSecret(channel.json.secret)
    const created = await daemon.api<{ id: string; url: string; secret: string }>('POST', '/api/triggers', {
      name: 'deploys',
      kind: 'webhook',
      projectId: project.id,
      agent: 'builtin',
      prompt: 'Deploy {{service}}',
      report: { type: 'channel', channelId: channel.json.id },
    })
    expect(created.status, JSON.stringify(created.json)).toBe(201)
    const body = JSON.stringify({ service: 'api' })
    const response = await fetch(`${daemon.url}${created.json.url}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-hangar-signature-256': signBody(created.json.secret, body),
        'x-hangar-delivery': 'r-1',
        'x-hangar-event': 'deploy',
      },
      body,
    })
    const accepted = (await response.json()) as { fired: boolean; runId: string }
    expect(response.status, JSON.stringify(accepted)).toBe(202)
    expect(accepted.fired).toBe(true)

    // The receiver answers 401 unless the HMAC over the raw body matches the channel's secret.
    const [arrived] = await receiver.waitFor(1, 120_000)
    expect(arrived!.headers['x-hangar-event']).toBe('trigger.report')
    expect(arrived!.headers['x-hangar-delivery']).toMatch(/^ndl_/)
    expect(arrived!.json).toMatchObject({
      event: 'trigger.report',
      trigger: 'deploys',
      triggerId: created.json.id,
      runId: accepted.runId,
      status: 'succeeded',
      projectId: project.id,
      project: project.name,
      agent: 'builtin',
      summary: expect.stringContaining('mock reply to: Deploy api') as unknown,
      diffStat: { files: 0, created: 0, modified: 0, deleted: 0 },
      url: `${daemon.url}/runs/${accepted.runId}`,
    })
    // The channel's delivery log lists it (marked delivered once the receiver's answer is in).
    await daemon.runtime.notifications.settled()
    const log = await daemon.api<{ id: string; event: string; status: string }[]>(
      'GET',
      `/api/notifications/channels/${channel.json.id}/deliveries`,
    )
    expect(log.json.map((delivery) => [delivery.id, delivery.event, delivery.status])).toEqual([
      [arrived!.headers['x-hangar-delivery'], 'trigger.report', 'delivered'],
    ])
    // The fire records the report as sent (just after it was queued).
    for (;;) {
      const fires = await daemon.api<{ fires: { runId: string; reportStatus: string | null }[] }>(
        'GET',
        `/api/triggers/${created.json.id}/fires`,
      )
      expect(fires.json.fires[0]?.runId).toBe(accepted.runId)
      if (fires.json.fires[0]?.reportStatus === 'sent') break
      expect(fires.json.fires[0]?.reportStatus).toBe('sending')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  })

  it("answers a member naming another user's channel with the 404 of a nonexistent one", async () => {
    const owners = await daemon.api<{ id: string }>('POST', '/api/notifications/channels', {
      type: 'webhook',
      url: `${receiver.url}/owner`,
    })
    expect(owners.status).toBe(201)
    const member = await daemon.runtime.store.users.create({ name: 'mallory', role: 'member' })
    const token = await daemon.tokenFor(member)
    expect((await daemon.api('PUT', `/api/projects/${project.id}/members/${member.id}`)).status).toBe(200)
    const attempt = (channelId: string) =>
      daemon.api<{ error: { code: string; message: string } }>(
        'POST',
        '/api/triggers',
        {
          name: `steal-${channelId.slice(-6)}`,
          kind: 'schedule',
          cron: '0 3 * * *',
          projectId: project.id,
          agent: 'builtin',
          prompt: 'hi',
          report: { type: 'channel', channelId },
        },
        token,
      )
    const theirs = await attempt(owners.json.id)
    const none = await attempt('nch_not_a_channel')
    expect(theirs.status).toBe(404)
    expect(none.status).toBe(404)
    expect(JSON.stringify(theirs.json).replaceAll(owners.json.id, 'ID')).toBe(
      JSON.stringify(none.json).replaceAll('nch_not_a_channel', 'ID'),
    )
    expect(
      (await daemon.api<{ triggers: unknown[] }>('GET', '/api/triggers', undefined, token)).json.triggers,
    ).toEqual([])
  })
})
