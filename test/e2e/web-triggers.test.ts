// The Triggers page in real Chromium against a real daemon (the built-in agent on the mock model): add a
// schedule trigger, add a webhook trigger whose secret is shown once (never again after a reload), "Run
// now", and the fire listed with its run, which finishes.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { createApiClient } from '../helpers/api-client.js'
import { screenshot } from '../helpers/browser.js'
import type { RunningDaemon } from '../helpers/hangar-cli.js'
import { startWebFixture, type WebFixture } from '../helpers/web-fixture.js'

describe('web UI: triggers', () => {
  let mock: MockModelServer
  let web: WebFixture
  let daemon: RunningDaemon
  let token: string
  let page: Page
  const { api, waitForStatus } = createApiClient(() => ({ url: daemon.url, token }))
  const form = () => page.getByRole('form', { name: 'Add a trigger' })

  beforeAll(async () => {
    mock = await startMockModelServer()
    web = await startWebFixture({
      prefix: 'hangar-web-triggers-',
      projectName: 'start',
      env: { ANTHROPIC_API_KEY: 'sk-ant-test-web-triggers-0123456789', ANTHROPIC_BASE_URL: mock.url },
      viewport: { width: 1280, height: 900 },
    })
    ;({ daemon, token } = web)
    page = await web.newPage()
    page.on('dialog', (dialog) => void dialog.accept())
  }, 120_000)
  afterAll(async () => {
    await web?.close()
    await mock?.close()
  })

  it(
    'adds triggers, shows a webhook secret once, runs one now and lists its fire',
    { timeout: 120_000 },
    async () => {
      await page.goto(daemon.signInLink)
      await page.waitForURL(/\/conversations$/)
      await page.getByRole('link', { name: 'Triggers' }).click()
      await form().waitFor()

      // A refusal from the daemon shows under the form.
      await form().getByLabel('Name').fill('broken')
      await form().getByLabel(/^Cron/).fill('99 * * * *')
      await form()
        .getByLabel(/^Prompt/)
        .fill('x')
      await form().getByRole('button', { name: 'Add trigger' }).click()
      await expect
        .poll(async () => form().getByRole('alert').textContent())
        .toMatch(/minute 99 is out of range/)

      await form().getByLabel('Name').fill('nightly')
      await form().getByLabel(/^Cron/).fill('0 3 * * *')
      await form().getByLabel('Time zone').fill('Europe/Paris')
      await form().getByLabel('Agent').selectOption('builtin')
      await form()
        .getByLabel(/^Prompt/)
        .fill('Say hello')
      await form().getByRole('button', { name: 'Add trigger' }).click()
      const nightly = page.locator('[data-trigger-id]', { hasText: 'nightly' })
      await nightly.waitFor()
      expect(await nightly.textContent()).toContain('0 3 * * *')

      // A report to one of your notification channels (this trigger is never fired: nothing is sent).
      const channel = await api<{ id: string }>('POST', '/api/notifications/channels', {
        type: 'webhook',
        url: 'https://hooks.example.com/reports',
        name: 'ops-room',
      })
      expect(channel.status).toBe(201)
      await page.reload()
      await form().waitFor()
      await form().getByLabel('Kind').selectOption('webhook')
      await form().getByLabel('Report when the run ends').selectOption({ label: 'To channel ops-room' })
      await form().getByLabel('Name').fill('issues')
      await form()
        .getByLabel(/^Prompt/)
        .fill('{{issue.title}}')
      await form().getByRole('button', { name: 'Add trigger' }).click()
      const secretCard = page.getByRole('status', { name: 'Webhook secret' })
      await secretCard.waitFor()
      const secret = await secretCard.locator('[data-secret]').textContent()
      expect(secret).toMatch(/^whsec_/)
      expect((await api<{ report: unknown }>('GET', '/api/triggers/issues')).json.report).toEqual({
        type: 'channel',
        channelId: channel.json.id,
      })
      await screenshot(page, 'triggers')
      await page.reload()
      await page.locator('[data-trigger-id]', { hasText: 'issues' }).waitFor()
      expect(await page.content()).not.toContain(secret!)

      await nightly.getByRole('button', { name: 'Run now' }).click()
      const fires = page.getByRole('group', { name: 'Fires of nightly' })
      await fires.locator('tr[data-fire-status="started"]').waitFor({ timeout: 30_000 })
      const runId = (await fires.locator('tr[data-fire-status="started"] a code').textContent())!
      expect(runId).toMatch(/^run_/)
      expect((await waitForStatus(runId)).status).toBe('succeeded')
      const listed = await api<{ fires: { runId: string; runStatus: string }[] }>(
        'GET',
        '/api/triggers/nightly/fires',
      )
      expect(listed.json.fires[0]).toMatchObject({ runId, runStatus: 'succeeded' })
      await fires.getByRole('button', { name: 'Refresh' }).click()
      await expect.poll(async () => fires.textContent()).toContain('succeeded')
      expect(web.pageErrors).toEqual([])
    },
  )
})
