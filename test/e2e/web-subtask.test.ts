// Issue 18 item 10 in real Chromium: a Claude Code sub-agent's work (the Agent/Task tool) is folded under
// the tool call that started it — collapsed, expandable — instead of reading as the main agent's.
// Real Claude Code on the mock model: the main turn asks for the Agent tool, the sub-agent writes a file.
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockModelServer, reply, startMockModelServer } from '../fixtures/mock-model-server.js'
import { launchChromium, screenshot } from '../helpers/browser.js'
import { type FeedProject, startFeedProject } from '../helpers/feed-project.js'
import { cleanEnv, type RunningDaemon, startDaemon } from '../helpers/hangar-cli.js'
import { loopbackOnlyEnv, realCliPath, startRefusingProxy, TEST_API_KEY } from '../helpers/real-cli-cases.js'

describe('web UI: sub-tasks', () => {
  let mock: MockModelServer
  let refusing: Awaited<ReturnType<typeof startRefusingProxy>>
  let shop: FeedProject
  let daemon: RunningDaemon
  let browser: Browser
  let page: Page

  beforeAll(async () => {
    mock = await startMockModelServer()
    refusing = await startRefusingProxy()
    shop = await startFeedProject('web-subtask', 'nothing to report')
    await writeFile(
      path.join(shop.project, 'hangar.yaml'),
      'agents:\n  delegator:\n    adapter: claude-code\n',
    )
    daemon = await startDaemon(['--data-dir', path.join(shop.root, 'data')], {
      env: cleanEnv({
        PATH: realCliPath(),
        HOME: shop.home,
        ANTHROPIC_BASE_URL: mock.url,
        ANTHROPIC_API_KEY: TEST_API_KEY,
        CLAUDE_CODE_MAX_RETRIES: '1',
        ...loopbackOnlyEnv(refusing.url),
      }),
      cwd: shop.project,
      timeoutMs: 60_000,
    })
    browser = await launchChromium()
    page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage()
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await daemon?.stop()
    await mock?.close()
    await refusing?.close()
    await shop?.close()
  })

  it('folds the sub-agent’s steps under its Agent call, collapsed until opened', async () => {
    const link = /Sign in: (\S+)/.exec(daemon.stdout())?.[1]
    await page.goto(link!)
    await page.waitForURL(/\/conversations$/)
    // The main turn delegates; the sub-agent's own request then follows the FILE= directive.
    mock.enqueue(
      reply().tool('Agent', {
        description: 'Write the file',
        prompt: 'Write it. FILE=delegated.txt',
        subagent_type: 'general-purpose',
        run_in_background: false,
      }),
    )
    const form = page.getByRole('region', { name: 'New conversation' })
    // Enabled once the daemon has detected the agents (slow on a loaded machine).
    await form.getByLabel('Agent').selectOption('delegator', { timeout: 120_000 })
    await form.getByRole('textbox', { name: 'Message' }).fill('Delegate this.')
    await form.getByRole('button', { name: 'Send' }).click()
    await page.waitForURL(/\/conversations\/conv_/)
    const run = page.locator('section.run').first()
    await expect.poll(() => run.getAttribute('data-status'), { timeout: 120_000 }).toBe('succeeded')
    const conversation = /\/conversations\/([^/]+)$/.exec(new URL(page.url()).pathname)![1]!
    expect(conversation).toMatch(/^conv_/)

    const message = run.locator('.agent-message')
    // At the top level: the Agent call only; the sub-agent's Write is inside it.
    const topLevel = message.locator(':scope > details.tool-call')
    await expect.poll(() => topLevel.count()).toBe(1)
    const subtask = topLevel.first()
    expect(await subtask.getAttribute('class')).toContain('subtask')
    expect(await subtask.locator(':scope > summary').innerText()).toMatch(/^Agent sub-task, \d+ step\(s\)/)
    // (Not by role: roles skip what a closed <details> hides.)
    const steps = subtask.locator('[aria-label="Sub-task of Agent"]')
    const nested = steps.locator('details.tool-call')
    expect(await nested.locator('.tool-name').allTextContents()).toEqual(['Write'])
    // Collapsed: the sub-agent's steps are not on screen until the call is opened.
    expect(await subtask.getAttribute('open')).toBeNull()
    expect(await nested.first().isVisible()).toBe(false)
    await subtask.locator(':scope > summary').click()
    await expect.poll(() => nested.first().isVisible()).toBe(true)
    await screenshot(page, 'subtask-expanded')
    // The sub-agent's file change is its own too.
    expect(
      await subtask
        .getByRole('group', { name: 'Sub-task of Agent' })
        .locator('.file-change code')
        .allInnerTexts(),
    ).toEqual(['delegated.txt'])
  }, 240_000)
})
