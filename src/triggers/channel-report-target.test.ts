// A trigger's report to a notification channel, through the real trigger and notification services on a
// store of each engine, to a loopback receiver that checks the HMAC: the report arrives signed as event
// `trigger.report` even when the channel's own event choice leaves run events out, once per fire; a user
// can name only their own channel — another user's channel is refused like a nonexistent one, when the
// trigger is made and again when it reports (a trigger stored around the check sends nothing).
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startWebhookReceiver } from '../../test/helpers/notification-receivers.js'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import { parseConfig } from '../core/config.js'
import { AppError } from '../core/errors.js'
import { silentLogger } from '../core/logger.js'
import { createNotificationService, type NotificationService } from '../notifications/notification-service.js'
import { createProjectService } from '../projects/project-service.js'
import { generateKeyEntry, parseKeyring } from '../store/keyring.js'
import { createVault } from '../store/vault.js'
import { createChannelReportTarget } from './channel-report-target.js'
import type { TriggerFirer } from './trigger-fire.js'
import { createTriggerService, type TriggerService } from './trigger-service.js'

describe.each(STORE_ENGINES)('trigger reports to a channel ($name)', (engine) => {
  let testStore: TestStore
  let notifications: NotificationService
  let triggers: TriggerService
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>
  let alice: string
  let bob: string
  const vault = createVault(parseKeyring(generateKeyEntry('test')))

  beforeEach(async () => {
    testStore = await engine.open()
    const { store } = testStore
    alice = (await store.users.create({ name: 'alice', role: 'owner' })).id
    bob = (await store.users.create({ name: 'bob', role: 'member' })).id
    receiver = await startWebhookReceiver()
    const config = parseConfig('notifications:\n  allowPrivateNetworks: true\n')
    notifications = createNotificationService({
      store,
      vault,
      projects: createProjectService({ store, dataDir: testStore.dataDir }),
      config,
      log: silentLogger,
      node: 'test',
      delivery: { baseDelayMs: 50, pollMs: 50, maxAttempts: 2 },
    })
    notifications.start('http://127.0.0.1:7456')
    triggers = createTriggerService({
      store,
      // Where a trigger's runs go is not under test here: no project, and nothing fires by itself.
      projects: {
        forNewConversation: () => Promise.resolve(null),
        forConversation: () => Promise.resolve(null),
      },
      vaultState: { vault },
      config,
      firer: {} as TriggerFirer,
      reportTargets: [createChannelReportTarget({ notifications })],
      log: silentLogger,
    })
  })
  afterEach(async () => {
    await notifications.stop()
    await receiver.close()
    await testStore.dispose()
  })

  async function channelOf(userId: string, events?: ('approval.requested' | 'run.finished')[]) {
    const channel = await notifications.create(userId, {
      type: 'webhook',
      url: `${receiver.url}/hook`,
      ...(events && { events }),
    })
    receiver.setSecret(channel.secret!)
    return channel
  }

  const schedule = (name: string, channelId: string) => ({
    name,
    kind: 'schedule' as const,
    cron: '0 3 * * *',
    prompt: 'nightly',
    report: { type: 'channel' as const, channelId },
  })

  /** A fire of the trigger that started `runId` (as the firer records it). */
  async function fired(triggerId: string, runId: string) {
    const fire = await testStore.store.triggers.claimFire(triggerId, `manual:${runId}`, 'manual')
    await testStore.store.triggers.updateFire(fire!.id, { status: 'started', runId })
    return fire!
  }

  it('sends the report signed as trigger.report, whatever events the channel chose, once per fire', async () => {
    // The channel wants approvals only: naming it in the trigger is the choice that counts.
    const channel = await channelOf(alice, ['approval.requested'])
    const trigger = await triggers.create(alice, 'user:alice', schedule('nightly', channel.id))
    expect(trigger.report).toEqual({ type: 'channel', channelId: channel.id })
    const fire = await fired(trigger.id, 'run_report_1')
    await triggers.runEnded('run_report_1')
    // A second end of the same run (another daemon, a replay) adds nothing.
    await triggers.runEnded('run_report_1')
    const [arrived] = await receiver.waitFor(1)
    await notifications.settled()
    expect(receiver.received).toHaveLength(1)
    expect(arrived!.headers['x-hangar-event']).toBe('trigger.report')
    expect(arrived!.json).toMatchObject({
      event: 'trigger.report',
      trigger: 'nightly',
      triggerId: trigger.id,
      fireId: fire.id,
      runId: 'run_report_1',
      status: 'unknown',
      diffStat: { files: 0, created: 0, modified: 0, deleted: 0 },
      url: 'http://127.0.0.1:7456/runs/run_report_1',
    })
    const [delivery] = await notifications.deliveries(alice, channel.id)
    expect(delivery).toMatchObject({ event: 'trigger.report', status: 'delivered' })
    expect(arrived!.headers['x-hangar-delivery']).toBe(delivery!.id)
    expect((await triggers.fires(alice, trigger.id))[0]).toMatchObject({ reportStatus: 'sent' })
  })

  it("refuses another user's channel like a nonexistent one, at creation and at report time", async () => {
    const alicesChannel = await channelOf(alice)
    const error = (channelId: string) =>
      triggers
        .create(bob, 'user:bob', schedule(`t-${channelId}`, channelId))
        .catch((caught: unknown) => caught)
    const theirs = (await error(alicesChannel.id)) as AppError
    const none = (await error('nch_does_not_exist')) as AppError
    expect(theirs).toBeInstanceOf(AppError)
    expect(theirs.code).toBe('not_found')
    expect(none.code).toBe('not_found')
    expect(theirs.message.replace(alicesChannel.id, 'ID')).toBe(
      none.message.replace('nch_does_not_exist', 'ID'),
    )
    expect(await testStore.store.triggers.listForUser(bob)).toEqual([])

    // A trigger stored around the creation check (or made before a channel changed hands) is checked again.
    const stored = await testStore.store.triggers.create({
      userId: bob,
      name: 'around',
      kind: 'schedule',
      cron: '0 3 * * *',
      timezone: 'UTC',
      missed: 'skip',
      projectId: null,
      agent: null,
      prompt: 'p',
      conversationId: null,
      filter: null,
      report: { type: 'channel', channelId: alicesChannel.id },
      secretEnvelope: null,
    })
    await fired(stored.id, 'run_report_2')
    await triggers.runEnded('run_report_2')
    await notifications.settled()
    expect(receiver.received).toEqual([])
    expect(await notifications.deliveries(alice, alicesChannel.id)).toEqual([])
    expect((await triggers.fires(bob, stored.id))[0]).toMatchObject({
      reportStatus: 'failed',
      reportError: `no notification channel ${alicesChannel.id}`,
    })
  })

  it('records a failed report when the channel was removed since', async () => {
    const channel = await channelOf(alice)
    const trigger = await triggers.create(alice, 'user:alice', schedule('gone', channel.id))
    await notifications.remove(alice, channel.id)
    await fired(trigger.id, 'run_report_3')
    await triggers.runEnded('run_report_3')
    expect((await triggers.fires(alice, trigger.id))[0]).toMatchObject({ reportStatus: 'failed' })
    const missing = await triggers
      .create(alice, 'user:alice', {
        ...schedule('bad', channel.id),
        report: { type: 'channel', channelId: '' },
      })
      .catch((caught: unknown) => caught)
    expect((missing as AppError).code).toBe('invalid_request')
  })
})
