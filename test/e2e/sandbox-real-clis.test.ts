// Sandboxed runs (`sandbox: workspace`, real bubblewrap) of the real agent CLIs on the mock model, through
// `hangar run`. The mock's SHELL64= directive makes each agent run a probe with its own shell tool; the
// probe writes what it could reach into the workspace. Only the model is mocked.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_FILE_CONTENT } from '../fixtures/mock-model/directives.js'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { type FeedProject, startFeedProject } from '../helpers/feed-project.js'
import { cleanEnv, HANGAR_BIN, runHangar } from '../helpers/hangar-cli.js'
import { parseEnvelopes, processesWith } from '../helpers/run-envelopes.js'
import { REAL_CLI_CASES, realCliPath, TEST_API_KEY } from '../helpers/real-cli-cases.js'

const FEED_TEXT = 'Sandbox drill at 10:00 UTC.'
const SANDBOXED = REAL_CLI_CASES.filter((cliCase) =>
  ['claude', 'codex', 'gemini', 'opencode', 'copilot'].includes(cliCase.name),
)

function endpointEnv(family: string, mockUrl: string): Record<string, string> {
  if (family === 'gemini') return { GOOGLE_GEMINI_BASE_URL: mockUrl, GEMINI_API_KEY: TEST_API_KEY }
  if (family === 'anthropic') return { ANTHROPIC_BASE_URL: mockUrl, ANTHROPIC_API_KEY: TEST_API_KEY }
  return { OPENAI_BASE_URL: `${mockUrl}/v1`, OPENAI_API_KEY: TEST_API_KEY }
}

