// Issue 18 item 4 — interrupted runs could not be resumed: the agent's session id was stored only at
// `run-end`, so a run whose daemon died (SIGKILL) mid-run had none, `hangar run --resume` answered "has no
// agent session", and a conversation's next message started afresh (or resumed an older session).
// Real Claude Code on the mock model: its first model exchange completes (a file written through its own
// tool), the mock holds the follow-up request open, the daemon is SIGKILLed and restarted; the run is
// `interrupted` with the session id the stream revealed, and resuming it (CLI, conversation message, the
// web UI's Resume control) sends Claude's next request with the first turn in it.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { type ApiRun, createApiClient } from '../helpers/api-client.js'
import { launchChromium, screenshot } from '../helpers/browser.js'
import { type FeedProject, startFeedProject } from '../helpers/feed-project.js'
import { cleanEnv, type RunningDaemon, runHangar, startDaemon } from '../helpers/hangar-cli.js'
import {
  loopbackOnlyEnv,
  realCliPath,
  startRefusingProxy,
  TEST_API_KEY,
  waitFor,
} from '../helpers/real-cli-cases.js'

interface StoredRun extends ApiRun {
  sessionId: string | null
  continues: string | null
  conversationId: string | null
  prompt: string
}

interface Envelope {
  runId: string
  type: string
  [field: string]: unknown
}

