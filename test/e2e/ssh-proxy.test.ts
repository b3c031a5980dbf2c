// An agent on an SSH target still talks to its model through Hangar: real Claude Code runs on a loopback
// OpenSSH host, reaches the proxy of `hangar run` through the session's reverse tunnel, and the mock model
// sees the feed and the real key — which never travels to the host.
import { readFile, readdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_FILE_CONTENT } from '../fixtures/mock-model/directives.js'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { type FeedProject, startFeedProject } from '../helpers/feed-project.js'
import { gitIn } from '../helpers/git-fixture.js'
import { cleanEnv, runHangar } from '../helpers/hangar-cli.js'
import { loopbackOnlyEnv, startRefusingProxy, TEST_API_KEY, realCliPath } from '../helpers/real-cli-cases.js'
import { startSshd, type TestSshd } from '../helpers/sshd.js'

const FEED_TEXT = 'On-call today: Dana.'

/** Every file below `directory` (the host's run and workspace folders), as text. */
async function allText(directory: string): Promise<string> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true })
  const texts = await Promise.all(
    entries
      .filter((entry) => entry.isFile())
      .map((entry) => readFile(path.join(entry.parentPath, entry.name), 'utf8').catch(() => '')),
  )
  return texts.join('\n')
}

describe('a remote agent through the proxy', () => {
  let sshd: TestSshd
  let mock: MockModelServer
  let refusing: Awaited<ReturnType<typeof startRefusingProxy>>
  let shop: FeedProject
  let hostDir: string

  beforeAll(async () => {
    sshd = await startSshd()
    mock = await startMockModelServer()
    refusing = await startRefusingProxy()
    shop = await startFeedProject('ssh-proxy', FEED_TEXT)
    hostDir = path.join(shop.root, 'host', 'hangar')
    await writeFile(
      path.join(shop.project, 'hangar.yaml'),
      [
        'services:',
        `  ops: { url: "${shop.feedUrl}" }`,
        'targets:',
        `  box: { ssh: "${sshd.user}@127.0.0.1", dir: "${hostDir}", port: ${sshd.port}, identityFile: "${sshd.identityFile}" }`,
        'agents:',
        '  far:',
        '    adapter: claude-code',
        '    target: box',
        '    feeds: [{ source: ops, path: /oncall, ttl: 60 }]',
      ].join('\n'),
    )
    gitIn(shop.project, 'add', '-A')
    gitIn(shop.project, 'commit', '-qm', 'initial')
  }, 60_000)

  afterAll(async () => {
    await sshd?.stop()
    await mock?.close()
    await refusing?.close()
    await shop?.close()
  })

  it('runs Claude Code on the host, its model traffic tunnelled back to the proxy', async () => {
    const env = cleanEnv({
      PATH: realCliPath(),
      HOME: shop.home,
      // The host is this machine, as this user: keep Claude's state out of the real home there too.
      CLAUDE_CONFIG_DIR: path.join(shop.root, 'claude-config'),
      HANGAR_DATA_DIR: path.join(shop.root, 'data'),
      HANGAR_SSH_COMMAND: sshd.sshCommand,
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_API_KEY: TEST_API_KEY,
      CLAUDE_CODE_MAX_RETRIES: '1',
      ...loopbackOnlyEnv(refusing.url),
    })
    const result = await runHangar(
      ['run', '--agent', 'far', '--json', 'Please create a file. FILE=far.txt'],
      {
        env,
        cwd: shop.project,
        timeoutMs: 120_000,
      },
    )
    expect(result.code, `${result.stderr}\n${result.stdout.slice(-1500)}`).toBe(0)
    const envelopes = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; [field: string]: unknown })
    expect(envelopes[0]).toMatchObject({ type: 'run-start', proxied: true })
    expect(envelopes[0]!.cwd).toMatch(new RegExp(`^${sshd.user}@127\\.0\\.0\\.1:${hostDir}/`))
    expect(envelopes.some((envelope) => envelope.type === 'usage' && envelope.source === 'proxy')).toBe(true)

    const withFeed = mock.requests.filter((request) => request.rawBody.includes('--- BEGIN FEED: oncall'))
    expect(withFeed.length).toBeGreaterThan(0)
    expect(withFeed[0]!.headers['x-api-key']).toBe(TEST_API_KEY)
    // The work came back from the host; the key never went there.
    expect(await readFile(path.join(shop.project, 'far.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
    expect(await allText(hostDir)).not.toContain(TEST_API_KEY)
    expect(refusing.attempts).toEqual([])
    await rm(path.join(shop.project, 'far.txt'))
  }, 180_000)
})
