// The Triggers page in real Chromium against a real daemon (the built-in agent on the mock model): add a
// schedule trigger, add a webhook trigger whose secret is shown once (never again after a reload), "Run
// now", and the fire listed with its run, which finishes.
import { execFileSync } from 'node:child_process'
import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { createApiClient } from '../helpers/api-client.js'
import { launchChromium, screenshot } from '../helpers/browser.js'
import { cleanEnv, readDaemonToken, type RunningDaemon, startDaemon } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

describe('web UI: triggers', () => {
  let mock: MockModelServer
  let root: string
  let daemon: RunningDaemon
  let token: string
  let browser: Browser
  let page: Page
  const pageErrors: string[] = []
  const { api, waitForStatus } = createApiClient(() => ({ url: daemon.url, token }))
  const form = () => page.getByRole('form', { name: 'Add a trigger' })

  beforeAll(async () => {
    mock = await startMockModelServer()
    root = await makeTempDir('hangar-web-triggers-')
    const dataDir = path.join(root, 'data')
    const start = path.join(root, 'start')
    await mkdir(start)
    execFileSync('git', ['init', '-q'], { cwd: start })
    const env = cleanEnv({
      PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: root,
      ANTHROPIC_API_KEY: 'sk-ant-test-web-triggers-0123456789',
      ANTHROPIC_BASE_URL: mock.url,
    })
    daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: start, timeoutMs: 60_000 })
    token = await readDaemonToken(dataDir)
    browser = await launchChromium()
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
    page.on('pageerror', (error) => pageErrors.push(error.message))
    page.on('dialog', (dialog) => void dialog.accept())
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await daemon?.stop()
    await mock?.close()
    if (root) await rm(root, { recursive: true, force: true })
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
      expect(pageErrors).toEqual([])
    },
  )
})
