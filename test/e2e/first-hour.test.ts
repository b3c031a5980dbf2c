// Issue 20's "Done when": a new user's first hour, the way the README tells it, in real Chromium against
// the built daemon, with real Claude Code and the built-in agent on the mock model. Start Hangar and sign
// in with the printed link; add two projects by path (a git repository and a plain folder; a wrong path is
// refused under the input); hold a conversation in the first with Claude Code (it writes a file), switch to
// the built-in agent and back with the context handed over each way; a conversation in the second project
// with the switcher filtering the list; the cost of every run, exactly what the mock's usage costs at
// src/proxy/pricing.ts's prices, in the chat, on the Runs page and on the Usage page. The last step is the
// workspace lifecycle (a project whose `setup` installs its dependencies and whose `.env` is copied): it
// needs hangar.yaml's `projects.<name>.workspace` and fails on a daemon without it.
// Screenshots: test-artifacts/web-ui/first-hour-*.png (their paths are printed).
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { priceFor } from '../../src/proxy/pricing.js'
import {
  FINAL_TEXT,
  type MockModelServer,
  type RecordedRequest,
  startMockModelServer,
} from '../fixtures/mock-model-server.js'
import { createApiClient } from '../helpers/api-client.js'
import { ARTIFACTS_DIR, launchChromium, screenshot } from '../helpers/browser.js'
import { gitIn } from '../helpers/git-fixture.js'
import { cleanEnv, type RunningDaemon, runHangar, startDaemon } from '../helpers/hangar-cli.js'
import { loopbackOnlyEnv, realCliPath, startRefusingProxy, TEST_API_KEY } from '../helpers/real-cli-cases.js'
import { makeTempDir } from '../helpers/store-engines.js'

interface ProjectJson {
  id: string
  name: string
  kind: 'git' | 'folder'
}

interface RunJson {
  id: string
  agent: string
  status: string
  reason: string | null
  conversationId: string | null
  workspaceId?: string | null
  cwd: string
  usage?: { costUsd?: number; costSource?: string }
}

interface AnthropicMessage {
  role: string
  content: string | { type: string; text?: string }[]
}

const textOf = (message: AnthropicMessage) =>
  typeof message.content === 'string'
    ? message.content
    : message.content.map((block) => (block.type === 'text' ? (block.text ?? '') : '')).join('\n')

const messagesOf = (request: RecordedRequest) =>
  ((request.body as { messages?: AnthropicMessage[] }).messages ?? []).map((message) => ({
    role: message.role,
    text: textOf(message),
  }))

// The web UI's dollars (web/src/lib/format.ts).
const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 4 })

/**
 * What the proxy charged for these answers: the mock's usage at the price table's rates, or undefined when
 * a model it answered as has no price (the run's cost is then its agent's own figure, marked so).
 */
function costOfAnswers(requests: RecordedRequest[]): number | undefined {
  let total = 0
  for (const request of requests) {
    if (!request.answered) continue
    const { model, usage } = request.answered
    const price = priceFor(model)
    if (!price) return undefined
    total +=
      (usage.input * price.input +
        usage.output * price.output +
        usage.cacheRead * price.cacheRead +
        usage.cacheWrite * price.cacheWrite) /
      1_000_000
  }
  return total
}

const RUN_TIMEOUT = 240_000
/** The lifecycle project's setup: installs its local package dependency the way a package manager would, offline. */
const SETUP =
  'mkdir -p node_modules/leftpad && cp vendor/leftpad/* node_modules/leftpad/ && echo installed leftpad'

