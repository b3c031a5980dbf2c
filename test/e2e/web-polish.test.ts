// Issue 20 item 4 in real Chromium against a real daemon (the built-in agent on the mock model): empty
// states instead of empty tables, whole chart ticks, a run whose proposals were all decided shown as
// decided with a link to its continuation, an approval card naming its file, a phone-sized window with no
// sideways scroll and every page in reach, the styled /login error page and the favicon. Without a
// projects API (a 404) the UI shows no switcher and says so on the projects page.
import { execFileSync } from 'node:child_process'
import { mkdir, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { createApiClient } from '../helpers/api-client.js'
import { launchChromium, screenshot } from '../helpers/browser.js'
import { cleanEnv, type RunningDaemon, startDaemon } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

const PHONE = { width: 390, height: 844 }

/**
 * Browser-side code as text (this project's types have no DOM): does the document scroll sideways, and
 * which elements reach past the window (named in the failure).
 */
const SIDEWAYS = `(() => {
  const s = document.scrollingElement
  const wide = Array.from(document.querySelectorAll('body *'))
    .filter((e) => e.getBoundingClientRect().right > s.clientWidth && !e.closest('.table-wrap'))
    .slice(0, 8)
    .map((e) => e.tagName.toLowerCase() + (e.className ? '.' + e.className : '') + ' ' + Math.round(e.getBoundingClientRect().right))
  return { scrollWidth: s.scrollWidth, clientWidth: s.clientWidth, wide }
})()`

describe('web UI polish', () => {
  let mock: MockModelServer
  let root: string
  let project: string
  let daemon: RunningDaemon
  let token: string
  let browser: Browser
  let context: BrowserContext
  let page: Page
  const pageErrors: string[] = []
  const { api, waitForStatus } = createApiClient(() => ({ url: daemon.url, token }))

  async function expectNoSidewaysScroll(route: string) {
    const size = (await page.evaluate(SIDEWAYS)) as {
      scrollWidth: number
      clientWidth: number
      wide: string[]
    }
    expect(size.scrollWidth, `${route} scrolls sideways: ${size.wide.join(', ')}`).toBeLessThanOrEqual(
      size.clientWidth,
    )
  }

  beforeAll(async () => {
    mock = await startMockModelServer()
    root = await makeTempDir('hangar-web-polish-')
    project = path.join(root, 'project')
    await mkdir(project)
    execFileSync('git', ['init', '-q'], { cwd: project })
    daemon = await startDaemon(['--data-dir', path.join(root, 'data')], {
      env: cleanEnv({
        PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
        HOME: root,
        ANTHROPIC_API_KEY: 'sk-ant-test-api-0123456789',
        ANTHROPIC_BASE_URL: mock.url,
      }),
      cwd: project,
      timeoutMs: 60_000,
    })
    const cliToken = (
      JSON.parse(await readFile(path.join(root, 'data', 'daemon.json'), 'utf8')) as { token: string }
    ).token
    const created = await fetch(`${daemon.url}/api/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cliToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'polish', scopes: ['approve'] }),
    })
    token = ((await created.json()) as { token: string }).token
    browser = await launchChromium()
    context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
    page = await context.newPage()
    page.on('pageerror', (error) => pageErrors.push(error.message))
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to (load|execute|apply|connect)/.test(message.text()))
        pageErrors.push(message.text())
    })
    page.on('dialog', (dialog) => void dialog.accept())
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await daemon?.stop()
    await mock?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('signs in, and shows empty states instead of empty tables, with whole chart ticks', async () => {
    const link = /Sign in: (\S+)/.exec(daemon.stdout())?.[1]
    await page.goto(link!)
    await page.waitForURL(/\/conversations$/)

    await page.getByRole('link', { name: 'Runs' }).click()
    await page.getByText('No runs.').waitFor()
    expect(await page.getByRole('table', { name: 'Runs' }).isVisible()).toBe(false)

    await page.getByRole('link', { name: 'Usage' }).click()
    await page.getByText('No usage in this range.').waitFor()
    expect(await page.getByRole('table', { name: 'Usage per agent' }).isVisible()).toBe(false)
    // The value axis of the tokens chart: counts, so whole numbers only (it read 0.25, 0.5, 0.75 before).
    const axis = page
      .getByRole('img', { name: 'Tokens per day, by agent' })
      .locator('text[text-anchor="end"]')
    await expect.poll(() => axis.count()).toBeGreaterThan(1)
    for (const tick of await axis.allTextContents()) expect(tick).toMatch(/^\d+$/)
    await screenshot(page, 'usage-empty')
  }, 60_000)

  it('without a projects API hides the switcher and says so on the projects page', async () => {
    // A daemon from before projects answers 404 (after the projects backend is merged, the real one answers).
    await page.route('**/api/projects', (route) =>
      route.fulfill({
        status: 404,
        contentType: 'application/json',
        body: JSON.stringify({ error: { code: 'not_found', message: 'no route GET /api/projects' } }),
      }),
    )
    try {
      await page.reload()
      await page.getByRole('link', { name: 'Projects' }).click()
      await page.getByText('This daemon has no projects').waitFor()
      expect(await page.getByRole('combobox', { name: 'Project' }).count()).toBe(0)
      await page.getByRole('link', { name: 'Conversations' }).click()
      await page.getByRole('region', { name: 'New conversation' }).waitFor()
      expect(await page.getByRole('combobox', { name: 'Project' }).count()).toBe(0)
      expect(pageErrors).toEqual([])
    } finally {
      await page.unroute('**/api/projects')
    }
  }, 60_000)

  it('names the file on an approval card, and shows a run whose proposals were decided as decided', async () => {
    const submitted = await api<{ id: string }>('POST', '/api/runs', {
      agent: 'builtin',
      prompt: 'Write it down. FILE=notes/polish.txt',
      cwd: project,
    })
    expect(submitted.status).toBe(201)
    await waitForStatus(submitted.json.id, ['awaiting_confirmation'])
    await page.getByRole('link', { name: /^Approvals/ }).click()
    const card = page.getByRole('article', { name: /Proposal:/ })
    await card.waitFor({ timeout: 30_000 })
    expect(await card.locator('.action-where').textContent()).toContain('notes/polish.txt')
    await card.getByRole('button', { name: 'Confirm' }).click()
    await page.getByText('Nothing is waiting for you.').waitFor()

    await page.getByRole('link', { name: 'Runs' }).click()
    const row = page.locator(`tr[data-run-id="${submitted.json.id}"]`)
    await expect
      .poll(() => row.locator('[data-status]').getAttribute('data-status'), { timeout: 30_000 })
      .toBe('decided')
    const continued = row.getByRole('link', { name: 'continued' })
    await continued.waitFor()
    await screenshot(page, 'runs-decided')
    await continued.click()
    await page.waitForURL(/\/runs\/run_/)
    const continuation = /\/runs\/([^/]+)$/.exec(new URL(page.url()).pathname)![1]!
    expect(continuation).not.toBe(submitted.json.id)
    const run = await waitForStatus<{
      id: string
      status: string
      reason: string | null
      continues: string | null
    }>(continuation)
    expect(run.continues).toBe(submitted.json.id)

    // The chat card of the decided run says so too, with the link to the run that went on from it.
    const decided = await api<{ conversationId: string; status: string; reason: string }>(
      'GET',
      `/api/runs/${submitted.json.id}`,
    )
    expect(decided.json.status).toBe('succeeded')
    expect(decided.json.reason).toBe(`every proposal was decided; continued in ${continuation}`)
    await page.goto(`${daemon.url}/conversations/${decided.json.conversationId}`)
    const section = page.locator(`section.run[data-run-id="${submitted.json.id}"]`)
    await expect.poll(() => section.getAttribute('data-status'), { timeout: 30_000 }).toBe('decided')
    expect(await section.locator('.decided-note').getByRole('link').getAttribute('href')).toBe(
      `/runs/${continuation}`,
    )
  }, 90_000)

  it('fits a phone: no sideways scroll on conversations and runs, and every page in the nav', async () => {
    // Long unbroken text, as pasted paths and stack traces are.
    const long = `Investigate ${'/very/long/path/without/any/break'.repeat(5)} please`
    const conversation = await api<{ id: string }>('POST', '/api/conversations', {
      agent: 'builtin',
      title: long,
    })
    expect(conversation.status).toBe(201)
    const run = await api<{ id: string }>('POST', '/api/runs', {
      agent: 'builtin',
      prompt: long,
      cwd: project,
    })
    await waitForStatus(run.json.id)

    await page.setViewportSize(PHONE)
    await page.goto(`${daemon.url}/conversations`)
    await page.getByRole('list', { name: 'Conversations' }).getByRole('link').first().waitFor()
    await expectNoSidewaysScroll('/conversations')
    await screenshot(page, 'phone-conversations')

    await page.goto(`${daemon.url}/runs`)
    await page.locator(`tr[data-run-id="${run.json.id}"]`).waitFor()
    await expectNoSidewaysScroll('/runs')
    await screenshot(page, 'phone-runs')

    const nav = page.getByRole('navigation', { name: 'Main' })
    for (const [name, url] of [
      ['Usage', /\/usage$/],
      ['Settings', /\/settings$/],
    ] as const) {
      const item = nav.getByRole('link', { name })
      // On screen, not scrolled out of a strip: inside the window's width.
      const box = await item.boundingBox()
      expect(box, name).not.toBeNull()
      expect(box!.x + box!.width, name).toBeLessThanOrEqual(PHONE.width)
      await item.click()
      await page.waitForURL(url)
      await expectNoSidewaysScroll(name)
    }
    await page.setViewportSize({ width: 1280, height: 860 })
  }, 90_000)

  it('styles the /login error page like the app, and serves a favicon', async () => {
    const fresh = await context.newPage()
    const violations: string[] = []
    fresh.on('console', (message) => {
      if (/Content Security Policy|Refused to/.test(message.text())) violations.push(message.text())
    })
    await fresh.goto(`${daemon.url}/login#hgl_not-a-real-link`)
    const status = fresh.getByRole('status')
    await expect.poll(() => fresh.locator('body').getAttribute('class')).toBe('failed')
    expect(await status.textContent()).not.toBe('Signing you in…')
    expect(await fresh.getByText('hangar login', { exact: true }).isVisible()).toBe(true)
    // The app's look: its card, its icon (allowed by the page's policy).
    const card = (await fresh.evaluate(
      `(() => { const s = getComputedStyle(document.querySelector('.card')); return { radius: s.borderRadius, border: s.borderTopStyle } })()`,
    )) as { radius: string; border: string }
    expect(card).toEqual({ radius: '8px', border: 'solid' })
    await expect
      .poll(() => fresh.evaluate(`document.querySelector('.brand img').naturalWidth`) as Promise<number>)
      .toBeGreaterThan(0)
    expect(violations).toEqual([])
    await screenshot(fresh, 'login-error')
    await fresh.close()

    const favicon = await fetch(`${daemon.url}/favicon.ico`)
    expect(favicon.status).toBe(200)
    expect(favicon.headers.get('content-type')).toBe('image/svg+xml')
    expect(await favicon.text()).toContain('<svg')
    expect(pageErrors).toEqual([])
  }, 60_000)
})
