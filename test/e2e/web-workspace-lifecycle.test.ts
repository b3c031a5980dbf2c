// Issue 20 item 5 in real Chromium against a real daemon: the Projects page shows each project's workspace
// lifecycle. A git project with a committed `.hangar/workspace.yaml` shows "not approved: its commands do
// not run"; the owner reads the exact commands, confirms, and the daemon records the approval of the hash
// that was shown — a file changed in between is refused (409) and shown again. A member granted the project
// sees the same commands and no Approve button.
// NEEDS the workspace-config routes (GET /api/workspace-config?projectId, POST .../approve).
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApiClient } from '../helpers/api-client.js'
import { launchChromium, screenshot } from '../helpers/browser.js'
import { gitIn } from '../helpers/git-fixture.js'
import { cleanEnv, type RunningDaemon, runHangar, startDaemon } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

interface ResolvedLifecycleJson {
  project: string
  source: 'hangar.yaml' | 'repository' | 'none'
  config: { setup?: string } | null
  repositoryFile: { contentHash: string; approved: boolean; config: { setup?: string } | null } | null
}

const FIRST = "copy: ['.env*']\nsetup: 'echo first-version'\nteardown: 'echo bye'\nports: 2\n"
const CHANGED = "copy: ['.env*']\nsetup: 'echo hello-from-shop'\nteardown: 'echo bye'\nports: 2\n"

