// Compare attempts in real Chromium against the built daemon: "Try with several agents" from the
// conversations page starts one prompt with two agents (the Cursor Agent stand-in: `writer` writes the
// FILE= of the prompt, `reader` is read-only), the comparison view shows them side by side with the
// project's real check command (`test -f notes.txt`) passing for one and failing for the other, and a pick
// keeps the writer and removes the reader's worktree and branch; then "Review and land" on the picked attempt
// opens its Review tab, a merge lands it, and the target branch has exactly the writer's tree.
// Screenshot: test-artifacts/web-ui/attempts-compared.png (its path is printed).
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AttemptGroup } from '../../src/core/api-types.js'
import { createApiClient } from '../helpers/api-client.js'
import { screenshot } from '../helpers/browser.js'
import type { RunningDaemon } from '../helpers/hangar-cli.js'
import { startWebFixture, type WebFixture } from '../helpers/web-fixture.js'

const FAKE_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/bin')

describe('web UI: compare attempts', () => {
  let web: WebFixture
  let shop: string
  let daemon: RunningDaemon
  let page: Page
  let token = ''
  let discarded: { path: string; branch: string | null }
  const { api } = createApiClient(() => ({ url: daemon.url, token }))

  beforeAll(async () => {
    web = await startWebFixture({
      prefix: 'hangar-web-attempts-',
      projectName: 'shop',
      files: {
        'hangar.yaml': [
          'agents:',
          '  writer: { adapter: cursor-agent }',
          '  reader: { adapter: cursor-agent, permissions: { mode: strict } }',
          'projects:',
          '  shop: { check: "test -f notes.txt" }',
        ].join('\n'),
      },
      commit: true,
      pathFirst: [FAKE_BIN],
    })
    ;({ project: shop, daemon, token } = web)
    page = await web.newPage()
  }, 120_000)
  afterAll(() => web?.close())

  it('starts attempts, shows them side by side with their checks, and picks one', async () => {
    await page.goto(daemon.signInLink)
    await page.waitForURL(/\/conversations$/)
    await page.getByRole('link', { name: 'Try with several agents' }).click()
    await page.waitForURL(/\/attempts$/)
    const form = page.getByRole('form', { name: 'Try with several agents' })
    await form.getByRole('textbox', { name: 'Prompt' }).fill('Please create the notes. FILE=notes.txt')
    await form.getByRole('checkbox', { name: /^writer/ }).check()
    await form.getByRole('checkbox', { name: /^reader/ }).check()
    await form.getByRole('button', { name: 'Start 2 attempts' }).click()
    await page.waitForURL(/\/attempts\/atg_/)
    const id = new URL(page.url()).pathname.split('/').at(-1)!

    const rows = page.getByRole('table', { name: 'Attempts side by side' }).locator('tbody tr')
    await expect.poll(() => rows.count(), { timeout: 30_000 }).toBe(2)
    const writer = rows.filter({ hasText: 'writer' })
    const reader = rows.filter({ hasText: 'reader' })
    await expect
      .poll(() => writer.getAttribute('data-check'), { timeout: 120_000, interval: 500 })
      .toBe('passed')
    await expect
      .poll(() => reader.getAttribute('data-check'), { timeout: 120_000, interval: 500 })
      .toBe('failed')
    expect(await writer.locator('.check-result').textContent()).toBe('passed (exit 0)')
    expect(await reader.locator('.check-result').textContent()).toBe('failed (exit 1)')
    expect(await writer.textContent()).toContain('+1 −0')
    console.log(`attempts screenshot: ${await screenshot(page, 'attempts-compared')}`)

    const before = (await api<AttemptGroup>('GET', `/api/attempts/${id}`)).json
    const readerWorkspace = (
      await api<{ id: string; path: string; branch: string | null }>(
        'GET',
        `/api/workspaces/${before.attempts[1]!.workspaceId}`,
      )
    ).json
    await writer.getByRole('button', { name: 'Pick writer' }).click()
    await expect.poll(() => writer.getAttribute('data-picked'), { timeout: 30_000 }).toBe('true')
    await expect.poll(() => reader.textContent()).toContain('discarded')
    const after = (await api<AttemptGroup>('GET', `/api/attempts/${id}`)).json
    expect(after.pickedConversationId).toBe(before.attempts[0]!.conversationId)
    expect(existsSync(readerWorkspace.path)).toBe(false)
    discarded = readerWorkspace
    expect(web.pageErrors).toEqual([])
  }, 240_000)

  it('goes from the picked attempt to its Review tab and lands it: the branch has exactly its tree', async () => {
    const { json: groups } = await api<{ attempts: AttemptGroup[] }>('GET', '/api/attempts')
    const group = groups.attempts[0]!
    const writerAttempt = group.attempts.find((attempt) => attempt.picked)!
    expect(writerAttempt.agent).toBe('writer')
    const picked = (await api<{ path: string }>('GET', `/api/workspaces/${writerAttempt.workspaceId}`)).json
    await page.goto(`${daemon.url}/attempts/${group.id}`)
    const writer = page
      .getByRole('table', { name: 'Attempts side by side' })
      .locator('tbody tr')
      .filter({ hasText: 'writer' })
    await writer.getByRole('link', { name: 'Review and land' }).click()
    await page.waitForURL(new RegExp(`/conversations/${writerAttempt.conversationId}/review$`))
    await page
      .getByRole('navigation', { name: 'Changed files' })
      .getByText('A notes.txt')
      .waitFor({ timeout: 15_000 })
    await page.getByRole('combobox', { name: 'Strategy' }).selectOption('merge')
    await page.getByRole('button', { name: 'Land' }).click()
    const status = page.getByRole('status').getByText(/Landed into (\S+) at [0-9a-f]{12}/)
    await status.waitFor({ timeout: 30_000 })
    const into = /Landed into (\S+) at/.exec((await status.textContent())!)![1]!
    const git = (cwd: string, ...args: string[]) =>
      execFileSync('git', args, { cwd, encoding: 'utf8' }).trim()
    expect(git(shop, 'rev-parse', `${into}^{tree}`)).toBe(git(picked.path, 'rev-parse', 'HEAD^{tree}'))
    expect(git(shop, 'ls-tree', '--name-only', into)).toContain('notes.txt')
    // The discarded attempt: no worktree (on disk or in git's list), no branch.
    expect(discarded.branch).toMatch(/^hangar\//)
    expect(git(shop, 'branch', '--list', discarded.branch!)).toBe('')
    const worktrees = git(shop, 'worktree', 'list', '--porcelain')
    expect(worktrees).toContain(picked.path)
    expect(worktrees).not.toContain(discarded.path)
    expect(existsSync(discarded.path)).toBe(false)
    expect(git(shop, 'status', '--porcelain')).toBe('')
    expect(web.pageErrors).toEqual([])
  }, 120_000)
})
