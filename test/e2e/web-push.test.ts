// Web Push in real Chromium against the built daemon: Settings → "Notify this browser" subscribes and
// registers the subscription; with no tab open, a built-in run's proposal is pushed (VAPID JWT checked,
// payload decrypted by the test's push service on loopback); its link, opened in a new tab of the same
// signed-in browser, shows that card, marked; Confirm there lets the run finish, and that is pushed too.
// Chromium's real PushManager.subscribe asks its vendor's push service, which is not on loopback: before
// any page script runs, subscribe/getSubscription are replaced by a stub that hands out a subscription
// whose endpoint is the test's push service and whose keys the test made. Everything else — the UI's
// permission request, its VAPID key, the service worker, the POST of subscription.toJSON() — is the real
// code. The service worker's own push handler gets the same message (DevTools' push delivery) and its
// notificationclick handler is run with the browser's windows stood in for. A subscription the browser
// made with another instance's key is replaced, not reused.
import { createECDH } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { BrowserContext, Page, Worker } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { createApiClient } from '../helpers/api-client.js'
import { screenshot } from '../helpers/browser.js'
import { createToken, type RunningDaemon } from '../helpers/hangar-cli.js'
import { startPushService } from '../helpers/notification-receivers.js'
import { startWebFixture, type WebFixture } from '../helpers/web-fixture.js'

interface StubState {
  subscribed: number
  unsubscribed: number
  userVisibleOnly: boolean | null
  applicationServerKey: string | null
}

/** The page's globals the stub touches (the test compiles without the DOM library). */
interface PageScope {
  __pushStub: StubState
  /** Makes the browser hold a subscription made earlier with another application server key. */
  __pushStubSeed(applicationServerKey: string): void
  PushManager: { prototype: Record<'subscribe' | 'getSubscription', unknown> }
}
type KeyInput = string | ArrayBuffer | ArrayBufferView | null | undefined

/**
 * Runs in every page before its scripts: PushManager hands out the given subscription (as a browser would
 * after its push service answered) and records what the page asked for.
 */
function stubPushManager(json: { endpoint: string; keys: { p256dh: string; auth: string } }): void {
  const scope = globalThis as unknown as PageScope
  const state: StubState = {
    subscribed: 0,
    unsubscribed: 0,
    userVisibleOnly: null,
    applicationServerKey: null,
  }
  scope.__pushStub = state
  const base64url = (bytes: Uint8Array) =>
    btoa(String.fromCharCode(...bytes))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '')
  const fromBase64url = (text: string) =>
    Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (char) => char.charCodeAt(0))
  let current: object | null = null
  const make = (applicationServerKey: ArrayBuffer | null) => ({
    endpoint: json.endpoint,
    expirationTime: null,
    options: { userVisibleOnly: true, applicationServerKey },
    getKey: (name: string) =>
      name === 'p256dh' || name === 'auth' ? fromBase64url(json.keys[name]).buffer : null,
    toJSON: () => ({ endpoint: json.endpoint, expirationTime: null, keys: { ...json.keys } }),
    unsubscribe: async () => {
      state.unsubscribed++
      current = null
      return true
    },
  })
  scope.__pushStubSeed = (key) => {
    current = make(fromBase64url(key).buffer)
  }
  scope.PushManager.prototype.getSubscription = async () => current
  scope.PushManager.prototype.subscribe = async (options?: {
    userVisibleOnly?: boolean
    applicationServerKey?: KeyInput
  }) => {
    const key = options?.applicationServerKey
    const bytes =
      key == null
        ? null
        : typeof key === 'string'
          ? fromBase64url(key)
          : key instanceof ArrayBuffer
            ? new Uint8Array(key)
            : new Uint8Array(key.buffer, key.byteOffset, key.byteLength)
    state.subscribed++
    state.userVisibleOnly = options?.userVisibleOnly ?? null
    state.applicationServerKey = bytes ? base64url(bytes) : null
    current = make(bytes ? (bytes.slice().buffer as ArrayBuffer) : null)
    return current
  }
}

/** The service worker's globals the checks touch. */
interface WorkerScope {
  registration: {
    getNotifications(filter?: {
      tag?: string
    }): Promise<{ title: string; body: string; tag: string; data: { url?: string } | null }[]>
  }
  clients: unknown
  location: { origin: string }
  dispatchEvent(event: Event): boolean
}

