// Issue 18 item 7: feeds that cannot be delivered say so. Only proxied runs get feeds, yet a profile with
// `feeds:` and `proxy: false` was accepted without a word and its runs went out without the feeds, silently.
// Now validation warns (without refusing) wherever profile issues are shown, an unproxied run emits a
// visible `feeds_not_delivered` warning that `hangar run` prints, and the blocks a proxied run gets say more:
// an empty feed is an explicit "(empty)" block, a stale one states its age, and a source's own `refreshed`
// frontmatter dates the value. Real Claude Code on the mock model, real `hangar` CLI, SQLite, loopback.
import { spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/core/config.js'
import { createRuntime, type Runtime } from '../../src/main.js'
import type { RunningServer } from '../../src/server/listen.js'
import {
  type MockModelServer,
  type RecordedRequest,
  startMockModelServer,
} from '../fixtures/mock-model-server.js'
import { createApiClient } from '../helpers/api-client.js'
import { type FeedProject, startFeedProject } from '../helpers/feed-project.js'
import { cleanEnv, HANGAR_BIN, runHangar, startDaemon, waitForOutput } from '../helpers/hangar-cli.js'
import { loopbackOnlyEnv, realCliPath, startRefusingProxy, TEST_API_KEY } from '../helpers/real-cli-cases.js'

interface Envelope {
  runId: string
  seq: number
  type: string
  [field: string]: unknown
}

interface Issue {
  path: string
  message: string
  severity?: string
}

const FEED_TEXT = 'Deploy freeze until Friday 18:00 UTC.'
/** How old the ledger service says its data is when first fetched. */
const LEDGER_AGE_MS = 14 * 60_000

function isoSeconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z')
}

/** The feed blocks of an Anthropic request: the text parts that carry one. */
function feedTexts(request: RecordedRequest): string[] {
  const messages = (request.body as { messages?: { content?: unknown }[] } | undefined)?.messages ?? []
  return messages.flatMap((message) =>
    Array.isArray(message.content)
      ? message.content
          .map((part: { text?: unknown }) => part.text)
          .filter((text): text is string => typeof text === 'string' && text.includes('--- BEGIN FEED'))
      : [],
  )
}