describe('web UI: workspace lifecycle of a project', () => {
  let root: string
  let dataDir: string
  let shopDir: string
  let env: NodeJS.ProcessEnv
  let daemon: RunningDaemon
  let token: string
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let shopId: string
  const pageErrors: string[] = []
  const { api } = createApiClient(() => ({ url: daemon.url, token }))

  const lifecycle = async () =>
    (await api<ResolvedLifecycleJson>('GET', `/api/workspace-config?projectId=${shopId}`)).json
  const panel = (on: Page) => on.getByRole('group', { name: 'Workspace of shop' })
  const text = async (on: Page) => (await panel(on).innerText()).replace(/\s+/g, ' ')

  beforeAll(async () => {
    root = await makeTempDir('hangar-web-lifecycle-')
    dataDir = path.join(root, 'data')
    const start = path.join(root, 'start')
    shopDir = path.join(root, 'shop')
    await mkdir(start)
    await mkdir(path.join(shopDir, '.hangar'), { recursive: true })
    gitIn(start, 'init', '-q')
    gitIn(shopDir, 'init', '-q')
    await writeFile(path.join(shopDir, '.hangar', 'workspace.yaml'), FIRST)
    await writeFile(path.join(shopDir, 'README.md'), '# shop\n')
    gitIn(shopDir, 'add', '-A')
    gitIn(shopDir, 'commit', '-qm', 'workspace lifecycle')
    env = cleanEnv({
      PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: root,
    })
    daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: start, timeoutMs: 60_000 })
    const cliToken = (
      JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string }
    ).token
    const created = await fetch(`${daemon.url}/api/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cliToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'lifecycle', scopes: ['approve'] }),
    })
    token = ((await created.json()) as { token: string }).token
    const added = await api<{ id: string }>('POST', '/api/projects', { path: shopDir, name: 'shop' })
    expect(added.status, JSON.stringify(added.json)).toBe(201)
    shopId = added.json.id
    browser = await launchChromium()
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    page = await context.newPage()
    page.on('pageerror', (error) => pageErrors.push(error.message))
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await daemon?.stop()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('shows the owner an unapproved file, and approves exactly what was shown after a confirmation', async () => {
    const link = /Sign in: (\S+)/.exec(daemon.stdout())?.[1]
    await page.goto(link!)
    await page.waitForURL(/\/conversations$/)
    await page.getByRole('link', { name: 'Projects' }).click()
    await panel(page).getByText('not approved: its commands do not run').first().waitFor({ timeout: 15_000 })
    expect(await text(page)).toContain('echo first-version')
    expect(await text(page)).toContain('.env*')
    expect(await text(page)).toContain('2 (HANGAR_PORT … HANGAR_PORT+1)')
    expect((await lifecycle()).repositoryFile?.approved).toBe(false)

    // The file changes after the page showed it: approving what was shown is refused, and the new one shown.
    await writeFile(path.join(shopDir, '.hangar', 'workspace.yaml'), CHANGED)
    await panel(page).getByRole('button', { name: 'Approve…' }).click()
    const confirm = page.getByRole('group', { name: 'Confirm approving shop’s workspace file' })
    expect(await confirm.innerText()).toContain('echo first-version')
    await confirm.getByRole('button', { name: 'Approve these commands' }).click()
    await page.getByText('changed since it was shown').first().waitFor({ timeout: 15_000 })
    await expect.poll(() => text(page), { timeout: 15_000 }).toContain('echo hello-from-shop')
    expect((await lifecycle()).repositoryFile?.approved).toBe(false)

    // Cancelling approves nothing.
    await panel(page).getByRole('button', { name: 'Approve…' }).click()
    await confirm.getByRole('button', { name: 'Cancel' }).click()
    await expect.poll(() => confirm.count()).toBe(0)
    expect((await lifecycle()).repositoryFile?.approved).toBe(false)

    await panel(page).getByRole('button', { name: 'Approve…' }).click()
    const confirmText = (await confirm.innerText()).replace(/\s+/g, ' ')
    expect(confirmText).toContain('echo hello-from-shop')
    expect(confirmText).toContain('echo bye')
    await screenshot(page, 'workspace-lifecycle-confirm')
    await confirm.getByRole('button', { name: 'Approve these commands' }).click()
    await panel(page).getByText('from .hangar/workspace.yaml (approved)').waitFor({ timeout: 15_000 })
    expect(await text(page)).not.toContain('not approved')
    expect(await panel(page).getByRole('button', { name: 'Approve…' }).count()).toBe(0)
    const approved = await lifecycle()
    expect(approved.source).toBe('repository')
    expect(approved.repositoryFile?.approved).toBe(true)
    expect(approved.config?.setup).toBe('echo hello-from-shop')
    await screenshot(page, 'workspace-lifecycle-approved')
    expect(pageErrors).toEqual([])
  }, 90_000)

  it('shows a member granted the project its commands, with no Approve button', async () => {
    // A newer file: unapproved again, so the owner would have the button here.
    await writeFile(path.join(shopDir, '.hangar', 'workspace.yaml'), `${CHANGED}# edited\n`)
    const added = await runHangar(['users', 'add', 'dana', '--json', '--data-dir', dataDir], { env })
    expect(added.code, added.stderr).toBe(0)
    const dana = JSON.parse(added.stdout) as { id: string; inviteUrl: string }
    const granted = await api('PUT', `/api/projects/${shopId}/members/${dana.id}`)
    expect(granted.status, JSON.stringify(granted.json)).toBeLessThan(300)

    const danaContext = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    try {
      const danaPage = await danaContext.newPage()
      danaPage.on('pageerror', (error) => pageErrors.push(error.message))
      await danaPage.goto(dana.inviteUrl.replace(/^http:\/\/[^/]+/, daemon.url))
      await danaPage.waitForURL(/\/conversations$/)
      await danaPage.getByRole('link', { name: 'Projects' }).click()
      await panel(danaPage)
        .getByText('not approved: its commands do not run')
        .first()
        .waitFor({ timeout: 15_000 })
      const shown = await text(danaPage)
      expect(shown).toContain('echo hello-from-shop')
      expect(shown).toContain('echo bye')
      expect(await danaPage.getByRole('button', { name: /^Approve/ }).count()).toBe(0)
      await screenshot(danaPage, 'workspace-lifecycle-member')
    } finally {
      await danaContext.close()
    }
    // The owner, on reload, has the button for the newer file.
    await page.reload()
    await panel(page).getByRole('button', { name: 'Approve…' }).waitFor({ timeout: 15_000 })
    expect(pageErrors).toEqual([])
  }, 90_000)
})