/**
 * Delivers `message` to the page's service worker as its push service would (DevTools' push message: a
 * trusted push event), and returns the notification its push handler showed.
 */
async function pushToServiceWorker(context: BrowserContext, page: Page, message: Record<string, unknown>) {
  const origin = new URL(page.url()).origin
  const cdp = await context.newCDPSession(page)
  const registrations = new Map<string, string>()
  const activated = new Set<string>()
  cdp.on('ServiceWorker.workerRegistrationUpdated', (update) => {
    for (const registration of update.registrations)
      if (!registration.isDeleted) registrations.set(registration.scopeURL, registration.registrationId)
  })
  cdp.on('ServiceWorker.workerVersionUpdated', (update) => {
    for (const version of update.versions)
      if (version.status === 'activated') activated.add(version.registrationId)
  })
  await cdp.send('ServiceWorker.enable')
  // A push reaches only a registration with an active worker: Chrome drops one sent while it installs.
  await expect
    .poll(() => activated.has(registrations.get(`${origin}/`) ?? ''), { timeout: 30_000 })
    .toBe(true)
  const registrationId = registrations.get(`${origin}/`)!
  const deliver = () =>
    cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId, data: JSON.stringify(message) })
  await deliver()
  let deliveredAt = Date.now()
  const worker = () => context.serviceWorkers().find((candidate) => candidate.url() === `${origin}/sw.js`)
  await expect.poll(() => worker(), { timeout: 30_000 }).toBeTruthy()
  const tag = String(message.tag)
  let shown: Awaited<ReturnType<WorkerScope['registration']['getNotifications']>> = []
  await expect
    .poll(
      async () => {
        shown = await worker()!.evaluate(async (wanted) => {
          const scope = globalThis as unknown as WorkerScope
          // Notification's fields are getters: copied out, they cross to the test.
          return (await scope.registration.getNotifications({ tag: wanted })).map(
            ({ title, body, tag, data }) => ({ title, body, tag, data }),
          )
        }, tag)
        // Chrome may stop an idle worker as a message arrives and lose it; a push service would send it
        // again, as here. The tag makes the repeat replace the first, so one notification is still one.
        if (shown.length === 0 && Date.now() - deliveredAt > 5_000) {
          await deliver()
          deliveredAt = Date.now()
        }
        return shown.length
      },
      { timeout: 30_000 },
    )
    .toBe(1)
  await cdp.detach()
  return { worker: worker()!, notification: shown[0]! }
}

/**
 * Clicks notifications carrying these links in the service worker's notificationclick handler, with the
 * browser's windows stood in for: none open, a Hangar tab this worker controls, and one it does not (a
 * hard-reloaded tab: its navigate() rejects with a TypeError, as the Service Workers spec says). Returns,
 * per case, what the handler did with the windows, in order.
 */
async function clickInServiceWorker(worker: Worker, links: (string | undefined)[]) {
  return worker.evaluate(async (urls) => {
    const scope = globalThis as unknown as WorkerScope
    let did: string[] = []
    let windows: unknown[] = []
    const tab = (controlled: boolean) => ({
      url: `${scope.location.origin}/conversations`,
      navigate: async (url: string) => {
        did.push(`navigate ${url}`)
        if (!controlled) throw new TypeError('not controlled by this service worker')
        return null
      },
      focus: async () => {
        did.push('focus')
      },
    })
    Object.defineProperty(scope, 'clients', {
      configurable: true,
      value: {
        matchAll: async () => windows,
        openWindow: async (url: string) => {
          did.push(`open ${url}`)
          return null
        },
      },
    })
    const click = async (url: string | undefined) => {
      const pending: Promise<unknown>[] = []
      const event = new Event('notificationclick')
      Object.defineProperties(event, {
        notification: { value: { data: url === undefined ? null : { url }, close: () => undefined } },
        waitUntil: { value: (promise: Promise<unknown>) => pending.push(promise) },
      })
      scope.dispatchEvent(event)
      try {
        await Promise.all(pending)
      } catch (error) {
        did.push(`failed: ${String(error)}`)
      }
    }
    const cases = { none: [] as unknown[], controlled: [tab(true)], uncontrolled: [tab(false)] }
    const results: Record<string, string[][]> = {}
    try {
      for (const [name, open] of Object.entries(cases)) {
        windows = open
        results[name] = []
        for (const url of urls) {
          did = []
          await click(url)
          results[name].push(did)
        }
      }
    } finally {
      delete (scope as { clients?: unknown }).clients
    }
    return results
  }, links)
}