describe('sandboxed runs of the real CLIs', () => {
  let mock: MockModelServer
  let shop: FeedProject
  let dataDir: string

  beforeAll(async () => {
    mock = await startMockModelServer()
    shop = await startFeedProject('sandbox-clis', FEED_TEXT)
    dataDir = path.join(shop.root, 'data')
    await mkdir(dataDir, { recursive: true })
    await mkdir(path.join(shop.home, '.ssh'), { recursive: true })
    await writeFile(path.join(shop.home, '.ssh', 'id_ed25519'), 'FAKE PRIVATE KEY')
    const profiles = SANDBOXED.flatMap((cliCase) => [
      `  ${cliCase.name}-boxed:`,
      `    adapter: ${cliCase.adapter.id}`,
      ...(cliCase.model ? [`    model: ${cliCase.model}`] : []),
      '    sandbox: workspace',
      '    permissions: { mode: permissive }',
      '    feeds: [{ source: ops, path: "/drills/{agent}", ttl: 60 }]',
    ])
    await writeFile(
      path.join(shop.project, 'hangar.yaml'),
      [
        'services:',
        `  ops: { url: "${shop.feedUrl}" }`,
        'agents:',
        ...profiles,
        '  claude-nobwrap:',
        '    adapter: claude-code',
        '    sandbox: workspace',
      ].join('\n'),
    )
  }, 120_000)

  afterAll(async () => {
    await mock?.close()
    await shop?.close()
  })

  function envFor(cliCase: (typeof SANDBOXED)[number], extra: Record<string, string> = {}) {
    return cleanEnv({
      PATH: realCliPath(),
      HOME: shop.home,
      HANGAR_DATA_DIR: dataDir,
      ...endpointEnv(cliCase.family, mock.url),
      ...cliCase.env,
      ...extra,
    })
  }

  it.each(SANDBOXED.map((cliCase) => [cliCase.name, cliCase] as const))(
    '%s: writes in the workspace, reaches its model through the proxy with the feed, and nothing else',
    async (name, cliCase) => {
      mock.reset()
      const env = envFor(cliCase)
      const written = await runHangar(
        ['run', '--agent', `${name}-boxed`, '--json', 'Please create a file. FILE=notes.txt'],
        { env, cwd: shop.project, timeoutMs: cliCase.runTimeout * 1000 },
      )
      expect(written.code, `${written.stderr}\n${written.stdout.slice(-2000)}`).toBe(0)
      const envelopes = parseEnvelopes(written.stdout)
      expect(envelopes[0]).toMatchObject({
        type: 'run-start',
        proxied: true,
        sandbox: { mode: 'workspace', by: expect.stringContaining('bubblewrap') },
      })
      expect(await readFile(path.join(shop.project, 'notes.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
      const withFeed = mock.requests.filter((request) => request.rawBody.includes('--- BEGIN FEED: drills'))
      expect(withFeed.length).toBeGreaterThan(0)
      const runId = envelopes[0]!.runId
      const shown = JSON.parse(
        (await runHangar(['runs', 'show', runId, '--json'], { env, cwd: shop.project })).stdout,
      ) as { requests: unknown[]; usage?: { inputTokens?: number } }
      expect(shown.requests.length).toBeGreaterThan(0)
      expect(envelopes.some((envelope) => envelope.type === 'usage' && envelope.source === 'proxy')).toBe(
        true,
      )

      // The CLI's own session carries over: the sandbox home is kept per agent and workspace.
      if (cliCase.adapter.capabilities.resume) {
        const resumed = await runHangar(
          ['run', '--agent', `${name}-boxed`, '--json', '--resume', runId, 'Thanks. NOTOOL'],
          { env, cwd: shop.project, timeoutMs: cliCase.runTimeout * 1000 },
        )
        expect(resumed.code, `${resumed.stderr}\n${resumed.stdout.slice(-2000)}`).toBe(0)
      }

      const outside = path.join(shop.root, 'escaped.txt')
      // The probe is a script in the workspace that the agent's shell runs: no path outside the workspace
      // and no command substitution in the command line, which Copilot CLI and Gemini CLI refuse on their own
      // before anything runs — the point is what the sandbox does when an agent's own checks miss.
      const probeScript = `
        const fs = require('fs'), net = require('net')
        const attempt = (name, action) => { try { action(); console.log(name + ' READ-OK') } catch (error) { console.log(name + ' ' + error.code) } }
        attempt('secret', () => console.log(fs.readFileSync(${JSON.stringify(path.join(dataDir, 'secret.key'))}, 'utf8')))
        attempt('ssh', () => console.log(fs.readFileSync(${JSON.stringify(path.join(shop.home, '.ssh', 'id_ed25519'))}, 'utf8')))
        attempt('environ', () => fs.readFileSync('/proc/${process.pid}/environ'))
        // Every process the sandbox can see (the daemon is not one): none holds the provider key.
        const holders = fs.readdirSync('/proc').filter((entry) => /^[0-9]+$/.test(entry)).filter((pid) => {
          try { return fs.readFileSync('/proc/' + pid + '/environ', 'utf8').includes(${JSON.stringify(TEST_API_KEY)}) } catch { return false }
        })
        console.log('provider key in /proc: ' + (holders.length > 0 ? 'FOUND' : 'none'))
        attempt('outside', () => fs.writeFileSync(${JSON.stringify(outside)}, 'x'))
        const connect = (name, host, port) => new Promise((resolve) => {
          const started = Date.now(), socket = net.connect(port, host)
          socket.on('connect', () => { console.log(name + ' connected'); socket.destroy(); resolve() })
          socket.on('error', (error) => { console.log(name + ' ' + error.code + ' ' + (Date.now() - started)); resolve() })
        })
        connect('postgres', '127.0.0.1', 5432).then(() => connect('public', '1.1.1.1', 443)).then(() => console.log('PROBE-DONE'))`
      await writeFile(path.join(shop.project, 'probe.cjs'), probeScript)
      const command = 'node probe.cjs > probe.txt 2>&1'
      const probed = await runHangar(
        [
          'run',
          '--agent',
          `${name}-boxed`,
          '--json',
          `Run the probe. SHELL64=${Buffer.from(command).toString('base64url')}`,
        ],
        { env, cwd: shop.project, timeoutMs: cliCase.runTimeout * 1000 },
      )
      expect(probed.code, `${probed.stderr}\n${probed.stdout.slice(-2000)}`).toBe(0)
      const report = await readFile(path.join(shop.project, 'probe.txt'), 'utf8').catch(() => {
        throw new Error(`no probe.txt; the run said:\n${probed.stdout.slice(-3000)}`)
      })
      expect(report).toContain('PROBE-DONE')
      // The instance key the first run made: the probe must not have seen it.
      const instanceKey = (await readFile(path.join(dataDir, 'secret.key'), 'utf8')).trim()
      expect(instanceKey.length).toBeGreaterThan(10)
      for (const leak of [instanceKey, 'FAKE PRIVATE KEY']) expect(report).not.toContain(leak)
      expect(report).toMatch(/^secret ENOENT$/m)
      expect(report).toMatch(/^ssh ENOENT$/m)
      expect(report).toMatch(/^environ ENOENT$/m)
      expect(report).toMatch(/^provider key in \/proc: none$/m)
      expect(existsSync(outside)).toBe(false)
      expect(report).toMatch(/postgres ECONNREFUSED \d+/)
      expect(report).toMatch(/public ENETUNREACH \d+/)
      for (const match of report.matchAll(/(?:postgres|public) E\w+ (\d+)/g))
        expect(Number(match[1])).toBeLessThan(5000)
      await rm(path.join(shop.project, 'probe.txt'))
      await rm(path.join(shop.project, 'probe.cjs'))
      await rm(path.join(shop.project, 'notes.txt'))
    },
    240_000,
  )

  it.each(SANDBOXED.map((cliCase) => [cliCase.name, cliCase] as const))(
    '%s: Ctrl-C cancels the run and kills every process of its sandbox',
    async (name, cliCase) => {
      mock.reset()
      // Every process of the sandbox has its HOME in the data dir's sandbox-homes.
      const marker = `HOME=${path.join(dataDir, 'sandbox-homes')}`
      // A helper that leaves the agent's process group: only the sandbox's end takes it down.
      const sleeper =
        'setsid sh -c "sleep 600; true" > /dev/null 2>&1 < /dev/null & echo started > started.txt'
      const child: ChildProcess = spawn(
        process.execPath,
        [
          HANGAR_BIN,
          'run',
          '--agent',
          `${name}-boxed`,
          '--json',
          `Start it. HANG SHELL64=${Buffer.from(sleeper).toString('base64url')}`,
        ],
        { env: envFor(cliCase), cwd: shop.project, stdio: ['ignore', 'pipe', 'pipe'] },
      )
      let output = ''
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()))
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
      await expect
        .poll(() => existsSync(path.join(shop.project, 'started.txt')), { timeout: 120_000 })
        .toBe(true)
      await expect
        .poll(() => processesWith(marker), { timeout: 30_000, interval: 250, message: output })
        .not.toEqual([])
      child.kill('SIGINT')
      expect(await exited).toBe(130)
      await expect.poll(() => processesWith(marker), { timeout: 30_000 }).toEqual([])
      await rm(path.join(shop.project, 'started.txt'))
    },
    240_000,
  )

  it('fails the run with a fix-it line when bubblewrap is missing, never running unsandboxed', async () => {
    const env = envFor(SANDBOXED[0]!, { HANGAR_BWRAP: path.join(shop.root, 'no-such-bwrap') })
    const result = await runHangar(['run', '--agent', 'claude-nobwrap', '--json', 'Hello. FILE=never.txt'], {
      env,
      cwd: shop.project,
      timeoutMs: 60_000,
    })
    expect(result.code).toBe(1)
    const envelopes = parseEnvelopes(result.stdout)
    expect(envelopes.find((envelope) => envelope.type === 'error')).toMatchObject({
      code: 'sandbox_unavailable',
      message: expect.stringMatching(
        /bubblewrap was not found.*; install it \(Debian\/Ubuntu: apt-get install bubblewrap\)/,
      ),
    })
    expect(envelopes.at(-1)).toMatchObject({ type: 'run-end', status: 'failed' })
    expect(existsSync(path.join(shop.project, 'never.txt'))).toBe(false)
    expect(mock.requests.filter((request) => request.rawBody.includes('never.txt'))).toEqual([])
  }, 90_000)
})
