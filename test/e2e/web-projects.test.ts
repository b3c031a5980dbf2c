// Issue 20 (projects are first-class) in real Chromium against a real daemon: add projects by path with
// the daemon's refusals shown under the input, the switcher (persisted in localStorage) filtering the
// conversation list and choosing where a new conversation goes, the project named on conversations, runs
// and approval cards, the owner granting a member, and removing a project after a confirmation.
// NEEDS the projects backend (GET/POST/PATCH/DELETE /api/projects, members, projectId on conversations,
// runs and actions): it fails on a branch without it.
import { execFileSync } from 'node:child_process'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { createApiClient } from '../helpers/api-client.js'
import { launchChromium, screenshot } from '../helpers/browser.js'
import { cleanEnv, type RunningDaemon, runHangar, startDaemon } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

interface ProjectJson {
  id: string
  name: string
  path: string
  kind: 'git' | 'folder'
  members?: string[]
}

describe('web UI: projects', () => {
  let mock: MockModelServer
  let root: string
  let dataDir: string
  let env: NodeJS.ProcessEnv
  let daemon: RunningDaemon
  let token: string
  let browser: Browser
  let context: BrowserContext
  let page: Page
  const pageErrors: string[] = []
  /** What the next window.confirm answers. */
  let confirmAnswer = true
  const { api } = createApiClient(() => ({ url: daemon.url, token }))
  const dirs = { shop: '', blog: '', file: '', insideData: '' }

  const projects = async () => (await api<{ projects: ProjectJson[] }>('GET', '/api/projects')).json.projects
  const projectNamed = async (name: string) => (await projects()).find((project) => project.name === name)
  const addForm = () => page.getByRole('form', { name: 'Add a project' })
  const switcher = () => page.getByRole('banner').getByRole('combobox', { name: 'Project' })

  async function addProject(projectPath: string, name = ''): Promise<void> {
    await addForm().getByLabel('Path on the daemon’s host').fill(projectPath)
    await addForm().getByLabel(/^Name/).fill(name)
    await addForm().getByRole('button', { name: 'Add project' }).click()
  }

  /** The refusal shown under the path input. */
  async function pathError(): Promise<string> {
    const error = addForm().locator('[data-field="path"]')
    await error.waitFor({ timeout: 15_000 })
    return (await error.textContent()) ?? ''
  }

  beforeAll(async () => {
    mock = await startMockModelServer()
    root = await makeTempDir('hangar-web-projects-')
    dataDir = path.join(root, 'data')
    const start = path.join(root, 'start')
    dirs.shop = path.join(root, 'shop')
    dirs.blog = path.join(root, 'blog')
    dirs.file = path.join(root, 'notes.txt')
    for (const dir of [start, dirs.shop, dirs.blog]) await mkdir(dir)
    execFileSync('git', ['init', '-q'], { cwd: dirs.shop })
    execFileSync('git', ['init', '-q'], { cwd: start })
    await writeFile(dirs.file, 'not a folder\n')
    env = cleanEnv({
      PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: root,
      ANTHROPIC_API_KEY: 'sk-ant-test-api-0123456789',
      ANTHROPIC_BASE_URL: mock.url,
    })
    daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: start, timeoutMs: 60_000 })
    dirs.insideData = path.join(dataDir, 'inside')
    await mkdir(dirs.insideData)
    const cliToken = (
      JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string }
    ).token
    const created = await fetch(`${daemon.url}/api/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cliToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'projects', scopes: ['approve'] }),
    })
    token = ((await created.json()) as { token: string }).token
    browser = await launchChromium()
    context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
    page = await context.newPage()
    page.on('pageerror', (error) => pageErrors.push(error.message))
    page.on('dialog', (dialog) => void (confirmAnswer ? dialog.accept() : dialog.dismiss()))
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await daemon?.stop()
    await mock?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('adds projects by path, with each refusal shown under the path input', async () => {
    const link = /Sign in: (\S+)/.exec(daemon.stdout())?.[1]
    await page.goto(link!)
    await page.waitForURL(/\/conversations$/)
    await page.getByRole('link', { name: 'Projects' }).click()
    await addForm().waitFor()
    const before = (await projects()).length

    // Nothing typed: said at once, nothing sent.
    await addProject('')
    const nothingTyped = await pathError()
    expect(nothingTyped).toContain('absolute path')
    for (const refused of [path.join(root, 'missing'), dirs.file, dirs.insideData]) {
      await addProject(refused)
      await expect.poll(pathError).not.toBe(nothingTyped)
      expect(await addForm().getByLabel('Path on the daemon’s host').getAttribute('aria-invalid')).toBe(
        'true',
      )
      // Cleared between attempts so the next message is the daemon's answer to the next path.
      await addProject('')
    }
    expect((await projects()).length).toBe(before)

    await addProject(dirs.shop, 'shop')
    await page.locator('[data-project-id]', { hasText: 'shop' }).waitFor()
    expect(await addForm().locator('[data-field="path"]').count()).toBe(0)
    // The same folder again: a conflict, under the input.
    await addProject(dirs.shop)
    expect(await pathError()).not.toBe('')
    await addProject(dirs.blog, 'blog')
    await page.locator('[data-project-id]', { hasText: 'blog' }).waitFor()
    const shop = (await projectNamed('shop'))!
    const blog = (await projectNamed('blog'))!
    expect(shop.kind).toBe('git')
    expect(blog.kind).toBe('folder')
    expect(await page.locator(`[data-project-id="${shop.id}"]`).textContent()).toContain(dirs.shop)
    await screenshot(page, 'projects')
    expect(pageErrors).toEqual([])
  }, 90_000)

  it('filters conversations by the chosen project, remembers it, and creates conversations in it', async () => {
    const shop = (await projectNamed('shop'))!
    const blog = (await projectNamed('blog'))!
    await switcher().selectOption(shop.id)
    await page.reload()
    await expect.poll(() => switcher().inputValue()).toBe(shop.id)
    expect(await page.evaluate(`localStorage.getItem('hangar.project')`)).toBe(shop.id)

    await page.getByRole('link', { name: 'Conversations' }).click()
    const form = page.getByRole('region', { name: 'New conversation' })
    await form.getByLabel('Agent').selectOption('builtin')
    await form.getByRole('textbox', { name: 'Message' }).fill('Hello shop')
    await form.getByRole('button', { name: 'Send' }).click()
    await page.waitForURL(/\/conversations\/conv_/)
    const shopConversation = /\/conversations\/([^/]+)$/.exec(new URL(page.url()).pathname)![1]!
    const stored = await api<{ projectId: string | null }>('GET', `/api/conversations/${shopConversation}`)
    expect(stored.json.projectId).toBe(shop.id)
    // The run card names its project.
    await expect.poll(() => page.locator('section.run .project-name').first().textContent()).toBe('shop')

    await page.getByRole('link', { name: 'Conversations' }).click()
    const list = page.getByRole('list', { name: 'Conversations' })
    await list.getByRole('link', { name: /Hello shop/ }).waitFor()
    expect(await list.locator(`[data-project="${shop.id}"]`).first().textContent()).toContain('shop')
    await switcher().selectOption(blog.id)
    await page.getByText('No conversations in blog yet.').waitFor()
    expect(await list.getByRole('link').count()).toBe(0)

    // All projects: the form asks which one, and says so when it is left out.
    await switcher().selectOption('')
    await list.getByRole('link', { name: /Hello shop/ }).waitFor()
    await form.getByLabel('Agent').selectOption('builtin')
    await form.getByRole('textbox', { name: 'Message' }).fill('Hello blog')
    await form.getByRole('button', { name: 'Send' }).click()
    await expect
      .poll(() => form.getByRole('alert').textContent())
      .toBe('Choose the project this conversation works in.')
    await form.getByRole('combobox', { name: 'Project' }).selectOption(blog.id)
    await form.getByRole('button', { name: 'Send' }).click()
    await page.waitForURL(/\/conversations\/conv_/)
    const blogConversation = /\/conversations\/([^/]+)$/.exec(new URL(page.url()).pathname)![1]!
    expect(
      (await api<{ projectId: string | null }>('GET', `/api/conversations/${blogConversation}`)).json
        .projectId,
    ).toBe(blog.id)

    // The runs page names each run's project.
    await page.getByRole('link', { name: 'Runs' }).click()
    await expect
      .poll(() => page.locator(`td [data-project="${blog.id}"]`).count(), { timeout: 30_000 })
      .toBeGreaterThan(0)
    expect(pageErrors).toEqual([])
  }, 120_000)

  it('names the project and file on an approval card', async () => {
    const shop = (await projectNamed('shop'))!
    await switcher().selectOption(shop.id)
    await page.getByRole('link', { name: 'Conversations' }).click()
    const form = page.getByRole('region', { name: 'New conversation' })
    await form.getByLabel('Agent').selectOption('builtin')
    await form.getByRole('textbox', { name: 'Message' }).fill('Write it. FILE=docs/plan.txt')
    await form.getByRole('button', { name: 'Send' }).click()
    await page.waitForURL(/\/conversations\/conv_/)
    const card = page.getByRole('article', { name: /Proposal:/ })
    await card.waitFor({ timeout: 30_000 })
    expect(await card.locator('.action-where').textContent()).toBe('shop: docs/plan.txt')
    await page.getByRole('link', { name: /^Approvals/ }).click()
    const listed = page.getByRole('article', { name: /Proposal:/ })
    await listed.waitFor()
    expect(await listed.locator('.action-where').textContent()).toBe('shop: docs/plan.txt')
    await screenshot(page, 'approval-in-project')
    await listed.getByRole('button', { name: 'Reject' }).click()
    await listed.getByRole('button', { name: 'Reject' }).click()
    await page.getByText('Nothing is waiting for you.').waitFor()
  }, 90_000)

  it('lets the owner grant a member a project, and take it back', async () => {
    const added = await runHangar(['users', 'add', 'dana', '--json', '--data-dir', dataDir], { env })
    expect(added.code, added.stderr).toBe(0)
    const dana = JSON.parse(added.stdout) as { id: string; inviteUrl: string }
    const shop = (await projectNamed('shop'))!
    await page.getByRole('link', { name: 'Projects' }).click()
    const members = page.getByRole('group', { name: 'Members of shop' })
    await members.getByLabel('User id to grant shop').fill(dana.id)
    await members.getByRole('button', { name: 'Grant' }).click()
    await members.locator('code', { hasText: dana.id }).waitFor()
    expect((await projectNamed('shop'))!.members).toContain(dana.id)

    // Dana, in her own browser: shop is hers to use now, and she manages no members.
    const danaContext = await browser.newContext({ viewport: { width: 1280, height: 860 } })
    try {
      const danaPage = await danaContext.newPage()
      await danaPage.goto(dana.inviteUrl.replace(/^http:\/\/[^/]+/, daemon.url))
      await danaPage.waitForURL(/\/conversations$/)
      await danaPage.getByRole('link', { name: 'Projects' }).click()
      await danaPage.locator(`[data-project-id="${shop.id}"]`).waitFor()
      expect(await danaPage.getByRole('group', { name: /^Members of/ }).count()).toBe(0)
      // Adding and removing projects is the owner's (the daemon refuses a member anyway): no dead controls.
      await danaPage.getByText('The owner of this Hangar adds projects').waitFor()
      expect(await danaPage.getByRole('form', { name: 'Add a project' }).count()).toBe(0)
      expect(await danaPage.getByRole('button', { name: 'Remove', exact: true }).count()).toBe(0)
    } finally {
      await danaContext.close()
    }

    await members.getByRole('button', { name: `Remove ${dana.id} from shop` }).click()
    await expect.poll(() => members.locator('code', { hasText: dana.id }).count()).toBe(0)
    expect((await projectNamed('shop'))!.members ?? []).not.toContain(dana.id)
  }, 90_000)

  it('removes a project only after a confirmation', async () => {
    const blog = (await projectNamed('blog'))!
    await switcher().selectOption(blog.id)
    const row = page.locator(`[data-project-id="${blog.id}"]`)
    confirmAnswer = false
    await row.getByRole('button', { name: 'Remove', exact: true }).click()
    expect(await projectNamed('blog')).toBeDefined()
    confirmAnswer = true
    await row.getByRole('button', { name: 'Remove', exact: true }).click()
    await row.waitFor({ state: 'detached' })
    expect(await projectNamed('blog')).toBeUndefined()
    // It was the chosen one: the switcher falls back and no longer offers it.
    expect(await switcher().locator(`option[value="${blog.id}"]`).count()).toBe(0)
    expect(await page.evaluate(`localStorage.getItem('hangar.project')`)).toBeNull()
    expect(pageErrors).toEqual([])
  }, 60_000)
})
