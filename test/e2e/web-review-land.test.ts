// Issue 22 in real Chromium against the built daemon: the owner opens a conversation's Review tab, sees the
// file the agent (the fake cursor-agent) made, comments on its line, sends the review — which starts the
// agent's follow-up run — sees the comment next to its line, flagged "outdated" once the follow-up (told by
// the comment to, TEXT=) rewrote that line, and lands the workspace; the branch it came from then has
// exactly its tree.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApiClient } from '../helpers/api-client.js'
import { screenshot } from '../helpers/browser.js'
import { gitIn } from '../helpers/git-fixture.js'
import type { RunningDaemon } from '../helpers/hangar-cli.js'
import { startWebFixture, type WebFixture } from '../helpers/web-fixture.js'

const FAKE_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/bin')

describe('web UI: review, comment and land', () => {
  let web: WebFixture
  let project: string
  let daemon: RunningDaemon
  let token: string
  let page: Page
  const { api, waitForStatus } = createApiClient(() => ({ url: daemon.url, token }))

  beforeAll(async () => {
    web = await startWebFixture({
      prefix: 'hangar-web-review-',
      files: { 'README.md': '# project\n' },
      commit: true,
      pathFirst: [FAKE_BIN],
      viewport: { width: 1280, height: 900 },
    })
    ;({ project, daemon, token } = web)
    page = await web.newPage()
  }, 120_000)
  afterAll(() => web?.close())

  it('walks review → comment → the agent’s follow-up → land', async () => {
    const created = await api<{ id: string }>('POST', '/api/conversations', { agent: 'cursor-agent' })
    const sent = await api<{ id: string }>('POST', `/api/conversations/${created.json.id}/messages`, {
      text: 'Please create a file. FILE=hello.txt',
    })
    expect((await waitForStatus(sent.json.id)).status).toBe('succeeded')

    await page.goto(daemon.signInLink)
    await page.waitForURL(/\/conversations$/)
    await page.goto(`${daemon.url}/conversations/${created.json.id}`)
    await page.getByRole('link', { name: 'Review' }).click()
    const files = page.getByRole('navigation', { name: 'Changed files' })
    await files.getByText('A hello.txt').waitFor({ timeout: 15_000 })
    expect(await files.innerText()).toContain('uncommitted')

    await page.getByRole('button', { name: 'hello.txt line 1' }).click()
    await page
      .getByRole('textbox', { name: 'Comment' })
      .fill('Say hello to the user by name. FILE=hello.txt TEXT=hello-user')
    await page.getByRole('button', { name: 'Add comment' }).click()
    await page.getByRole('button', { name: 'Send review (1)' }).click()
    await page.getByText(/Review sent; the agent answers in run (\S+)/).waitFor({ timeout: 15_000 })
    const note = page
      .getByRole('region', { name: 'Diff of hello.txt' })
      .getByRole('note', { name: 'Comment on hello.txt line 1' })
    await note.waitFor({ timeout: 15_000 })
    expect(await note.textContent()).toContain('Say hello to the user by name.')
    const { json: conversation } = await api<{ runs: { id: string; prompt: string }[] }>(
      'GET',
      `/api/conversations/${created.json.id}`,
    )
    const followUp = conversation.runs.find((run) => run.prompt.includes('Say hello to the user by name.'))
    expect(followUp?.prompt).toContain('## 1. hello.txt, line 1')
    expect((await waitForStatus(followUp!.id)).status).toBe('succeeded')
    // The follow-up rewrote line 1: the comment stays, flagged outdated (the page reloads as the run ends).
    await expect
      .poll(() => note.getAttribute('data-outdated'), { timeout: 30_000, interval: 250 })
      .toBe('true')
    expect(await note.getByText('outdated', { exact: true }).isVisible()).toBe(true)
    const comments = await api<{ comments: { outdated: boolean }[] }>(
      'GET',
      `/api/workspaces/${(await api<{ workspaceId: string }>('GET', `/api/conversations/${created.json.id}`)).json.workspaceId}/review`,
    )
    expect(comments.json.comments).toHaveLength(1)
    expect(comments.json.comments[0]!.outdated).toBe(true)

    await page.getByRole('combobox', { name: 'Strategy' }).selectOption('squash')
    await page.getByRole('button', { name: 'Land' }).click()
    await page
      .getByRole('status')
      .getByText(/Landed into main at [0-9a-f]{12}/)
      .waitFor({ timeout: 30_000 })
    await screenshot(page, 'review-landed')
    expect(await readFile(path.join(project, 'hello.txt'), 'utf8')).toBe('hello-user\n')
    expect(gitIn(project, 'status', '--porcelain')).toBe('')
    expect(web.pageErrors).toEqual([])
  }, 120_000)
})
