// Issue 20 item 3, in real Chromium against a real daemon: on a fresh install (no agent CLI, no provider)
// the UI preselected the built-in agent and called it ready; the first message failed and its error showed
// twice (the run's error event and its end reason). Now nothing that cannot run is preselected and the
// picker says why and how to fix it; once the built-in agent has a provider it is preselected, and a
// failed run shows its error once.
import { execFileSync } from 'node:child_process'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { launchChromium, screenshot } from '../helpers/browser.js'
import { cleanEnv, type RunningDaemon, startDaemon } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

describe('web UI: agents shown as they are (issue 20 item 3)', { timeout: 180_000 }, () => {
  let mock: MockModelServer
  let root: string
  let daemon: RunningDaemon
  let token: string
  let browser: Browser
  let page: Page

  async function api(method: string, route: string, body?: unknown): Promise<number> {
    const response = await fetch(`${daemon.url}${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
    await response.text()
    return response.status
  }

  const newConversation = () => page.getByRole('region', { name: 'New conversation' })

  beforeAll(async () => {
    mock = await startMockModelServer()
    root = await makeTempDir('hangar-web-readiness-')
    const project = path.join(root, 'project')
    const home = path.join(root, 'home')
    await mkdir(project)
    await mkdir(home)
    execFileSync('git', ['init', '-q'], { cwd: project })
    // The user's provider endpoint (the mock) is on loopback.
    await writeFile(path.join(project, 'hangar.yaml'), 'providers:\n  allowPrivateNetworks: true\n')
    const dataDir = path.join(root, 'data')
    daemon = await startDaemon(['--data-dir', dataDir], {
      // A fresh install: no agent CLI on the PATH, no provider key in the environment.
      env: cleanEnv({
        PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
        HOME: home,
        ANTHROPIC_API_KEY: undefined,
        ANTHROPIC_AUTH_TOKEN: undefined,
        ANTHROPIC_BASE_URL: undefined,
        OPENAI_API_KEY: undefined,
        OPENAI_BASE_URL: undefined,
        OPENROUTER_API_KEY: undefined,
      }),
      cwd: project,
      timeoutMs: 90_000,
    })
    token = (JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string }).token
    browser = await launchChromium()
    page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage()
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await daemon?.stop()
    await mock?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('preselects no agent on a fresh install, says the built-in agent needs a provider and how to fix it', async () => {
    const link = /Sign in: (\S+)/.exec(daemon.stdout())?.[1]
    await page.goto(link!)
    await page.waitForURL(/\/conversations$/)
    const form = newConversation()
    const picker = form.getByLabel('Agent')
    const builtin = picker.locator('option[value="builtin"]')
    await expect.poll(() => builtin.textContent()).toContain('needs a provider')
    expect(await builtin.isDisabled()).toBe(true)
    expect(await picker.inputValue()).toBe('')
    const fix = form.getByRole('note')
    await expect.poll(() => fix.textContent()).toContain('no agent can run here')
    expect(await fix.textContent()).toContain('Settings → Providers')
    expect(await fix.textContent()).toContain("in the daemon's environment")
    await screenshot(page, 'agent-readiness-fresh-install')

    // Sending anyway is refused once, with the same fix; no conversation is left half-made.
    await form.getByRole('textbox', { name: 'Message' }).fill('hello')
    await form.getByRole('button', { name: 'Send' }).click()
    const alerts = page.getByRole('alert')
    await expect.poll(() => alerts.count()).toBe(1)
    expect(await alerts.first().textContent()).toContain('no agent can run here')

    // The Agents page says the same of the built-in agent: not "ready", and the fix.
    await page.getByRole('link', { name: 'Agents', exact: true }).click()
    const row = page.locator('tr[data-adapter="builtin"]')
    await expect.poll(() => row.textContent()).toContain('needs a provider')
    expect(await row.textContent()).not.toContain('ready')
    expect(await row.textContent()).toContain('Settings → Providers')
    await screenshot(page, 'agent-readiness-agents-page')
    await page.getByRole('link', { name: 'Conversations' }).click()
  })

  it('preselects the built-in agent once it has a provider, and shows a failed first message’s error once', async () => {
    expect(
      await api('PUT', '/api/settings/providers/anthropic', {
        apiKey: 'sk-ant-web-readiness-0001',
        baseUrl: mock.url,
      }),
    ).toBe(200)
    expect(await api('PUT', '/api/settings/builtin', { provider: 'anthropic', model: 'claude-mock' })).toBe(
      200,
    )
    await page.reload()
    const form = newConversation()
    await expect.poll(() => form.getByLabel('Agent').inputValue()).toBe('builtin')
    expect(await form.getByRole('note').count()).toBe(0)

    // The model answers 400: the run fails, and its error is shown once (not again as the end reason).
    await form.getByRole('textbox', { name: 'Message' }).fill('Say hello. FAIL=400')
    await form.getByRole('button', { name: 'Send' }).click()
    await page.waitForURL(/\/conversations\/conv_/)
    const run = page.locator('section.run[data-status="failed"]')
    await expect.poll(() => run.count(), { timeout: 60_000 }).toBe(1)
    await expect.poll(() => run.locator('.run-error').count()).toBe(1)
    expect(await run.locator('.run-reason').count()).toBe(0)
    const error = (await run.locator('.run-error').textContent()) ?? ''
    expect(error).toContain('400')
    const message = error.replace(/^\S+: /, '')
    const text = (await run.textContent()) ?? ''
    expect(text.split(message).length - 1).toBe(1)
    await screenshot(page, 'agent-readiness-failed-once')
  })
})