describe("a new user's first hour (README, Chromium, real Claude Code on the mock model)", () => {
  let mock: MockModelServer
  let refusing: Awaited<ReturnType<typeof startRefusingProxy>>
  let root: string
  let start: string
  let dataDir: string
  let env: NodeJS.ProcessEnv
  let daemon: RunningDaemon
  let token = ''
  let browser: Browser
  let page: Page
  const pageErrors: string[] = []
  const shots: string[] = []
  const dirs = { shop: '', notes: '', app: '' }
  /** Each run's model answers, by run id: what its cost must be. */
  const answersOf = new Map<string, RecordedRequest[]>()
  const { api } = createApiClient(() => ({ url: daemon.url, token }))

  const shot = async (name: string) => shots.push(await screenshot(page, `first-hour-${name}`))
  /** The chat as it is on screen: a full-page shot would paint the sticky composer over the last run. */
  async function chatShot(name: string): Promise<void> {
    await runs().last().scrollIntoViewIfNeeded()
    const file = path.join(ARTIFACTS_DIR, `first-hour-${name}.png`)
    await mkdir(ARTIFACTS_DIR, { recursive: true })
    await page.screenshot({ path: file })
    shots.push(file)
  }
  const addForm = () => page.getByRole('form', { name: 'Add a project' })
  const switcher = () => page.getByRole('banner').getByRole('combobox', { name: 'Project' })
  const runs = () => page.locator('section.run')
  const projectNamed = async (name: string) =>
    (await api<{ projects: ProjectJson[] }>('GET', '/api/projects')).json.projects.find(
      (project) => project.name === name,
    )
  const conversationId = () => /\/conversations\/([^/]+)$/.exec(new URL(page.url()).pathname)?.[1] ?? ''

  async function addProject(projectPath: string, name: string): Promise<void> {
    await addForm().getByLabel('Path on the daemon’s host').fill(projectPath)
    await addForm().getByLabel(/^Name/).fill(name)
    await addForm().getByRole('button', { name: 'Add project' }).click()
  }

  async function eventsOf(runId: string): Promise<{ type: string; [field: string]: unknown }[]> {
    const shown = await runHangar(['runs', 'show', runId, '--events', '--json', '--data-dir', dataDir], {
      env,
      cwd: start,
    })
    expect(shown.code, shown.stderr).toBe(0)
    return (JSON.parse(shown.stdout) as { events: { type: string; [field: string]: unknown }[] }).events
  }

  /** Sends from the chat (or the new-conversation form) and waits for the run to end; returns it. */
  async function send(text: string, agent: string, firstInConversation: boolean): Promise<RunJson> {
    const before = mock.requests.length
    const count = firstInConversation ? 0 : await runs().count()
    if (firstInConversation) {
      await page.getByRole('link', { name: 'Conversations' }).click()
      const form = page.getByRole('region', { name: 'New conversation' })
      await form.getByLabel('Agent').selectOption(agent)
      await form.getByRole('textbox', { name: 'Message' }).fill(text)
      await form.getByRole('button', { name: 'Send' }).click()
      await page.waitForURL(/\/conversations\/conv_/)
    } else {
      await page.getByLabel('Agent').selectOption(agent)
      await page.getByRole('textbox', { name: 'Message' }).fill(text)
      await page.getByRole('button', { name: 'Send' }).click()
    }
    await expect.poll(() => runs().count(), { timeout: 30_000 }).toBe(count + 1)
    const run = runs().nth(count)
    await expect
      .poll(() => run.getAttribute('data-status'), { timeout: RUN_TIMEOUT, interval: 500 })
      .toMatch(/^(succeeded|failed|cancelled)$/)
    const runId = (await run.getAttribute('data-run-id'))!
    const stored = (await api<RunJson>('GET', `/api/runs/${runId}`)).json
    expect(stored.status, stored.reason ?? '').toBe('succeeded')
    expect(stored.agent).toBe(agent)
    answersOf.set(runId, mock.requests.slice(before))
    return stored
  }

  /** The model requests since `from` whose last message carries `text` (the agent's own turn, not a side request). */
  const requestsAnswering = (requests: RecordedRequest[], text: string) =>
    requests.filter(
      (request) =>
        request.method === 'POST' &&
        (request.body as { tools?: unknown[] }).tools?.length &&
        messagesOf(request).at(-1)?.text.includes(text),
    )

  beforeAll(async () => {
    mock = await startMockModelServer()
    refusing = await startRefusingProxy()
    root = await makeTempDir('hangar-first-hour-')
    start = path.join(root, 'start')
    dataDir = path.join(root, 'data')
    dirs.shop = path.join(root, 'shop')
    dirs.notes = path.join(root, 'notes')
    dirs.app = path.join(root, 'app')
    for (const dir of [start, dirs.shop, dirs.notes, dirs.app]) await mkdir(dir)
    // Project A: a git repository with a commit, so its conversations get worktrees.
    gitIn(dirs.shop, 'init', '-q')
    await writeFile(path.join(dirs.shop, 'README.md'), '# shop\n')
    gitIn(dirs.shop, 'add', '.')
    gitIn(dirs.shop, 'commit', '-q', '-m', 'start')
    // Project B: a plain folder.
    await writeFile(path.join(dirs.notes, 'todo.txt'), 'buy milk\n')
    // Project C (the lifecycle step): a repository whose dependency is a local package and whose .env is
    // git-ignored, as a real checkout's would be.
    await mkdir(path.join(dirs.app, 'vendor', 'leftpad'), { recursive: true })
    await writeFile(
      path.join(dirs.app, 'vendor', 'leftpad', 'package.json'),
      JSON.stringify({ name: 'leftpad', version: '1.0.0', main: 'index.js' }),
    )
    await writeFile(path.join(dirs.app, 'vendor', 'leftpad', 'index.js'), 'module.exports = (s) => ` ${s}`\n')
    await writeFile(
      path.join(dirs.app, 'package.json'),
      JSON.stringify({ name: 'app', version: '1.0.0', dependencies: { leftpad: 'file:vendor/leftpad' } }),
    )
    await writeFile(path.join(dirs.app, '.gitignore'), '.env\nnode_modules/\n')
    gitIn(dirs.app, 'init', '-q')
    gitIn(dirs.app, 'add', '.')
    gitIn(dirs.app, 'commit', '-q', '-m', 'start')
    await writeFile(path.join(dirs.app, '.env'), 'APP_SECRET=first-hour-env\n')

    env = cleanEnv({
      PATH: realCliPath(),
      HOME: root,
      // The built-in agent's provider and Claude Code's endpoint: the mock model (README: provider keys).
      ANTHROPIC_API_KEY: TEST_API_KEY,
      ANTHROPIC_BASE_URL: mock.url,
      CLAUDE_CODE_MAX_RETRIES: '1',
      ...loopbackOnlyEnv(refusing.url),
    })
    daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: start, timeoutMs: 60_000 })
    token = (JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string }).token
    browser = await launchChromium()
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
    page = await context.newPage()
    page.on('pageerror', (error) => pageErrors.push(error.message))
    page.on('dialog', (dialog) => void dialog.accept())
  }, 120_000)

  afterAll(async () => {
    if (shots.length > 0) console.log(`first-hour screenshots:\n${shots.join('\n')}`)
    await browser?.close()
    await daemon?.stop()
    await mock?.close()
    await refusing?.close()
  })

  it('signs in with the link hangar up printed', async () => {
    const link = /Sign in: (\S+)/.exec(daemon.stdout())?.[1]
    expect(link, daemon.stdout()).toMatch(/\/login#hgl_/)
    await page.goto(link!)
    await page.waitForURL(/\/conversations$/)
    await expect.poll(() => page.getByRole('navigation', { name: 'Main' }).isVisible()).toBe(true)
    await shot('1-signed-in')
  }, 60_000)

  it('adds two projects by path; a wrong path is refused with the reason under the input', async () => {
    await page.getByRole('link', { name: 'Projects' }).click()
    await addForm().waitFor()
    const missing = path.join(root, 'no-such-folder')
    await addProject(missing, 'ghost')
    const error = addForm().locator('[data-field="path"]')
    await expect
      .poll(() => error.textContent(), { timeout: 15_000 })
      .toBe(
        `project path ${missing} does not exist on the daemon's host; create the directory first, or check the spelling`,
      )
    expect(await addForm().getByLabel('Path on the daemon’s host').getAttribute('aria-invalid')).toBe('true')
    // The message under one input leaves its neighbours as they were (they stretched to its height).
    const heightOf = async (label: string | RegExp) =>
      (await addForm().getByLabel(label).boundingBox())?.height
    expect(await heightOf(/^Name/)).toBe(await heightOf('Path on the daemon’s host'))
    expect(await heightOf(/^Default agent/)).toBeLessThan(60)
    await shot('2-wrong-path')

    await addProject(dirs.shop, 'shop')
    await page.locator('[data-project-id]', { hasText: 'shop' }).waitFor()
    await addProject(dirs.notes, 'notes')
    await page.locator('[data-project-id]', { hasText: 'notes' }).waitFor()
    expect(await addForm().locator('[data-field="path"]').count()).toBe(0)
    expect((await projectNamed('shop'))?.kind).toBe('git')
    expect((await projectNamed('notes'))?.kind).toBe('folder')
    expect(await projectNamed('ghost')).toBeUndefined()
    await shot('3-projects')
    expect(pageErrors).toEqual([])
  }, 60_000)

  let claudeRun: RunJson
  let builtinRun: RunJson
  let shopConversation = ''

  it(
    'talks to Claude Code in the first project: its reply and its file in the chat',
    async () => {
      const shop = (await projectNamed('shop'))!
      await switcher().selectOption(shop.id)
      claudeRun = await send('Create the notes. FILE=notes.txt CONTENT=hello', 'claude-code', true)
      shopConversation = conversationId()
      expect(claudeRun.conversationId).toBe(shopConversation)
      const run = runs().first()
      expect(await run.locator('.agent-text').last().textContent()).toContain(FINAL_TEXT)
      const change = run.locator('details.file-change')
      expect(await change.locator('summary').textContent()).toMatch(/create\s*notes\.txt/)
      expect(await change.locator('.diff-add').allTextContents()).toContainEqual(
        expect.stringContaining('+hello'),
      )
      expect(await run.locator('.project-name').first().textContent()).toBe('shop')
      // In the conversation's own worktree, not in the user's checkout.
      expect(await readFile(path.join(claudeRun.cwd, 'notes.txt'), 'utf8')).toBe('hello\n')
      expect(claudeRun.cwd).not.toBe(dirs.shop)
      await chatShot('4-claude')
    },
    RUN_TIMEOUT + 60_000,
  )

  it(
    "switches to the built-in agent mid-conversation: it gets Claude's turn and file",
    async () => {
      builtinRun = await send('What is in the workspace now? NOTOOL', 'builtin', false)
      const request = requestsAnswering(answersOf.get(builtinRun.id)!, 'What is in the workspace now?')[0]
      expect(request, 'the built-in agent sent no model request').toBeDefined()
      const history = messagesOf(request!)
      expect(history.map((message) => message.role)).toEqual(['user', 'assistant', 'user'])
      expect(history[0]!.text).toBe('Create the notes. FILE=notes.txt CONTENT=hello')
      expect(history[1]!.text).toContain(
        `claude-code replied: ${FINAL_TEXT}\nFiles it changed:\n- notes.txt (create`,
      )
      const run = runs().nth(1)
      expect(await run.locator('.run-agent').textContent()).toBe('builtin')
      expect(await run.locator('.agent-text').last().textContent()).toBe('hello from mock')
      await chatShot('5-builtin')
    },
    RUN_TIMEOUT + 60_000,
  )

  it(
    "switches back to Claude Code: it hears the built-in agent's turn",
    async () => {
      const resumed = await send('Carry on. NOTOOL', 'claude-code', false)
      const request = requestsAnswering(answersOf.get(resumed.id)!, 'Carry on. NOTOOL')[0]
      expect(request, 'Claude sent no model request with the new message').toBeDefined()
      const last = messagesOf(request!).at(-1)!.text
      expect(last).toContain('Since you last spoke in this conversation')
      expect(last).toContain('User: What is in the workspace now? NOTOOL')
      expect(last).toContain('builtin replied: hello from mock\n')
      expect(await runs().nth(2).locator('.agent-text').last().textContent()).toBeTruthy()
      await chatShot('6-claude-again')
    },
    RUN_TIMEOUT + 60_000,
  )

  it(
    'talks to the built-in agent and Claude Code in the second project (a plain folder); the switcher filters the list',
    async () => {
      const notes = (await projectNamed('notes'))!
      const shop = (await projectNamed('shop'))!
      await switcher().selectOption(notes.id)
      const run = await send('Hello notes.', 'builtin', true)
      const notesConversation = conversationId()
      expect(
        (await api<{ projectId: string }>('GET', `/api/conversations/${notesConversation}`)).json.projectId,
      ).toBe(notes.id)
      expect(run.conversationId).toBe(notesConversation)
      // Claude Code in the same conversation: a plain folder's conversation works in a copy of it. (The
      // built-in agent's turn above carries no mock directive: handed to Claude, a NOTOOL would stop its write.)
      const claude = await send('Tick it off. FILE=done.txt CONTENT=milk', 'claude-code', false)
      expect(await runs().nth(1).locator('details.file-change summary').textContent()).toMatch(
        /create\s*done\.txt/,
      )
      expect(await readFile(path.join(claude.cwd, 'done.txt'), 'utf8')).toBe('milk\n')
      expect(await readFile(path.join(claude.cwd, 'todo.txt'), 'utf8')).toBe('buy milk\n')
      expect(claude.cwd).not.toBe(dirs.notes)
      await chatShot('7-notes-chat')

      await page.getByRole('link', { name: 'Conversations' }).click()
      const list = page.getByRole('list', { name: 'Conversations' })
      await expect
        .poll(() => list.getByRole('link').allTextContents())
        .toEqual([expect.stringContaining('Hello notes')])
      await shot('7-list-notes-only')
      await switcher().selectOption(shop.id)
      await expect
        .poll(() => list.getByRole('link').allTextContents())
        .toEqual([expect.stringContaining('Create the notes.')])
      expect(pageErrors).toEqual([])
    },
    2 * RUN_TIMEOUT + 60_000,
  )

  it("shows each run's cost as the price table or the agent makes it, in the chat, on Runs and on Usage", async () => {
    expect(answersOf.size).toBe(5)
    // Per run: the price table's figure for the mock's usage when every answer is priced; else the figure
    // the agent reported itself (its one usage event), shown with "(agent)".
    const expected = new Map<string, { agent: string; cost: number; shown: string; byAgent: boolean }>()
    for (const [runId, requests] of answersOf) {
      const stored = (await api<RunJson>('GET', `/api/runs/${runId}`)).json
      const priced = costOfAnswers(requests)
      if (priced !== undefined) {
        expect(stored.usage?.costSource, runId).toBe('proxy')
        expect(stored.usage?.costUsd).toBeCloseTo(priced, 9)
        expect(priced).toBeGreaterThan(0)
        expected.set(runId, { agent: stored.agent, cost: priced, shown: usd.format(priced), byAgent: false })
      } else {
        const reported = (await eventsOf(runId)).filter(
          (event) => event.type === 'usage' && event.source === 'agent',
        ) as { costUsd?: number }[]
        expect(reported.length, runId).toBe(1)
        const cost = reported[0]!.costUsd!
        expect(cost).toBeGreaterThan(0)
        expect(stored.usage?.costSource, runId).toBe('agent')
        expect(stored.usage?.costUsd).toBe(cost)
        expected.set(runId, {
          agent: stored.agent,
          cost,
          shown: `${usd.format(cost)} (agent)`,
          byAgent: true,
        })
      }
    }
    // The built-in agent's runs are always priced by the proxy (claude-sonnet-4-6 is in the table).
    expect([...expected.values()].filter((run) => run.agent === 'builtin' && !run.byAgent)).toHaveLength(2)

    // The chat of the first conversation: each run's footer.
    await page.goto(`${daemon.url}/conversations/${shopConversation}`)
    await expect.poll(() => runs().count(), { timeout: 30_000 }).toBe(3)
    for (let index = 0; index < 3; index += 1) {
      const runId = (await runs().nth(index).getAttribute('data-run-id'))!
      await expect
        .poll(() => runs().nth(index).locator('.run-cost').textContent())
        .toBe(expected.get(runId)!.shown)
    }
    await chatShot('8-chat-costs')
    // The Runs page (all projects).
    await switcher().selectOption('')
    await page.getByRole('link', { name: 'Runs' }).click()
    for (const [runId, run] of expected) {
      const row = page.locator(`tr[data-run-id="${runId}"]`)
      await row.waitFor({ timeout: 30_000 })
      expect(await row.locator('td').nth(6).textContent()).toBe(run.shown)
    }
    await shot('9-runs')
    // The Usage page: per agent and in total (an agent-costed run counts its agent's figure once).
    await page.getByRole('link', { name: 'Usage' }).click()
    const perAgent = page.getByRole('table', { name: 'Usage per agent' })
    await perAgent.locator('tbody tr').first().waitFor()
    const sums = new Map<string, { cost: number; agentCost: number }>()
    for (const run of expected.values()) {
      const sum = sums.get(run.agent) ?? { cost: 0, agentCost: 0 }
      sum.cost += run.cost
      if (run.byAgent) sum.agentCost += run.cost
      sums.set(run.agent, sum)
    }
    const summary = ({ cost, agentCost }: { cost: number; agentCost: number }) =>
      `${usd.format(cost)}${agentCost <= 0 ? '' : agentCost >= cost ? ' (agent)' : ' (part agent)'}`
    for (const [agent, sum] of sums) {
      const row = perAgent.locator('tbody tr', { hasText: agent })
      await expect.poll(() => row.locator('td').allTextContents()).toContain(summary(sum))
    }
    const total = [...sums.values()].reduce(
      (all, sum) => ({ cost: all.cost + sum.cost, agentCost: all.agentCost + sum.agentCost }),
      { cost: 0, agentCost: 0 },
    )
    expect(await page.locator('.stat-value').allTextContents()).toContain(summary(total))
    await shot('10-usage')
    expect(pageErrors).toEqual([])
  }, 90_000)

  // The workspace lifecycle (README "Workspace lifecycle: ready to work in"): hangar.yaml names what each new
  // workspace of the project gets. Editing hangar.yaml takes a restart of the daemon, as the README says.
  it(
    "lifecycle: a project's setup installs its dependencies and its .env is copied before Claude's first turn",
    async () => {
      await page.getByRole('link', { name: 'Projects' }).click()
      await addProject(dirs.app, 'app')
      await page.locator('[data-project-id]', { hasText: 'app' }).waitFor()
      await writeFile(
        path.join(start, 'hangar.yaml'),
        [
          'projects:',
          '  app:',
          '    workspace:',
          "      copy: ['.env']",
          // Installs the local package dependency the way a package manager would, with no network.
          `      setup: '${SETUP}'`,
        ].join('\n'),
      )
      const port = new URL(daemon.url).port
      await daemon.stop()
      daemon = await startDaemon(['--data-dir', dataDir, '--port', port], {
        env,
        cwd: start,
        timeoutMs: 60_000,
      })
      token = (JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string })
        .token

      const app = (await projectNamed('app'))!
      await page.reload()
      await switcher().selectOption(app.id)
      const run = await send('Write the check. FILE=check.txt CONTENT=ready', 'claude-code', true)
      expect(run.cwd).not.toBe(dirs.app)
      expect(await readFile(path.join(run.cwd, '.env'), 'utf8')).toBe('APP_SECRET=first-hour-env\n')
      expect(await readFile(path.join(run.cwd, 'node_modules', 'leftpad', 'index.js'), 'utf8')).toContain(
        'module.exports',
      )
      expect(await readFile(path.join(run.cwd, 'check.txt'), 'utf8')).toBe('ready\n')
      // The setup ran before Claude's turn, and its output is in the chat (README: run events).
      const events = await eventsOf(run.id)
      expect(events.find((event) => event.type === 'workspace-setup-start')).toMatchObject({ command: SETUP })
      expect(events.find((event) => event.type === 'workspace-setup-end')).toMatchObject({
        status: 'succeeded',
        exitCode: 0,
      })
      const setupEnd = events.findIndex((event) => event.type === 'workspace-setup-end')
      expect(setupEnd).toBeLessThan(events.findIndex((event) => event.type === 'tool-call'))
      await expect.poll(() => runs().first().textContent()).toContain('installed leftpad')
      await chatShot('11-lifecycle')
      expect(pageErrors).toEqual([])
    },
    RUN_TIMEOUT + 120_000,
  )
})
