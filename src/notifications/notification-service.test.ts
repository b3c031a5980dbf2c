// The notification service's address rule and secrets, on a store of each engine: a webhook or push
// target on loopback or a private network is refused unless the operator allowed it — by its literal
// address when the channel is made, and by what its name resolves to when a delivery connects (the
// provider URLs' guard) — and a webhook's secret is given once, stored only in the vault.
import type { LookupAddress } from 'node:dns'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import { startWebhookReceiver } from '../../test/helpers/notification-receivers.js'
import { parseConfig } from '../core/config.js'
import { AppError } from '../core/errors.js'
import { silentLogger } from '../core/logger.js'
import { createProjectService } from '../projects/project-service.js'
import { createGuardedFetch } from '../providers/guarded-connection.js'
import { generateKeyEntry, parseKeyring } from '../store/keyring.js'
import { createVault } from '../store/vault.js'
import { createNotificationService, type NotificationService } from './notification-service.js'

describe.each(STORE_ENGINES)('notification service ($name)', (engine) => {
  let testStore: TestStore
  let service: NotificationService | undefined
  let userId: string
  // One instance key for every service of a test, as daemons sharing a store share their keyring.
  const vault = createVault(parseKeyring(generateKeyEntry('test')))

  beforeEach(async () => {
    testStore = await engine.open()
    userId = (await testStore.store.users.create({ name: 'alice', role: 'owner' })).id
  })
  afterEach(async () => {
    await service?.stop()
    service = undefined
    await testStore.dispose()
  })

  function make(options: { allowPrivate: boolean; resolveTo?: string }) {
    // A name that resolves to a loopback address, as a DNS answer (or a rebinding) could make it.
    const resolve = (
      _hostname: string,
      _options: unknown,
      callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
    ) => callback(null, [{ address: options.resolveTo ?? '127.0.0.1', family: 4 }])
    service = createNotificationService({
      store: testStore.store,
      vault,
      projects: createProjectService({ store: testStore.store, dataDir: testStore.dataDir }),
      config: parseConfig(`notifications:\n  allowPrivateNetworks: ${options.allowPrivate}\n`),
      log: silentLogger,
      node: 'test',
      delivery: { baseDelayMs: 50, pollMs: 50, maxAttempts: 1 },
      fetch: createGuardedFetch({ allowPrivate: options.allowPrivate }, resolve),
    })
    return service
  }

  it('refuses loopback, private and metadata targets when they are not allowed', async () => {
    const notifications = make({ allowPrivate: false })
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://10.1.2.3/hook',
      'http://[::1]/x',
      'http://localhost/x',
    ]) {
      const error = await notifications
        .create(userId, { type: 'webhook', url })
        .catch((caught: unknown) => caught)
      expect(error, url).toBeInstanceOf(AppError)
      expect((error as AppError).code).toBe('invalid_request')
      expect((error as AppError).hint).toContain('notifications.allowPrivateNetworks')
    }
    const metadata = await make({ allowPrivate: true })
      .create(userId, { type: 'webhook', url: 'http://169.254.169.254/latest' })
      .catch((caught: unknown) => caught)
    expect((metadata as AppError).code).toBe('invalid_request')
    const push = await notifications
      .create(userId, {
        type: 'webpush',
        subscription: { endpoint: 'http://127.0.0.1:9/push', keys: { p256dh: 'a', auth: 'b' } },
      })
      .catch((caught: unknown) => caught)
    expect((push as AppError).code).toBe('invalid_request')
  })

  it('checks the address a name resolves to when it connects, and logs the refusal', async () => {
    const receiver = await startWebhookReceiver()
    try {
      const notifications = make({ allowPrivate: false })
      const port = new URL(receiver.url).port
      // A public-looking name passes when the channel is made…
      const channel = await notifications.create(userId, {
        type: 'webhook',
        url: `http://hooks.example.test:${port}/hook`,
      })
      receiver.setSecret(channel.secret!)
      notifications.start('http://127.0.0.1:7456')
      await notifications.test(userId, channel.id)
      await notifications.settled()
      // …and is refused at the socket: it resolves to loopback.
      const [delivery] = await notifications.deliveries(userId, channel.id)
      expect(delivery).toMatchObject({ status: 'failed', attempts: 1 })
      expect(delivery!.lastError).toMatch(
        /hooks\.example\.test.*loopback or private.*notifications\.allowPrivateNetworks/,
      )
      expect(receiver.received).toEqual([])
    } finally {
      await receiver.close()
    }
  })

  it('keeps a queued delivery in the store until a sender starts (a restart loses nothing)', async () => {
    const receiver = await startWebhookReceiver()
    try {
      const queuing = make({ allowPrivate: true })
      const channel = await queuing.create(userId, { type: 'webhook', url: `${receiver.url}/later` })
      receiver.setSecret(channel.secret!)
      // Queued by a process that never sends (a `hangar run` without a daemon, or a daemon that stopped).
      const queued = await queuing.test(userId, channel.id)
      await queuing.stop()
      expect((await queuing.deliveries(userId, channel.id))[0]).toMatchObject({
        status: 'pending',
        attempts: 0,
      })
      const sending = make({ allowPrivate: true })
      sending.start('http://127.0.0.1:7456')
      const [arrived] = await receiver.waitFor(1)
      expect(arrived!.headers['x-hangar-delivery']).toBe(queued.id)
      await sending.settled()
      expect((await sending.deliveries(userId, channel.id))[0]).toMatchObject({
        status: 'delivered',
        attempts: 1,
      })
    } finally {
      await receiver.close()
    }
  })

  it('gives the webhook secret once and keeps only its envelope', async () => {
    const notifications = make({ allowPrivate: true })
    const created = await notifications.create(userId, {
      type: 'webhook',
      url: 'https://hooks.example.com/a',
    })
    expect(created.secret).toMatch(/^hns_[A-Za-z0-9_-]{43}$/)
    const [listed] = await notifications.list(userId)
    expect(JSON.stringify(listed)).not.toContain(created.secret)
    // A Slack-style URL is itself a credential: shown by its origin and first segment only.
    const slack = await notifications.create(userId, {
      type: 'webhook',
      format: 'slack',
      url: 'https://hooks.slack.example/services/T000/B000/XXXXSECRET',
    })
    expect(slack.url).toBe('https://hooks.slack.example/services/…')
    expect(JSON.stringify(await notifications.list(userId))).not.toContain('XXXXSECRET')
    const [row] = await testStore.store.notificationChannels.listChannels(userId)
    expect(row!.secretEnvelope).toMatch(/^hv1\./)
    expect(row!.secretEnvelope).not.toContain(created.secret)
    expect(await notifications.list('usr_someone_else')).toEqual([])
  })
})