describe('web UI: Web Push', () => {
  let mock: MockModelServer
  let push: Awaited<ReturnType<typeof startPushService>>
  let web: WebFixture
  let daemon: RunningDaemon
  let token: string
  let context: BrowserContext
  const { api, waitForStatus } = createApiClient(() => ({ url: daemon.url, token }))

  beforeAll(async () => {
    mock = await startMockModelServer()
    push = await startPushService()
    web = await startWebFixture({
      prefix: 'hangar-web-push-',
      files: { 'hangar.yaml': 'notifications:\n  allowPrivateNetworks: true\n' },
      env: { ANTHROPIC_API_KEY: 'sk-ant-test-api-0123456789', ANTHROPIC_BASE_URL: mock.url },
    })
    ;({ daemon, context } = web)
    token = await createToken(daemon.url, web.token, 'push', ['approve'])
    await context.grantPermissions(['notifications'], { origin: daemon.url })
  }, 120_000)

  afterAll(async () => {
    await web?.close()
    await Promise.all([mock?.close(), push?.close()])
  })

  it('subscribes in Settings, pushes a proposal made with no tab open, and its link opens the card', async () => {
    const { publicKey } = (await api<{ publicKey: string }>('GET', '/api/notifications/vapid-key')).json
    push.setVapidKey(publicKey)
    const subscription = push.subscribe()
    await context.addInitScript(stubPushManager, subscription.json)

    let page = await web.newPage()
    await page.goto(daemon.signInLink)
    await page.waitForURL(/\/conversations$/)
    await page.getByRole('link', { name: 'Settings' }).click()
    await page.getByRole('button', { name: 'Notify this browser (Web Push)' }).click()
    const channel = page.getByRole('list', { name: 'Channels' }).getByRole('listitem')
    await expect.poll(() => channel.count(), { timeout: 30_000 }).toBe(1)
    // The page subscribed once, with the daemon's VAPID key, for notifications it must show.
    const asked = await page.evaluate(() => (globalThis as unknown as PageScope).__pushStub)
    expect(asked).toEqual({
      subscribed: 1,
      unsubscribed: 0,
      userVisibleOnly: true,
      applicationServerKey: publicKey,
    })
    const channels = await api<{ id: string; type: string; events: string[] }[]>(
      'GET',
      '/api/notifications/channels',
    )
    expect(channels.json).toHaveLength(1)
    expect(channels.json[0]).toMatchObject({ type: 'webpush' })
    expect(channels.json[0]!.events).toEqual(expect.arrayContaining(['approval.requested', 'run.finished']))
    // The subscription's keys and endpoint never come back.
    expect(JSON.stringify(channels.json)).not.toContain(subscription.json.keys.auth)
    expect(JSON.stringify(channels.json)).not.toContain(subscription.json.endpoint)
    await channel.getByRole('button', { name: 'Test' }).click()
    const [tested] = await push.waitFor(1)
    expect(tested!.message.event).toBe('notification.test')
    await screenshot(page, 'web-push-settings')
    await page.close()
    expect(context.pages()).toEqual([])

    // No tab open: the proposal is pushed.
    const conversation = await api<{ id: string }>('POST', '/api/conversations', { agent: 'builtin' })
    const run = await api<{ id: string }>('POST', `/api/conversations/${conversation.json.id}/messages`, {
      text: 'Please create a file. FILE=pushed.txt',
    })
    expect(run.status, JSON.stringify(run.json)).toBe(202)
    await waitForStatus(run.json.id, ['awaiting_confirmation'])
    const [, pushed] = await push.waitFor(2)
    const actions = await api<{ id: string; runId: string; createdAt: string }[]>('GET', '/api/actions')
    const action = actions.json.find((candidate) => candidate.runId === run.json.id)!
    console.log(
      `web push latency ms (proposal stored → push service received): ${pushed!.at - Date.parse(action.createdAt)}`,
    )
    expect(pushed!.claims.sub).toBe('mailto:hangar@localhost')
    expect(pushed!.message).toMatchObject({
      event: 'approval.requested',
      tag: action.id,
      url: `${daemon.url}/conversations/${conversation.json.id}?action=${action.id}`,
    })
    expect(String(pushed!.message.body)).toContain('pushed.txt')
    const link = String(pushed!.message.url)
    // A link is never a credential.
    expect(link).not.toMatch(/token|hgr_|session/)

    // The link opens that card, marked, in the same signed-in browser; confirming there finishes the run.
    page = await web.newPage()
    await page.goto(link)
    const card = page.locator(`[data-action-id="${action.id}"]`)
    await card.waitFor({ timeout: 30_000 })
    expect(await card.getAttribute('aria-current')).toBe('true')
    await screenshot(page, 'web-push-linked-card')
    await card.getByRole('button', { name: 'Confirm' }).click()
    const [, , finished] = await push.waitFor(3, 60_000)
    expect(finished!.message).toMatchObject({ event: 'run.finished' })
    // A run's message is tagged with the run: the continuation the confirmation started.
    const finishedRun = await api<{ status: string; conversationId: string; cwd: string }>(
      'GET',
      `/api/runs/${String(finished!.message.tag)}`,
    )
    expect(finishedRun.json).toMatchObject({ status: 'succeeded', conversationId: conversation.json.id })
    expect(await readFile(path.join(finishedRun.json.cwd, 'pushed.txt'), 'utf8')).toBeTruthy()

    // The service worker shows the proposal's message, and a click on it opens the same link — only ever
    // a page of this origin, whatever a message says.
    const { worker, notification } = await pushToServiceWorker(context, page, pushed!.message)
    expect(notification).toMatchObject({
      title: pushed!.message.title,
      body: pushed!.message.body,
      tag: action.id,
      data: { url: link },
    })
    const clicked = await clickInServiceWorker(worker, [
      notification.data!.url,
      'https://evil.example/steal',
      'javascript:alert(1)',
      undefined,
    ])
    const home = `${daemon.url}/`
    const targets = [link, home, home, home]
    expect(clicked).toEqual({
      none: targets.map((url) => [`open ${url}`]),
      controlled: targets.map((url) => [`navigate ${url}`, 'focus']),
      // A tab it cannot navigate: the link opens in a new one rather than nowhere.
      uncontrolled: targets.map((url) => [`navigate ${url}`, `open ${url}`]),
    })
    expect(web.pageErrors).toEqual([])
  }, 180_000)
  it('replaces a subscription this browser made with another key (another instance on this origin)', async () => {
    const { publicKey } = (await api<{ publicKey: string }>('GET', '/api/notifications/vapid-key')).json
    const before = push.received.length
    const page = await web.newPage()
    await page.goto(`${daemon.url}/settings`)
    await page.getByRole('heading', { name: 'Notifications' }).waitFor()
    // Its push service would refuse every message signed with this instance's key for that subscription.
    const otherKey = createECDH('prime256v1')
    otherKey.generateKeys()
    await page.evaluate(
      (key) => (globalThis as unknown as PageScope).__pushStubSeed(key),
      otherKey.getPublicKey().toString('base64url'),
    )
    // The test before left this browser's channel: subscribing again replaces it with a new one (a new id).
    const listChannels = async () =>
      (await api<{ id: string }[]>('GET', '/api/notifications/channels')).json.map(({ id }) => id)
    const earlier = await listChannels()
    await page.getByRole('button', { name: 'Notify this browser (Web Push)' }).click()
    await expect
      .poll(() => page.evaluate(() => (globalThis as unknown as PageScope).__pushStub))
      .toEqual({ subscribed: 1, unsubscribed: 1, userVisibleOnly: true, applicationServerKey: publicKey })
    // Tested only once the new channel is the one listed: a click on the one it replaced would be a 404 (a
    // loaded machine showed that race: the list counted one channel, the old one, before the new one came).
    await expect
      .poll(
        async () => {
          const ids = await listChannels()
          return ids.length === 1 && !earlier.includes(ids[0]!)
        },
        { timeout: 30_000 },
      )
      .toBe(true)
    await page.reload()
    await page.getByRole('heading', { name: 'Notifications' }).waitFor()
    const channel = page.getByRole('list', { name: 'Channels' }).getByRole('listitem')
    await expect.poll(() => channel.count(), { timeout: 30_000 }).toBe(1)
    await channel.getByRole('button', { name: 'Test' }).click()
    const arrived = await push.waitFor(before + 1)
    expect(arrived[before]!.message.event).toBe('notification.test')
    await page.close()
    expect(web.pageErrors).toEqual([])
  }, 120_000)
})