describe('resuming interrupted runs (real Claude Code, daemon SIGKILLed mid-run)', () => {
  let mock: MockModelServer
  let refusing: Awaited<ReturnType<typeof startRefusingProxy>>
  let shop: FeedProject
  let env: NodeJS.ProcessEnv
  let daemon: RunningDaemon | undefined
  let token = ''
  let browser: Browser | undefined
  const { api, waitForStatus } = createApiClient(() => ({ url: daemon!.url, token }))

  const dataDir = () => path.join(shop.root, 'data')

  async function start(): Promise<void> {
    daemon = await startDaemon([], { env, cwd: shop.project, timeoutMs: 60_000 })
    token = (JSON.parse(await readFile(path.join(dataDir(), 'daemon.json'), 'utf8')) as { token: string })
      .token
  }

  beforeAll(async () => {
    mock = await startMockModelServer()
    refusing = await startRefusingProxy()
    shop = await startFeedProject('resume', 'unused')
    // A commit, so a conversation can have a worktree of its own.
    execFileSync('git', ['commit', '-q', '--allow-empty', '-m', 'start'], {
      cwd: shop.project,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
      },
    })
    env = cleanEnv({
      PATH: realCliPath(),
      HOME: shop.home,
      HANGAR_DATA_DIR: path.join(shop.root, 'data'),
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_API_KEY: TEST_API_KEY,
      CLAUDE_CODE_MAX_RETRIES: '1',
      ...loopbackOnlyEnv(refusing.url),
    })
    await start()
  }, 90_000)

  afterAll(async () => {
    await browser?.close()
    await daemon?.stop()
    await mock?.close()
    await refusing?.close()
    await shop?.close()
  })

  /** The Claude request that answers the tool result of the file `file` (the one the mock holds open). */
  const followUpOf = (file: string) =>
    mock.requests.find(
      (request) =>
        request.method === 'POST' &&
        request.rawBody.includes(`FILE=${file}`) &&
        request.rawBody.includes('"tool_result"'),
    )

  /**
   * Waits until Claude wrote `file` and its follow-up request hangs at the mock, then SIGKILLs the daemon
   * and starts it again. Returns the session id Claude sent with that request.
   */
  async function crashMidRun(runId: string, directory: string, file: string): Promise<string> {
    const wrote = await waitFor(() => existsSync(path.join(directory, file)), 120_000)
    expect(wrote, `Claude did not write ${file}`).toBe(true)
    expect(await waitFor(() => followUpOf(file) !== undefined, 60_000)).toBe(true)
    const session = followUpOf(file)!.headers['x-claude-code-session-id']
    expect(session).toBeTruthy()
    expect((await api<StoredRun>('GET', `/api/runs/${runId}`)).json.status).toBe('running')
    daemon!.child.kill('SIGKILL')
    await daemon!.stop()
    await start()
    const interrupted = await waitForStatus<StoredRun>(runId, ['interrupted'], 60_000)
    expect(interrupted.status).toBe('interrupted')
    return session!
  }

  /** A browser page signed in to the current daemon (a restarted one has a new port and a new link). */
  async function signedInPage(): Promise<Page> {
    browser ??= await launchChromium()
    const page = await (await browser.newContext()).newPage()
    await page.goto(/Sign in: (\S+)/.exec(daemon!.stdout())![1]!)
    await page.waitForURL(/\/conversations$/)
    return page
  }

  /** The mock's requests from index `from` on that carry `text`. */
  const laterRequestsWith = (from: number, text: string) =>
    mock.requests.slice(from).filter((request) => request.method === 'POST' && request.rawBody.includes(text))

  it('stores the session id as soon as Claude reveals it, and hangar run --resume continues it', async () => {
    const submitted = await api<StoredRun>('POST', '/api/runs', {
      agent: 'claude-code',
      prompt: 'Please create a file. FILE=first.txt HANG',
    })
    expect(submitted.status, JSON.stringify(submitted.json)).toBe(201)
    const runId = submitted.json.id
    const session = await crashMidRun(runId, shop.project, 'first.txt')

    const interrupted = (await api<StoredRun>('GET', `/api/runs/${runId}`)).json
    expect(interrupted.sessionId).toBe(session)

    const before = mock.requests.length
    const result = await runHangar(['run', '--resume', runId, '--json', 'Now another one. FILE=second.txt'], {
      env,
      cwd: shop.project,
      timeoutMs: 180_000,
    })
    expect(result.code, `${result.stderr}\n${result.stdout.slice(-2000)}`).toBe(0)
    expect(existsSync(path.join(shop.project, 'second.txt'))).toBe(true)
    const envelopes = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Envelope)
    expect(envelopes.at(-1)).toMatchObject({ type: 'run-end', status: 'succeeded' })
    // Claude's first request of the resumed run carries the interrupted run's turn: its prompt and the
    // tool call that wrote first.txt.
    const resumed = laterRequestsWith(before, 'FILE=second.txt')
    expect(resumed.length).toBeGreaterThan(0)
    expect(resumed[0]!.rawBody).toContain('FILE=first.txt HANG')
    expect(resumed[0]!.rawBody).toContain('"tool_result"')
    const resumedRun = (await api<StoredRun>('GET', `/api/runs/${envelopes[0]!.runId}`)).json
    expect(resumedRun.continues).toBe(runId)

    // Only the owner of a run may resume it: to another user it does not exist.
    const added = await runHangar(['users', 'add', 'dana', '--json'], { env, cwd: shop.project })
    expect(added.code, added.stderr).toBe(0)
    const invite = (JSON.parse(added.stdout) as { inviteUrl: string }).inviteUrl
    const origin = { origin: daemon!.url, 'content-type': 'application/json' }
    const login = await fetch(`${daemon!.url}/api/login`, {
      method: 'POST',
      headers: origin,
      body: JSON.stringify({ token: invite.split('#')[1] }),
    })
    expect(login.status).toBe(200)
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!
    const foreign = await fetch(`${daemon!.url}/api/runs/${runId}/resume`, {
      method: 'POST',
      headers: { ...origin, cookie },
      body: '{}',
    })
    expect(foreign.status).toBe(404)
    expect(((await foreign.json()) as { error: { code: string } }).error.code).toBe('not_found')
  }, 600_000)

  it("continues a conversation from its latest session, the interrupted run's", async () => {
    const conversation = await api<{ id: string }>('POST', '/api/conversations', { agent: 'claude-code' })
    expect(conversation.status, JSON.stringify(conversation.json)).toBe(201)
    const conversationId = conversation.json.id
    const first = await api<StoredRun>('POST', `/api/conversations/${conversationId}/messages`, {
      text: 'Please create a file. FILE=one.txt HANG',
    })
    expect(first.status, JSON.stringify(first.json)).toBe(202)
    const workspace = (await waitForStatus<StoredRun & { cwd: string }>(first.json.id, ['running'])).cwd
    const session = await crashMidRun(first.json.id, workspace, 'one.txt')
    expect((await api<StoredRun>('GET', `/api/runs/${first.json.id}`)).json.sessionId).toBe(session)
    // The conversation view offers to resume it.
    const page = await signedInPage()
    await page.goto(`${daemon!.url}/conversations/${conversationId}`)
    await page
      .locator(`section.run[data-run-id="${first.json.id}"]`)
      .getByRole('button', { name: 'Resume' })
      .waitFor()
    await screenshot(page, 'conversation-interrupted-resume')
    await page.context().close()

    const before = mock.requests.length
    const next = await api<StoredRun>('POST', `/api/conversations/${conversationId}/messages`, {
      text: 'Next one. FILE=two.txt',
    })
    expect(next.status, JSON.stringify(next.json)).toBe(202)
    const ended = await waitForStatus<StoredRun>(next.json.id, undefined, 180_000)
    expect(ended.status, ended.reason ?? '').toBe('succeeded')
    const resumed = laterRequestsWith(before, 'FILE=two.txt')
    expect(resumed.length).toBeGreaterThan(0)
    expect(resumed[0]!.rawBody).toContain('FILE=one.txt HANG')
    expect(resumed[0]!.headers['x-claude-code-session-id']).toBe(session)
  }, 600_000)

  it('offers Resume on an interrupted run in the web UI, and the click starts the resumed run', async () => {
    const submitted = await api<StoredRun>('POST', '/api/runs', {
      agent: 'claude-code',
      prompt: 'Please create a file. FILE=third.txt HANG',
    })
    expect(submitted.status, JSON.stringify(submitted.json)).toBe(201)
    const runId = submitted.json.id
    await crashMidRun(runId, shop.project, 'third.txt')

    const page = await signedInPage()
    // The run's own page offers it too.
    await page.goto(`${daemon!.url}/runs/${runId}`)
    await page.getByRole('button', { name: 'Resume' }).waitFor()
    await page.getByRole('link', { name: 'Runs', exact: true }).click()
    const row = page.locator(`tr[data-run-id="${runId}"]`)
    await row.waitFor()
    await row.getByRole('button', { name: 'Resume' }).waitFor()
    // The conversation's interrupted run (the test before) is not offered: its next message continued it.
    const conversationRuns = (await api<StoredRun[]>('GET', '/api/runs?limit=20')).json.filter(
      (run) => run.conversationId !== null && run.status === 'interrupted',
    )
    expect(conversationRuns.length).toBeGreaterThan(0)
    for (const run of conversationRuns)
      expect(
        await page.locator(`tr[data-run-id="${run.id}"]`).getByRole('button', { name: 'Resume' }).count(),
      ).toBe(0)
    await screenshot(page, 'runs-interrupted-resume')
    const before = mock.requests.length
    await row.getByRole('button', { name: 'Resume' }).click()

    // The resumed run: a new run that continues the interrupted one, whose first Claude request carries
    // the interrupted turn.
    const deadline = Date.now() + 120_000
    let resumed: StoredRun | undefined
    while (!resumed && Date.now() < deadline) {
      const listed = (await api<StoredRun[]>('GET', '/api/runs?limit=20')).json
      resumed = listed.find((run) => run.continues === runId)
      if (!resumed) await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect(resumed, 'no run continues the interrupted one').toBeDefined()
    // The default message of the control carries no directive, so the mock holds this request open too:
    // seeing it is enough, and the run is cancelled afterwards.
    const carried = () =>
      laterRequestsWith(before, resumed!.prompt).find((request) =>
        request.rawBody.includes('FILE=third.txt HANG'),
      )
    expect(await waitFor(() => carried() !== undefined, 120_000)).toBe(true)
    expect(carried()!.rawBody).toContain('"tool_result"')
    await page.locator(`tr[data-run-id="${resumed!.id}"]`).waitFor()
    // Resumed once, it is not offered again.
    await expect.poll(() => row.getByRole('button', { name: 'Resume' }).count()).toBe(0)
    await screenshot(page, 'runs-resumed')
    // A run still going cannot be resumed; a resume works where its run worked (POST /api/runs form).
    const early = await api<{ error: { code: string; message: string } }>(
      'POST',
      `/api/runs/${resumed!.id}/resume`,
      {},
    )
    expect(early.status).toBe(409)
    expect(early.json.error.message).toContain(`run ${resumed!.id} is running: it has not ended yet`)
    const elsewhere = await api<{ error: { code: string } }>('POST', '/api/runs', {
      prompt: 'again',
      resumeRunId: runId,
      cwd: '.',
    })
    expect(elsewhere.status).toBe(400)
    expect(elsewhere.json.error.code).toBe('invalid_request')
    expect((await api('POST', `/api/runs/${resumed!.id}/cancel`)).status).toBe(200)
    expect((await waitForStatus(resumed!.id)).status).toBe('cancelled')
  }, 600_000)
})