describe('feeds that cannot be delivered say so (issue 18 item 7)', { timeout: 240_000 }, () => {
  let mock: MockModelServer
  let refusing: Awaited<ReturnType<typeof startRefusingProxy>>
  let shop: FeedProject
  let configText: string
  let env: NodeJS.ProcessEnv
  let ledgerRefreshed: Date | undefined

  beforeAll(async () => {
    mock = await startMockModelServer()
    refusing = await startRefusingProxy()
    shop = await startFeedProject('feeds-delivery', FEED_TEXT, (feedPath, hit) => {
      if (feedPath === '/api/empty') return { status: 200, body: '' }
      if (feedPath !== '/api/ledger') return undefined
      if (hit > 1) return { status: 500, body: 'ledger is down' }
      // The first answer: data the source refreshed a while ago, good for a millisecond; then it fails.
      ledgerRefreshed = new Date(Date.now() - LEDGER_AGE_MS)
      return {
        status: 200,
        body: `---\nttl: 0.001\nrefreshed: ${ledgerRefreshed.toISOString()}\n---\nledger totals: 42`,
      }
    })
    configText = [
      'services:',
      `  ops: { url: "${shop.feedUrl}", userFeedPaths: [/api] }`,
      'agents:',
      '  offline:',
      '    adapter: claude-code',
      '    proxy: false',
      '    feeds: [{ source: ops, path: /api/status, ttl: 60 }]',
      '  coder:',
      '    adapter: codex',
      '    model: gpt-5.5',
      '    feeds: [{ source: ops, path: /api/status, ttl: 60 }]',
      '  local:',
      '    adapter: builtin',
      '    proxy: false',
      '    feeds: [{ source: ops, path: /api/status, ttl: 60 }]',
      '  watcher:',
      '    adapter: claude-code',
      '    feeds:',
      '      - { source: ops, path: /api/empty, ttl: 60 }',
      '      - { source: ops, path: /api/ledger, ttl: 60 }',
    ].join('\n')
    await writeFile(path.join(shop.project, 'hangar.yaml'), configText)
    env = cleanEnv({
      PATH: realCliPath(),
      HOME: shop.home,
      HANGAR_DATA_DIR: path.join(shop.root, 'data'),
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_API_KEY: TEST_API_KEY,
      CLAUDE_CODE_MAX_RETRIES: '1',
      ...loopbackOnlyEnv(refusing.url),
    })
  }, 60_000)

  afterAll(async () => {
    await mock?.close()
    await refusing?.close()
    await shop?.close()
  })

  async function run(agent: string, prompt: string, json: boolean) {
    const result = await runHangar(['run', '--agent', agent, ...(json ? ['--json'] : []), prompt], {
      env,
      cwd: shop.project,
      timeoutMs: 120_000,
    })
    expect(result.code, result.stderr).toBe(0)
    return result
  }

  describe('validation', () => {
    let runtime: Runtime
    let server: RunningServer
    let token: string
    const { api, waitForStatus } = createApiClient(() => ({ url: server.url, token }))

    beforeAll(async () => {
      runtime = await createRuntime({
        dataDir: path.join(shop.root, 'api-data'),
        projectDir: shop.project,
        // A warning refuses nothing: the file loads.
        config: parseConfig(configText),
        env,
        logLevel: 'silent',
      })
      server = await runtime.listen({ host: '127.0.0.1', port: 0 })
      token = (await runtime.auth.createToken('system', runtime.owner.id, { name: 'api' })).token
    })

    afterAll(async () => {
      await runtime?.scheduler.stop()
      await server?.close()
      await runtime?.close()
    })

    const warningAt = (issues: Issue[] | undefined) =>
      (issues ?? []).filter((issue) => issue.severity === 'warning').map((issue) => issue.path)

    it("warns on hangar.yaml's profile with feeds and proxy: false, in the API and in `hangar feeds`", async () => {
      const listed = await api<{ name: string; issues?: Issue[] }[]>('GET', '/api/profiles')
      const offline = listed.json.find((profile) => profile.name === 'offline')
      expect(warningAt(offline?.issues)).toEqual(['proxy'])
      expect(offline?.issues?.[0]?.message).toMatch(/feed.*proxy: false.*not reach the model/)
      // A profile whose feeds can be delivered has nothing to say.
      expect(listed.json.find((profile) => profile.name === 'watcher')?.issues ?? []).toEqual([])
      const one = await api<{ issues: Issue[] }>('GET', '/api/profiles/offline')
      expect(warningAt(one.json.issues)).toEqual(['proxy'])
      const feeds = await api<{ issues: Issue[] }>('GET', '/api/profiles/offline/feeds')
      expect(warningAt(feeds.json.issues)).toEqual(['proxy'])

      // The CLI on the store (no daemon): the warning, told apart from an error, and the feeds all the same.
      const cli = await runHangar(['feeds', 'offline'], { env, cwd: shop.project })
      expect(cli.code, cli.stderr).toBe(0)
      expect(cli.stderr).toMatch(/^warning: proxy: .*proxy: false/m)
      expect(cli.stderr).not.toMatch(/^error:/m)
      expect(cli.stdout).toMatch(/status +ops +60s/)
    })

    it('loads such a hangar.yaml in `hangar up`, with the warning on its start-up lines', async () => {
      const daemon = await startDaemon(['--data-dir', path.join(shop.root, 'up-data')], {
        env,
        cwd: shop.project,
        timeoutMs: 60_000,
      })
      try {
        // Its own pipe: the line may come after the URL on stdout.
        await waitForOutput(daemon.stderr, 'warning: agents.offline.proxy', 30_000)
        expect(daemon.stderr()).toMatch(/^warning: agents\.offline\.proxy: agent "offline" has 1 feed/m)
        expect(daemon.stderr()).not.toMatch(/agents\.watcher/)
      } finally {
        await daemon.stop()
      }
    })

    it('saves a UI/API profile with feeds and proxy: false (201) and reports the warning with it', async () => {
      const definition = {
        adapter: 'claude-code',
        proxy: false,
        // Unproxied, so unsandboxed: a new profile's default sandbox could not reach the model.
        sandbox: 'off',
        feeds: [{ source: 'ops', path: '/api/status', ttl: 60 }],
      }
      const created = await api<{ issues?: Issue[] }>('POST', '/api/profiles', { name: 'direct', definition })
      expect(created.status).toBe(201)
      expect(warningAt(created.json.issues)).toEqual(['proxy'])
      const replaced = await api<{ issues?: Issue[] }>('PUT', '/api/profiles/direct', definition)
      expect(replaced.status).toBe(200)
      expect(warningAt(replaced.json.issues)).toEqual(['proxy'])
      const shown = await api<{ issues: Issue[] }>('GET', '/api/profiles/direct')
      expect(shown.json.issues).toEqual([
        { path: 'proxy', severity: 'warning', message: expect.stringMatching(/proxy: false/) },
      ])
      // Warnings do not stop a run: it is accepted, runs (in the daemon's scheduler), and says so.
      const submitted = await api<{ id: string }>('POST', '/api/runs', {
        agent: 'direct',
        prompt: 'hi NOTOOL',
        cwd: shop.project,
      })
      expect(submitted.status, JSON.stringify(submitted.json)).toBe(201)
      expect(await waitForStatus(submitted.json.id, undefined, 120_000)).toMatchObject({
        status: 'succeeded',
      })
      const events = await runtime.store
        .forUser(runtime.owner.id)
        .runs.listEvents(submitted.json.id, { afterSeq: 0, limit: 100 })
      expect(events.filter((event) => event.type === 'error')).toEqual([
        expect.objectContaining({
          code: 'feeds_not_delivered',
          message: expect.stringMatching(/agent "direct" has proxy: false/),
        }),
      ])
    })
  })

  it('warns in the events and in `hangar run` when a run with feeds goes unproxied', async () => {
    mock.reset()
    shop.feedHits.length = 0
    const printed = await run('offline', 'Say hello. NOTOOL', false)
    expect(printed.stderr).toMatch(/^warning: feeds not delivered: .*"status".*proxy: false/m)

    const json = await run('offline', 'Say hello again. NOTOOL', true)
    const envelopes = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Envelope)
    expect(envelopes[0]).toMatchObject({ type: 'run-start', proxied: false })
    const warnings = envelopes.filter((envelope) => envelope.code === 'feeds_not_delivered')
    expect(warnings).toEqual([
      expect.objectContaining({
        type: 'error',
        retryable: false,
        message: expect.stringMatching(/proxy: false/),
      }),
    ])
    expect(envelopes.at(-1)).toMatchObject({ type: 'run-end', status: 'succeeded' })
    // What the warning says is true: the model never saw a feed, and no feed was fetched.
    expect(mock.requests.length).toBeGreaterThan(0)
    expect(mock.requests.some((request) => request.rawBody.includes('BEGIN FEED'))).toBe(false)
    expect(shop.feedHits).toEqual([])
  })

  it('warns the same way for the built-in agent with proxy: false', async () => {
    mock.reset()
    const { stdout } = await run('local', 'Say hello. NOTOOL', true)
    const envelopes = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Envelope)
    expect(envelopes[0]).toMatchObject({ type: 'run-start', adapter: 'builtin', proxied: false })
    expect(envelopes[1]).toMatchObject({
      type: 'error',
      code: 'feeds_not_delivered',
      message: expect.stringMatching(/agent "local" has proxy: false/),
    })
    expect(mock.requests.some((request) => request.rawBody.includes('BEGIN FEED'))).toBe(false)
  })

  it('warns when the CLI runs on its own login, which the proxy cannot carry (Codex without a key)', async () => {
    shop.feedHits.length = 0
    // No OpenAI key or endpoint anywhere: Codex would use its ChatGPT login. This HOME has none, so Codex
    // would retry for minutes: the run is cancelled (Ctrl-C) once the warning is out.
    const child = spawn(
      process.execPath,
      [HANGAR_BIN, 'run', '--agent', 'coder', '--json', 'Say hello. NOTOOL'],
      {
        env,
        cwd: shop.project,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let stdout = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    try {
      await waitForOutput(() => stdout, '"feeds_not_delivered"', 60_000)
    } finally {
      child.kill('SIGINT')
    }
    expect(await exited).toBe(130)
    const envelopes = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Envelope)
    expect(envelopes[0]).toMatchObject({ type: 'run-start', adapter: 'codex', proxied: false })
    expect(envelopes[1]).toMatchObject({
      type: 'error',
      code: 'feeds_not_delivered',
      retryable: false,
      message: expect.stringMatching(
        /^feeds not delivered: Codex CLI runs on its own login .*"status".*API key/,
      ),
    })
    expect(shop.feedHits).toEqual([])
  })

  it('gives the model an "(empty)" block for an empty feed, and dates and ages a stale one', async () => {
    mock.reset()
    const { stdout } = await run('watcher', 'Please create a file. FILE=notes.txt', true)
    expect(stdout).not.toContain('feeds_not_delivered')
    const blocks = mock.requests.flatMap(feedTexts)
    expect(blocks.length).toBeGreaterThan(1)
    expect(ledgerRefreshed).toBeDefined()
    const refreshed = isoSeconds(ledgerRefreshed!)

    // Every request: the empty feed says so.
    for (const block of blocks)
      expect(block).toMatch(
        /--- BEGIN FEED: empty \(from ops, refreshed [0-9T:-]+Z\) ---\n\(empty\)\n--- END FEED: empty ---/,
      )
    // The first: the ledger dated by its source, not by the fetch.
    expect(blocks[0]).toContain(
      `--- BEGIN FEED: ledger (from ops, refreshed ${refreshed}) ---\nledger totals: 42\n--- END FEED: ledger ---`,
    )
    // A later one, after the source failed: the last good value, its age counted from the source's time.
    const stale = blocks.find((block) => block.includes('STALE'))
    expect(stale).toMatch(
      new RegExp(
        `--- BEGIN FEED: ledger \\(from ops, refreshed ${refreshed}, age 1[4-9] m, STALE: HTTP 500[^)]*\\) ---\nledger totals: 42\n`,
      ),
    )
  })
})
