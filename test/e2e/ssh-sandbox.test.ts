// Sandboxed runs (`sandbox: workspace`) on an SSH target: real Claude Code on a loopback OpenSSH host runs
// under the host's bubblewrap, reaches the proxy of `hangar run` through a reverse forward to a Unix socket,
// and a probe its shell runs shows what it cannot reach there. A host without bubblewrap (HANGAR_BWRAP in
// the session's environment naming a missing one) runs the agent unsandboxed and the run says why.
// Only the model is mocked.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_FILE_CONTENT } from '../fixtures/mock-model/directives.js'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { type FeedProject, startFeedProject } from '../helpers/feed-project.js'
import { gitIn } from '../helpers/git-fixture.js'
import { cleanEnv, HANGAR_BIN, runHangar } from '../helpers/hangar-cli.js'
import { parseEnvelopes, processesWith } from '../helpers/run-envelopes.js'
import { REAL_CLI_CASES, realCliPath, TEST_API_KEY } from '../helpers/real-cli-cases.js'
import { startSshd, type TestSshd } from '../helpers/sshd.js'

const FEED_TEXT = 'Remote drill at 11:00 UTC.'

const BOXED = REAL_CLI_CASES.filter((cliCase) => ['claude', 'codex'].includes(cliCase.name))

function endpointEnv(family: string, mockUrl: string): Record<string, string> {
  if (family === 'anthropic') return { ANTHROPIC_BASE_URL: mockUrl, ANTHROPIC_API_KEY: TEST_API_KEY }
  return { OPENAI_BASE_URL: `${mockUrl}/v1`, OPENAI_API_KEY: TEST_API_KEY }
}

const shell = (command: string) => `SHELL64=${Buffer.from(command).toString('base64url')}`

