// Notifications in real Chromium against a real daemon: Settings adds a webhook and shows its signing
// secret once; Test delivers a signed message; with no tab open, a built-in run's proposal reaches the
// webhook, and its link, opened in a fresh tab, shows that card (marked) where a signed-in user approves
// it; the run's end is notified too. (Web Push in the browser: test/e2e/web-push.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { createApiClient } from '../helpers/api-client.js'
import { screenshot } from '../helpers/browser.js'
import { createToken, type RunningDaemon } from '../helpers/hangar-cli.js'
import { startWebhookReceiver } from '../helpers/notification-receivers.js'
import { startWebFixture, type WebFixture } from '../helpers/web-fixture.js'

describe('web UI: notifications', () => {
  let mock: MockModelServer
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>
  let web: WebFixture
  let daemon: RunningDaemon
  let token: string
  const { api, waitForStatus } = createApiClient(() => ({ url: daemon.url, token }))

  beforeAll(async () => {
    mock = await startMockModelServer()
    receiver = await startWebhookReceiver()
    web = await startWebFixture({
      prefix: 'hangar-web-notify-',
      files: { 'hangar.yaml': 'notifications:\n  allowPrivateNetworks: true\n' },
      env: { ANTHROPIC_API_KEY: 'sk-ant-test-api-0123456789', ANTHROPIC_BASE_URL: mock.url },
    })
    daemon = web.daemon
    token = await createToken(daemon.url, web.token, 'notify', ['approve'])
  }, 120_000)

  afterAll(async () => {
    await web?.close()
    await Promise.all([mock?.close(), receiver?.close()])
  })

  it('adds a webhook in Settings, then a proposal made with no tab open links to its card', async () => {
    let page = await web.newPage()
    page.on('dialog', (dialog) => void dialog.accept())
    await page.goto(daemon.signInLink)
    await page.waitForURL(/\/conversations$/)
    await page.getByRole('link', { name: 'Settings' }).click()
    const form = page.getByRole('form', { name: 'Add a webhook' })
    await form.getByLabel('Webhook URL').fill(`${receiver.url}/hook`)
    expect(await form.getByLabel('Webhook URL').inputValue()).toBe(`${receiver.url}/hook`)
    await form.getByRole('button', { name: 'Add webhook' }).click()
    const secretBox = page.getByTestId('new-channel-secret')
    // The secret, or the error the page showed instead (it failed once under load with neither on record).
    const refusal = page.getByRole('alert')
    await secretBox.or(refusal).first().waitFor()
    if (await refusal.isVisible())
      throw new Error(`adding the webhook failed: ${await refusal.textContent()}`)
    const secret = (await secretBox.textContent())!.trim()
    expect(secret).toMatch(/^hns_/)
    receiver.setSecret(secret)
    const channel = page.getByRole('list', { name: 'Channels' }).getByRole('listitem')
    await expect.poll(() => channel.count()).toBe(1)
    await channel.getByRole('button', { name: 'Test' }).click()
    const [tested] = await receiver.waitFor(1)
    expect((tested!.json as { event: string }).event).toBe('notification.test')
    await channel.getByRole('button', { name: 'Log' }).click()
    await expect
      .poll(() => channel.getByRole('list', { name: 'Deliveries' }).textContent())
      .toMatch(/delivered/)
    await screenshot(page, 'notification-settings')
    // Shown once: after a reload it is nowhere on the page.
    await page.reload()
    await page.getByRole('heading', { name: 'Notifications' }).waitFor()
    expect(await page.content()).not.toContain(secret)
    await page.close()

    // No tab open: the proposal still reaches the webhook.
    const conversation = await api<{ id: string }>('POST', '/api/conversations', { agent: 'builtin' })
    const run = await api<{ id: string }>('POST', `/api/conversations/${conversation.json.id}/messages`, {
      text: 'Please create a file. FILE=from-push.txt',
    })
    await waitForStatus(run.json.id, ['awaiting_confirmation'])
    const [, approval] = await receiver.waitFor(2)
    const body = approval!.json as { event: string; url: string; actionId: string; summary: string }
    expect(body.event).toBe('approval.requested')
    expect(body.summary).toContain('from-push.txt')
    expect(body.url).toBe(`${daemon.url}/conversations/${conversation.json.id}?action=${body.actionId}`)

    // The link opens that card, marked, for the signed-in user to decide.
    page = await web.newPage()
    await page.goto(body.url)
    const card = page.locator(`[data-action-id="${body.actionId}"]`)
    await card.waitFor({ timeout: 30_000 })
    expect(await card.getAttribute('aria-current')).toBe('true')
    await screenshot(page, 'notification-linked-card')
    await card.getByRole('button', { name: 'Confirm' }).click()
    const [, , finished] = await receiver.waitFor(3, 60_000)
    expect((finished!.json as { event: string }).event).toBe('run.finished')
    expect(web.pageErrors).toEqual([])
  }, 180_000)
})
