// What a new user does: declare a feed in hangar.yaml, run a real agent, and see in the run's request log that
// the model received it. Real Claude Code and Codex through `hangar run` (which serves the proxy in process),
// then an agent started by hand with the environment `hangar env` prints (the daemon's proxy).
import { spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { type FeedProject, startFeedProject } from '../helpers/feed-project.js'
import { cleanEnv, type RunningDaemon, runHangar, startDaemon } from '../helpers/hangar-cli.js'
import { loopbackOnlyEnv, startRefusingProxy, TEST_API_KEY, realCliPath } from '../helpers/real-cli-cases.js'
import { testCliBin } from '../helpers/test-clis.js'

interface Envelope {
  runId: string
  seq: number
  type: string
  [field: string]: unknown
}

interface Turn {
  role?: string
}

const FEED_TEXT = 'Deploy freeze until Friday 18:00 UTC.'

describe('feeds through the proxy with real CLIs', () => {
  let mock: MockModelServer
  let refusing: Awaited<ReturnType<typeof startRefusingProxy>>
  let shop: FeedProject
  let feedHits: FeedProject['feedHits']
  let project: string
  let env: NodeJS.ProcessEnv
  let daemon: RunningDaemon | undefined

  beforeAll(async () => {
    mock = await startMockModelServer()
    refusing = await startRefusingProxy()
    shop = await startFeedProject('proxy-clis', FEED_TEXT)
    project = shop.project
    feedHits = shop.feedHits
    await writeFile(
      path.join(project, 'hangar.yaml'),
      [
        'services:',
        `  ops: { url: "${shop.feedUrl}" }`,
        'agents:',
        '  reviewer:',
        '    adapter: claude-code',
        '    feeds: [{ source: ops, path: /api/v1/status, ttl: 60 }]',
        '  coder:',
        '    adapter: codex',
        '    model: gpt-5.5',
        '    feeds: [{ name: alerts, source: ops, path: "/alerts/{agent}", ttl: 60 }]',
      ].join('\n'),
    )
    env = cleanEnv({
      PATH: realCliPath(),
      HOME: shop.home,
      HANGAR_DATA_DIR: path.join(shop.root, 'data'),
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_API_KEY: TEST_API_KEY,
      OPENAI_BASE_URL: `${mock.url}/v1`,
      OPENAI_API_KEY: TEST_API_KEY,
      CLAUDE_CODE_MAX_RETRIES: '1',
      ...loopbackOnlyEnv(refusing.url),
    })
  }, 60_000)

  afterAll(async () => {
    await daemon?.stop()
    await mock?.close()
    await refusing?.close()
    await shop?.close()
  })

  async function runAgent(agent: string, prompt: string): Promise<Envelope[]> {
    const result = await runHangar(['run', '--agent', agent, '--json', prompt], {
      env,
      cwd: project,
      timeoutMs: 120_000,
    })
    expect(result.code, result.stderr).toBe(0)
    // Neither the provider key nor the run's proxy token shows up in what the run printed.
    expect(result.stdout).not.toContain(TEST_API_KEY)
    expect(result.stdout).not.toMatch(/hgr_[A-Za-z0-9]{8,}/)
    return result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Envelope)
  }

  function modelRequestsWith(text: string) {
    return mock.requests.filter((request) => request.rawBody.includes(text))
  }

  it.each([
    ['reviewer', 'claude-code', 'status', '/api/v1/status', 'x-api-key'],
    ['coder', 'codex', 'alerts', '/alerts/coder', 'authorization'],
  ])(
    'runs %s (%s) through the proxy: the model sees the feed, the run shows usage and its request log',
    async (agent, adapter, feedName, feedPath, keyHeader) => {
      mock.reset()
      feedHits.length = 0
      const envelopes = await runAgent(agent, 'Please create a file. FILE=notes.txt')
      const runId = envelopes[0]!.runId
      expect(envelopes[0]).toMatchObject({ type: 'run-start', agent, adapter, proxied: true })
      expect(envelopes.at(-1)).toMatchObject({ type: 'run-end', status: 'succeeded' })

      // The model received the block, late: next to the last user turn, with every earlier turn before it.
      const withFeed = modelRequestsWith(`--- BEGIN FEED: ${feedName} (from ops, refreshed `)
      expect(withFeed.length).toBeGreaterThan(0)
      expect(withFeed[0]!.rawBody).toContain(`${FEED_TEXT} (${feedPath})`)
      const turns = (withFeed[0]!.body as { messages?: Turn[]; input?: Turn[] })[
        adapter === 'codex' ? 'input' : 'messages'
      ]!
      const feedTurn = turns.findIndex((turn) => JSON.stringify(turn).includes('--- BEGIN FEED'))
      const lastUserTurn = turns.findLastIndex((turn, index) => turn.role === 'user' && index !== feedTurn)
      // Anthropic: right after the last user message; OpenAI Responses: right before it.
      expect(feedTurn - lastUserTurn).toBe(adapter === 'codex' ? -1 : 1)
      expect(JSON.stringify(turns[lastUserTurn])).toContain('FILE=notes.txt')
      // Hangar holds the key: the agent was given a stand-in, the model got the real one.
      expect(withFeed[0]!.headers[keyHeader]).toContain(TEST_API_KEY)

      // The feed service was told who asked, and nothing secret.
      expect(feedHits[0]!.url).toBe(feedPath)
      expect(feedHits[0]!.headers).toMatchObject({
        'x-hangar-agent': agent,
        'x-hangar-project': 'shop',
        'x-hangar-run': runId,
      })
      expect(feedHits[0]!.headers.authorization).toBeUndefined()

      // The run's totals are the proxy's own count, one `usage` event per model request.
      const metered = envelopes.filter((envelope) => envelope.type === 'usage' && envelope.source === 'proxy')
      expect(metered.length).toBeGreaterThan(0)
      const totals = envelopes.at(-1)!.usage as { inputTokens: number; outputTokens: number }
      expect(totals.outputTokens).toBeGreaterThan(0)
      expect(totals.outputTokens).toBe(
        metered.reduce((sum, event) => sum + (event.outputTokens as number), 0),
      )

      const shown = await runHangar(['runs', 'show', runId], { env, cwd: project })
      expect(shown.code, shown.stderr).toBe(0)
      expect(shown.stdout).toMatch(/^requests {2}\(\d+, through the proxy\)$/m)
      expect(shown.stdout).toMatch(
        new RegExp(`POST /v1/\\S+ {2}200 .*feeds: ${feedName} \\(fresh, \\d+ B\\)`),
      )
      const json = JSON.parse(
        (await runHangar(['runs', 'show', runId, '--json'], { env, cwd: project })).stdout,
      )
      expect(json.requests.length).toBe(mock.requests.filter((r) => r.family !== 'models').length)
    },
  )

  it('lists the resolved feeds of a profile', async () => {
    const result = await runHangar(['feeds', 'coder', '--json'], { env, cwd: project })
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual([
      {
        name: 'alerts',
        source: 'ops',
        path: '/alerts/coder',
        ttl: 60,
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/alerts\/coder$/),
        trust: 'operator',
      },
    ])
    const unknown = await runHangar(['feeds', 'nobody'], { env, cwd: project })
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(
      /unknown agent profile "nobody"; use one of reviewer, coder, or an adapter id/,
    )
  })

  it('gives an agent started by hand the environment of the daemon proxy (hangar env)', async () => {
    const refused = await runHangar(['env', 'reviewer'], { env, cwd: project })
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toMatch(/none is running/)

    daemon = await startDaemon([], { env, cwd: project })
    const minted = await runHangar(['env', 'reviewer', '--json', '--expires-in', '2h'], { env, cwd: project })
    expect(minted.code, minted.stderr).toBe(0)
    const { token, expiresAt, endpoints } = JSON.parse(minted.stdout) as {
      token: string
      expiresAt: string
      endpoints: Record<string, string>
    }
    expect(endpoints).toEqual({
      anthropic: `${daemon.url}/proxy/${token}/anthropic`,
      openai: `${daemon.url}/proxy/${token}/openai/v1`,
      gemini: `${daemon.url}/proxy/${token}/gemini`,
    })
    expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(3600_000)
    const shell = await runHangar(['env', 'reviewer'], { env, cwd: project })
    expect(shell.stdout).toMatch(
      /^export ANTHROPIC_BASE_URL='http:\/\/127\.0\.0\.1:\d+\/proxy\/hgr_\S+\/anthropic'$/m,
    )
    expect(shell.stdout).toMatch(/codex -c model_provider=hangar -c/)

    // Claude Code started by hand: no key of its own, only the proxy URL and a stand-in.
    mock.reset()
    const handEnv = { ...env, ANTHROPIC_BASE_URL: endpoints.anthropic, ANTHROPIC_API_KEY: 'anything' }
    const claude = spawn(testCliBin('claude'), ['-p', 'Just answer.', '--output-format', 'json'], {
      cwd: project,
      env: handEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    claude.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const code = await new Promise<number | null>((resolve) => claude.once('close', resolve))
    expect(code, stderr).toBe(0)
    const withFeed = modelRequestsWith('--- BEGIN FEED: status (from ops')
    expect(withFeed.length).toBeGreaterThan(0)
    expect(withFeed[0]!.headers['x-api-key']).toBe(TEST_API_KEY)

    // With the daemon up, `hangar feeds` asks it, and shows what its fetcher last did.
    const viaDaemon = await runHangar(['feeds', 'reviewer', '--json'], { env, cwd: project })
    expect(viaDaemon.code, viaDaemon.stderr).toBe(0)
    expect(JSON.parse(viaDaemon.stdout)).toEqual([
      expect.objectContaining({
        name: 'status',
        state: expect.objectContaining({ status: 'fresh', lastSuccessAt: expect.any(String) }),
      }),
    ])
    const table = await runHangar(['feeds', 'reviewer'], { env, cwd: project })
    expect(table.stdout).toMatch(
      /^status +ops +60s +http:\/\/127\.0\.0\.1:\d+\/api\/v1\/status +fresh \d{4}-/m,
    )
    const unknown = await runHangar(['feeds', 'nobody'], { env, cwd: project })
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/unknown agent profile "nobody"; use one of reviewer, coder/)

    // The token is a PAT of kind proxy: listed, revocable, and revoked it stops working.
    const listed = await runHangar(['token', 'list', '--json'], { env, cwd: project })
    const tokens = JSON.parse(listed.stdout) as {
      id: string
      kind: string
      profile: string | null
      lastUsedAt: string | null
    }[]
    // Each `hangar env` mints its own token; the one Claude used is the one marked as used.
    expect(tokens.filter((entry) => entry.kind === 'proxy' && entry.profile === 'reviewer')).toHaveLength(2)
    const proxyToken = tokens.find((entry) => entry.kind === 'proxy' && entry.lastUsedAt !== null)
    expect(proxyToken).toBeDefined()
    expect(listed.stdout).not.toContain(token)
    expect((await runHangar(['token', 'revoke', proxyToken!.id], { env, cwd: project })).code).toBe(0)
    // Revoked by another process on the daemon's SQLite file: the daemon, which holds the token in memory,
    // refuses it at the very next request.
    const asked = await fetch(`${endpoints.anthropic}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 5, messages: [] }),
    })
    expect(asked.status).toBe(401)
  })
})