describe('sandboxed runs on an SSH target', () => {
  let sshd: TestSshd
  let mock: MockModelServer
  let shop: FeedProject
  let hostDir: string
  let dataDir: string
  let allowed: Server
  let allowedPort: number

  beforeAll(async () => {
    // A host a profile allows through its CONNECT proxy (sandboxHosts).
    allowed = createServer((_request, response) => response.end('allowed host says hi'))
    await new Promise<void>((resolve) => allowed.listen(0, '127.0.0.1', resolve))
    allowedPort = (allowed.address() as AddressInfo).port
    mock = await startMockModelServer()
    shop = await startFeedProject('ssh-sandbox', FEED_TEXT)
    // The host is this machine, as this user: its keys live in the host user's home (hidden in a sandbox).
    sshd = await startSshd({ dir: path.join(shop.root, 'sshd'), acceptEnv: ['HANGAR_BWRAP'] })
    hostDir = path.join(shop.root, 'host', 'hangar')
    dataDir = path.join(shop.root, 'data')
    const target = `{ ssh: "${sshd.user}@127.0.0.1", dir: "${hostDir}", port: ${sshd.port}, identityFile: "${sshd.identityFile}" }`
    await writeFile(
      path.join(shop.project, 'hangar.yaml'),
      [
        'services:',
        `  ops: { url: "${shop.feedUrl}" }`,
        'targets:',
        `  box: ${target}`,
        'agents:',
        ...BOXED.flatMap((cliCase) => [
          `  ${cliCase.name}-boxed:`,
          `    adapter: ${cliCase.adapter.id}`,
          ...(cliCase.model ? [`    model: ${cliCase.model}`] : []),
          '    target: box',
          '    sandbox: workspace',
          '    permissions: { mode: permissive }',
          '    feeds: [{ source: ops, path: /drills, ttl: 60 }]',
        ]),
        '  claude-hosts:',
        '    adapter: claude-code',
        '    target: box',
        '    sandbox: workspace',
        '    permissions: { mode: permissive }',
        `    sandboxHosts: ["127.0.0.1:${allowedPort}"]`,
      ].join('\n'),
    )
    gitIn(shop.project, 'add', '-A')
    gitIn(shop.project, 'commit', '-qm', 'initial')
  }, 60_000)

  afterAll(async () => {
    await new Promise((resolve) => allowed?.close(resolve))
    await sshd?.stop()
    await mock?.close()
    await shop?.close()
  })

  function envFor(extra: Record<string, string> = {}) {
    return cleanEnv({
      PATH: realCliPath(),
      HOME: shop.home,
      HANGAR_DATA_DIR: dataDir,
      HANGAR_SSH_COMMAND: sshd.sshCommand,
      ...endpointEnv('anthropic', mock.url),
      ...endpointEnv('openai', mock.url),
      CLAUDE_CODE_MAX_RETRIES: '1',
      ...extra,
    })
  }

  async function hangarRun(prompt: string, env = envFor(), agent = 'claude-boxed') {
    const result = await runHangar(['run', '--agent', agent, '--json', prompt], {
      env,
      cwd: shop.project,
      timeoutMs: 120_000,
    })
    expect(result.code, `${result.stderr}\n${result.stdout.slice(-2500)}`).toBe(0)
    return parseEnvelopes(result.stdout)
  }

  it.each(BOXED.map((cliCase) => [cliCase.name] as const))(
    '%s is confined on the host: writes in the workspace come back, the proxy meters, nothing else is reached',
    async (name) => {
      mock.reset()
      const agent = `${name}-boxed`
      const envelopes = await hangarRun('Please create a file. FILE=notes.txt', envFor(), agent)
      expect(envelopes[0]).toMatchObject({
        type: 'run-start',
        proxied: true,
        sandbox: { mode: 'workspace', by: expect.stringMatching(/^bubblewrap .* on box$/) },
      })
      expect(await readFile(path.join(shop.project, 'notes.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
      expect(mock.requests.some((request) => request.rawBody.includes('--- BEGIN FEED: drills'))).toBe(true)
      expect(envelopes.some((envelope) => envelope.type === 'usage' && envelope.source === 'proxy')).toBe(
        true,
      )
      const shown = JSON.parse(
        (
          await runHangar(['runs', 'show', envelopes[0]!.runId, '--json'], {
            env: envFor(),
            cwd: shop.project,
          })
        ).stdout,
      ) as { requests: unknown[] }
      expect(shown.requests.length).toBeGreaterThan(0)

      const outside = path.join(shop.root, 'escaped.txt')
      const probeScript = `
      const fs = require('fs'), net = require('net')
      const attempt = (name, action) => { try { action(); console.log(name + ' READ-OK') } catch (error) { console.log(name + ' ' + error.code) } }
      attempt('ssh', () => console.log(fs.readFileSync(${JSON.stringify(sshd.identityFile)}, 'utf8')))
      attempt('secret', () => console.log(fs.readFileSync(${JSON.stringify(path.join(dataDir, 'secret.key'))}, 'utf8')))
      attempt('environ', () => fs.readFileSync('/proc/${process.pid}/environ'))
      attempt('outside', () => fs.writeFileSync(${JSON.stringify(outside)}, 'x'))
      attempt('root', () => fs.writeFileSync('/var/hangar-escaped.txt', 'x'))
      // The target's runs/ shows only this run's directory; cancel trusts the pgid file in it.
      const runs = ${JSON.stringify(path.join(hostDir, 'runs'))}
      console.log('runs ' + fs.readdirSync(runs).length)
      console.log('net ' + fs.readdirSync('/tmp').filter((name) => name.startsWith('hangar-net-')).join(','))
      attempt('pgid', () => fs.writeFileSync(runs + '/' + fs.readdirSync(runs)[0] + '/pgid', '1'))
      const started = Date.now(), socket = net.connect(5432, '127.0.0.1')
      socket.on('connect', () => { console.log('postgres connected'); socket.destroy(); console.log('PROBE-DONE') })
      socket.on('error', (error) => { console.log('postgres ' + error.code + ' ' + (Date.now() - started)); console.log('PROBE-DONE') })`
      await writeFile(path.join(shop.project, 'probe.cjs'), probeScript)
      const probed = await hangarRun(
        `Run the probe. ${shell('node probe.cjs > probe.txt 2>&1')}`,
        envFor(),
        agent,
      )
      expect(probed[0]).toMatchObject({ sandbox: { mode: 'workspace' } })
      const report = await readFile(path.join(shop.project, 'probe.txt'), 'utf8').catch(() => {
        throw new Error(`no probe.txt; the run said:\n${JSON.stringify(probed.slice(-5))}`)
      })
      expect(report).toContain('PROBE-DONE')
      expect(report).not.toContain('PRIVATE KEY')
      expect(report).toMatch(/^ssh ENOENT$/m)
      expect(report).toMatch(/^secret ENOENT$/m)
      expect(report).toMatch(/^environ ENOENT$/m)
      expect(report).toMatch(/^root EROFS$/m)
      expect(report).toMatch(/^runs 1$/m)
      expect(report).toMatch(/^pgid EROFS$/m)
      // The run's socket directory on the host (its private /tmp shows only that) is gone with the run.
      const net = /^net (hangar-net-\w+)$/m.exec(report)?.[1]
      expect(net).toBeDefined()
      expect(existsSync(path.join('/tmp', net!))).toBe(false)
      expect(await readdir(path.join(hostDir, 'runs'))).toEqual([])
      expect(existsSync(outside)).toBe(false)
      expect(existsSync('/var/hangar-escaped.txt')).toBe(false)
      const postgres = /^postgres (\w+) (\d+)$/m.exec(report)
      expect(postgres?.[1]).toBe('ECONNREFUSED')
      expect(Number(postgres?.[2])).toBeLessThan(5000)
      for (const file of ['probe.txt', 'probe.cjs', 'notes.txt']) await rm(path.join(shop.project, file))
    },
    300_000,
  )

  it('sandboxHosts on a target: the CONNECT proxy tunnels to an allowed host and refuses the others', async () => {
    mock.reset()
    const probeScript = `
      const http = require('http')
      const proxy = new URL(process.env.HTTPS_PROXY)
      const tunnel = (target) => new Promise((resolve) => {
        const request = http.request({ host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: target })
        request.on('connect', (response, socket) => {
          if (response.statusCode !== 200) { console.log(target + ' ' + response.statusCode); socket.destroy(); return resolve() }
          socket.write('GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n')
          let body = ''
          socket.on('data', (chunk) => (body += chunk))
          socket.on('end', () => { console.log(target + ' 200 ' + body.split('\\r\\n\\r\\n')[1]); resolve() })
        })
        request.on('error', (error) => { console.log(target + ' ' + error.code); resolve() })
        request.end()
      })
      tunnel('127.0.0.1:${allowedPort}').then(() => tunnel('127.0.0.1:5432')).then(() => console.log('PROBE-DONE'))`
    await writeFile(path.join(shop.project, 'hosts-probe.cjs'), probeScript)
    const envelopes = await hangarRun(
      `Run the probe. ${shell('node hosts-probe.cjs > hosts.txt 2>&1')}`,
      envFor(),
      'claude-hosts',
    )
    expect(envelopes[0]).toMatchObject({
      sandbox: { mode: 'workspace', hosts: [`127.0.0.1:${allowedPort}`] },
    })
    const report = await readFile(path.join(shop.project, 'hosts.txt'), 'utf8')
    expect(report).toContain('PROBE-DONE')
    expect(report).toContain(`127.0.0.1:${allowedPort} 200 allowed host says hi`)
    expect(report).toMatch(/^127\.0\.0\.1:5432 403$/m)
    for (const file of ['hosts.txt', 'hosts-probe.cjs']) await rm(path.join(shop.project, file))
  }, 240_000)

  it('a cancel kills every process of the sandbox on the host, a setsid child included', async () => {
    mock.reset()
    const marker = `HOME=${path.join(hostDir, 'sandbox-homes')}`
    const sleeper = 'setsid sh -c "sleep 600; true" > /dev/null 2>&1 < /dev/null & echo started > started.txt'
    const child: ChildProcess = spawn(
      process.execPath,
      [HANGAR_BIN, 'run', '--agent', 'claude-boxed', '--json', `Start it. HANG ${shell(sleeper)}`],
      { env: envFor(), cwd: shop.project, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let output = ''
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
    const startedOnHost = async () => {
      const workspaces = await readdir(path.join(hostDir, 'workspaces')).catch(() => [])
      return workspaces.some((key) => existsSync(path.join(hostDir, 'workspaces', key, 'started.txt')))
    }
    await expect.poll(startedOnHost, { timeout: 120_000, message: output }).toBe(true)
    await expect
      .poll(() => processesWith(marker), { timeout: 30_000, interval: 250, message: output })
      .not.toEqual([])
    // The setsid sleeper left the agent's process group and session: only the sandbox's end takes it down.
    const sleepers = async () => {
      const found: string[] = []
      for (const pid of await processesWith(marker))
        if ((await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).startsWith('sleep\x00600'))
          found.push(pid)
      return found
    }
    await expect.poll(sleepers, { timeout: 30_000 }).not.toEqual([])
    child.kill('SIGINT')
    expect(await exited).toBe(130)
    await expect.poll(() => processesWith(marker), { timeout: 30_000 }).toEqual([])
    await rm(path.join(shop.project, 'started.txt'), { force: true })
  }, 240_000)

  it('a host without bubblewrap runs the agent unsandboxed, and the run says why', async () => {
    mock.reset()
    const env = envFor({
      HANGAR_SSH_COMMAND: `${sshd.sshCommand} -o SetEnv=HANGAR_BWRAP=/nonexistent/bwrap`,
      // Unsandboxed, Claude Code would write its state into the host user's real home.
      CLAUDE_CONFIG_DIR: path.join(shop.root, 'claude-config'),
    })
    const envelopes = await hangarRun('Please create a file. FILE=plain.txt', env)
    expect(envelopes[0]).toMatchObject({
      type: 'run-start',
      proxied: true,
      sandbox: {
        mode: 'off',
        reason: expect.stringMatching(
          /^box \(.*@127\.0\.0\.1\): bubblewrap is not installed there, so runs there are not sandboxed; install it on that host \(Debian\/Ubuntu: apt-get install bubblewrap\)/,
        ),
      },
    })
    expect(envelopes[1]).toMatchObject({ type: 'error', code: 'sandbox_off_on_host', retryable: false })
    expect(envelopes.at(-1)).toMatchObject({ type: 'run-end', status: 'succeeded' })
    expect(await readFile(path.join(shop.project, 'plain.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
    // The CLI's text output shows it as a warning.
    const text = await runHangar(['run', '--agent', 'claude-boxed', 'Hello. NOTOOL'], {
      env,
      cwd: shop.project,
      // As long as the JSON run above may take: a run here ships, probes and launches over ssh.
      timeoutMs: 120_000,
    })
    expect(text.code, text.stderr).toBe(0)
    expect(text.stderr).toMatch(/warning: box \(.*\): bubblewrap is not installed there/)
    await rm(path.join(shop.project, 'plain.txt'))
  }, 240_000)

  it('hangar agents asks the target whether it can confine runs', async () => {
    const able = await runHangar(['agents'], { env: envFor(), cwd: shop.project, timeoutMs: 120_000 })
    expect(able.code, able.stderr).toBe(0)
    expect(able.stdout).toMatch(/^ {4}claude-boxed: sandboxed on box \(bubblewrap \d+\.\d+\.\d+ there\)$/m)
    const unable = await runHangar(['agents'], {
      env: envFor({ HANGAR_SSH_COMMAND: `${sshd.sshCommand} -o SetEnv=HANGAR_BWRAP=/nonexistent/bwrap` }),
      cwd: shop.project,
      timeoutMs: 120_000,
    })
    expect(unable.code, unable.stderr).toBe(0)
    expect(unable.stdout).toMatch(
      /^ {4}codex-boxed: not sandboxed: box \(.*\): bubblewrap is not installed there, so runs there are not sandboxed; install it/m,
    )
  }, 240_000)
})
