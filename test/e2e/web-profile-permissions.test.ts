// Issue 18 item 8 in the web UI (real Chromium, real daemon on loopback): the profile form has the
// `permissions` key (mode and tool lists, with what the mode becomes for the chosen CLI), an extra flag
// that fights the permission flags is refused next to the flags field, and the Agents page states each
// adapter's default mode. Before, the form had no permissions at all and `--force` was saved.
import { execFileSync } from 'node:child_process'
import { mkdir, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium, screenshot } from '../helpers/browser.js'
import { cleanEnv, type RunningDaemon, startDaemon } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

describe('web UI: profile permissions (issue 18 item 8)', () => {
  let root: string
  let daemon: RunningDaemon
  let browser: Browser
  let page: Page
  let token: string

  beforeAll(async () => {
    root = await makeTempDir('hangar-web-permissions-')
    const project = path.join(root, 'project')
    await mkdir(project)
    execFileSync('git', ['init', '-q'], { cwd: project })
    daemon = await startDaemon(['--data-dir', path.join(root, 'data')], {
      env: cleanEnv({ PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'), HOME: root }),
      cwd: project,
    })
    token = (JSON.parse(await readFile(path.join(root, 'data', 'daemon.json'), 'utf8')) as { token: string })
      .token
    browser = await launchChromium()
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
  }, 90_000)

  afterAll(async () => {
    await browser?.close()
    await daemon?.stop()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('sets permissions in the profile form and refuses a conflicting extra flag by field', async () => {
    const link = /Sign in: (\S+)/.exec(daemon.stdout())?.[1]
    await page.goto(link!)
    await page.waitForURL(/\/conversations$/)
    await page.getByRole('link', { name: 'Agents', exact: true }).click()
    await expect
      .poll(() =>
        page.locator('[data-adapter="claude-code"] [data-testid="permission-default"]').textContent(),
      )
      .toMatch(/permissions: workspace by default \(--permission-mode acceptEdits\)/)

    await page.getByRole('button', { name: 'New profile' }).click()
    const form = page.getByRole('form', { name: 'New profile' })
    await form.getByLabel('Name').fill('cursor-careful')
    await form.getByLabel('Adapter').selectOption('cursor-agent')
    await form.getByLabel(/Extra CLI flags/).fill('--force')
    await form.getByRole('button', { name: 'Save profile' }).click()
    await expect
      .poll(() => form.locator('[data-field="cliArgs[0]"]').textContent())
      .toMatch(/conflicts with the permission flags.*use permissions:/)

    await form.getByLabel(/Extra CLI flags/).fill('')
    await form.getByLabel(/^Permissions/).selectOption('permissive')
    // Issue 23: a new profile starts sandboxed (bubblewrap works here, and the page says so).
    expect(await form.getByLabel(/^Sandbox/).inputValue()).toBe('workspace')
    expect(await page.getByTestId('sandbox-status').textContent()).toMatch(
      /Sandbox: bubblewrap [\d.]+ confines/,
    )
    expect(await form.getByTestId('permission-mapping').textContent()).toContain('--force')
    await form.getByRole('button', { name: 'Save profile' }).click()
    await page.locator('[data-profile="cursor-careful"]').waitFor()
    expect(
      await page.locator('[data-profile="cursor-careful"] [data-testid="profile-sandbox"]').textContent(),
    ).toBe(' · sandboxed')
    await screenshot(page, 'profile-permissions')

    const saved = await fetch(`${daemon.url}/api/profiles/cursor-careful`, {
      headers: { authorization: `Bearer ${token}` },
    })
    expect(((await saved.json()) as { definition: { permissions?: unknown } }).definition).toMatchObject({
      permissions: { mode: 'permissive' },
      sandbox: 'workspace',
    })
  }, 90_000)
})
