// The sandbox with the real bubblewrap: what an agent inside can and cannot reach. A node script stands in
// for the agent; the real CLIs are in test/e2e/sandbox-*.test.ts.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { agentPriority } from '../adapters/agent-priority.js'
import { createSupervisor } from '../adapters/supervisor.js'
import { silentLogger } from '../core/logger.js'
import { commandSandbox, openRunSandbox, type SandboxBase } from './run-sandbox.js'

const settings = { mode: 'workspace' as const, paths: { readOnly: [], writable: [] }, hosts: [] }

/** Every process whose command line holds `marker`. */
async function processesWith(marker: string): Promise<string[]> {
  const found: string[] = []
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const commandLine = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')
    if (commandLine.includes(marker)) found.push(entry)
  }
  return found
}

describe('run sandbox (bubblewrap)', () => {
  let root: string
  let home: string
  let dataDir: string
  let workspace: string
  let server: http.Server
  let proxyOrigin: string
  let base: SandboxBase

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'hangar-sandbox-'))
    home = path.join(root, 'home')
    dataDir = path.join(root, 'data')
    workspace = path.join(root, 'project')
    for (const directory of [path.join(home, '.ssh'), path.join(home, '.claude'), workspace, dataDir])
      await mkdir(directory, { recursive: true })
    await writeFile(path.join(dataDir, 'secret.key'), 'the-instance-key')
    await writeFile(path.join(home, '.ssh', 'id_ed25519'), 'PRIVATE KEY')
    await writeFile(path.join(home, '.claude', '.credentials.json'), '{"claudeAiOauth":{}}')
    await writeFile(path.join(home, '.claude', 'history.jsonl'), 'other projects')
    server = http.createServer((_request, response) => response.end('through the proxy'))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    proxyOrigin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    base = { dataDir, env: { HOME: home, PATH: process.env.PATH }, settings }
  })

  afterAll(async () => {
    server?.close()
    await rm(root, { recursive: true, force: true })
  })

  async function runInside(script: string, runId: string, hosts: string[] = []) {
    const runDir = path.join(dataDir, 'runs', runId)
    await mkdir(runDir, { recursive: true })
    const sandbox = await openRunSandbox(
      { ...base, settings: { ...settings, hosts } },
      {
        runId,
        runDir,
        cwd: workspace,
        adapterId: 'claude-code',
        executable: undefined,
        useLogin: true,
        proxyOrigin,
        log: silentLogger,
      },
    )
    const plan = sandbox.wrap({
      command: process.execPath,
      args: ['-e', script],
      env: sandbox.environment({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: sandbox.home }) as Record<
        string,
        string
      >,
      stdin: null,
      files: [],
    })
    const lines: string[] = []
    const handle = await createSupervisor().start(plan, workspace, { onLine: (line) => lines.push(line) })
    return { sandbox, handle, lines }
  }

  it('shows the workspace and the proxy, and nothing of the home, the data dir, the daemon or the network', async () => {
    const probe = `
      const fs = require('fs'), net = require('net'), http = require('http')
      const attempt = (name, action) => { try { action(); console.log(name, 'ok') } catch (error) { console.log(name, error.code) } }
      attempt('secret', () => fs.readFileSync(${JSON.stringify(path.join(dataDir, 'secret.key'))}))
      attempt('ssh', () => fs.readFileSync(${JSON.stringify(path.join(home, '.ssh', 'id_ed25519'))}))
      attempt('environ', () => fs.readFileSync('/proc/${process.pid}/environ'))
      attempt('outside', () => fs.writeFileSync(${JSON.stringify(path.join(root, 'escaped.txt'))}, 'x'))
      attempt('etc', () => fs.writeFileSync('/etc/hangar-escaped', 'x'))
      attempt('workspace', () => fs.writeFileSync('notes.txt', 'inside'))
      attempt('credentials', () => fs.readFileSync(process.env.HOME + '/.claude/.credentials.json'))
      attempt('history', () => fs.readFileSync(process.env.HOME + '/.claude/history.jsonl'))
      const connect = (host, port) => new Promise((resolve) => {
        const socket = net.connect(port, host)
        socket.on('connect', () => { socket.destroy(); resolve('connected') })
        socket.on('error', (error) => resolve(error.code))
      })
      ;(async () => {
        console.log('postgres', await connect('127.0.0.1', 5432))
        console.log('public', await connect('1.1.1.1', 443))
        http.get(${JSON.stringify(`${proxyOrigin}/proxy/x`)}, (response) => {
          let body = ''
          response.on('data', (chunk) => (body += chunk))
          response.on('end', () => console.log('proxy', body))
        }).on('error', (error) => console.log('proxy', error.code))
      })()`
    const { sandbox, handle, lines } = await runInside(probe, 'run-probe')
    const exit = await handle.exited
    await sandbox.close()
    expect(exit.code).toBe(0)
    expect(lines).toEqual([
      'secret ENOENT',
      'ssh ENOENT',
      'environ ENOENT',
      // /tmp is the sandbox's own: the write lands there and vanishes with it (checked below).
      'outside ok',
      'etc EROFS',
      'workspace ok',
      'credentials ok',
      'history ENOENT',
      'postgres ECONNREFUSED',
      'public ENETUNREACH',
      'proxy through the proxy',
    ])
    expect(await readFile(path.join(workspace, 'notes.txt'), 'utf8')).toBe('inside')
    expect(existsSync(path.join(root, 'escaped.txt'))).toBe(false)
    expect(existsSync('/etc/hangar-escaped')).toBe(false)
    expect(sandbox.copied).toEqual(['.claude/.credentials.json'])
    expect(sandbox.record).toMatchObject({ mode: 'workspace', by: expect.stringContaining('bubblewrap') })
  })

  it('runs the agent below the daemon priority, in the own session of the sandbox too', async () => {
    const probe = `
      const fs = require('fs'), os = require('os')
      console.log(os.getPriority())
      console.log(fs.existsSync('/proc/self/autogroup') ? fs.readFileSync('/proc/self/autogroup', 'utf8').trim() : 'none')`
    const { sandbox, handle, lines } = await runInside(probe, 'run-priority')
    const exit = await handle.exited
    await sandbox.close()
    expect(exit.code).toBe(0)
    const expected = agentPriority()
    expect(Number(lines[0])).toBe(expected.niceness)
    if (lines[1] !== 'none') expect(lines[1]).toMatch(new RegExp(` nice ${expected.groupNiceness}$`))
  })

  it('tunnels to an allowed host through the CONNECT proxy and refuses any other', async () => {
    const port = Number(new URL(proxyOrigin).port)
    const script = `
      const http = require('http')
      const proxy = new URL(process.env.HTTPS_PROXY)
      const tunnel = (target) => new Promise((resolve) => {
        const request = http.request({ host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: target })
        request.on('connect', (response, socket) => {
          if (response.statusCode !== 200) { socket.destroy(); return resolve('refused ' + response.statusCode) }
          socket.write('GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n')
          let body = ''
          socket.on('data', (chunk) => (body += chunk))
          socket.on('end', () => resolve(body.split('\\r\\n\\r\\n')[1]))
        })
        request.on('error', (error) => resolve(error.code))
        request.end()
      })
      ;(async () => {
        console.log('allowed', await tunnel('127.0.0.1:${port}'))
        console.log('other port', await tunnel('127.0.0.1:5432'))
        console.log('other host', await tunnel('example.com:443'))
      })()`
    const { sandbox, handle, lines } = await runInside(script, 'run-hosts', [`127.0.0.1:${port}`])
    await handle.exited
    await sandbox.close()
    expect(lines).toEqual(['allowed through the proxy', 'other port refused 403', 'other host refused 403'])
    expect(sandbox.record).toMatchObject({ hosts: [`127.0.0.1:${port}`] })
  })

  it('cancel kills every process of the sandbox', async () => {
    const marker = `hangar-sandbox-marker-${process.pid}`
    const script = `
      const { spawn } = require('child_process')
      // Built here, so only the sleeping shell's command line holds the whole marker.
      spawn('/bin/sh', ['-c', 'sleep 300 # ' + ${JSON.stringify(marker.slice(0, 10))} + ${JSON.stringify(marker.slice(10))}], { detached: true, stdio: 'ignore' })
      console.log('started')
      setInterval(() => {}, 1000)`
    const { sandbox, handle, lines } = await runInside(script, 'run-cancel')
    await expect.poll(() => lines, { timeout: 20_000 }).toContain('started')
    await expect.poll(() => processesWith(marker), { timeout: 20_000 }).toHaveLength(1)
    await handle.cancel(1000)
    await sandbox.close()
    await expect.poll(() => processesWith(marker), { timeout: 20_000 }).toEqual([])
  })

  it('runs a built-in agent command with no network and no view of the home', async () => {
    const sandbox = await commandSandbox(base, workspace)
    const wrapped = sandbox.wrap('/bin/sh', [
      '-c',
      `cat ${path.join(home, '.ssh', 'id_ed25519')} || echo no-key; echo made > made.txt; nice; cat /proc/self/autogroup 2>/dev/null || echo none`,
    ])
    const lines: string[] = []
    const handle = await createSupervisor().start(
      {
        command: wrapped.command,
        args: wrapped.args,
        env: { PATH: '/usr/bin:/bin' },
        stdin: null,
        files: [],
      },
      workspace,
      { onLine: (line) => lines.push(line) },
    )
    await handle.exited
    expect(lines[0]).toBe('no-key')
    // Below the daemon, in the sandbox's own session too, as a CLI agent runs.
    const expected = agentPriority()
    expect(Number(lines[1])).toBe(expected.niceness)
    if (lines[2] !== 'none') expect(lines[2]).toMatch(new RegExp(` nice ${expected.groupNiceness}$`))
    expect(lines).toHaveLength(3)
    expect(await readFile(path.join(workspace, 'made.txt'), 'utf8')).toBe('made\n')
  })

  it('fails with a fix-it line when bubblewrap is missing', async () => {
    const missing = { ...base, env: { ...base.env, HANGAR_BWRAP: path.join(root, 'no-such-bwrap') } }
    await expect(commandSandbox(missing, workspace)).rejects.toMatchObject({
      code: 'sandbox_unavailable',
      message: expect.stringContaining('bubblewrap was not found'),
      hint: expect.stringContaining('apt-get install bubblewrap'),
    })
  })

  it('refuses a workspace that holds the home directory (binding it would show ~/.ssh)', async () => {
    await expect(commandSandbox(base, root)).rejects.toMatchObject({
      code: 'sandbox_unavailable',
      message: expect.stringContaining('which a sandbox hides'),
    })
  })

  it('refuses a sandbox path inside the data dir', async () => {
    const leaky = {
      ...base,
      settings: { ...settings, paths: { readOnly: [dataDir], writable: [] } },
    }
    await expect(commandSandbox(leaky, workspace)).rejects.toMatchObject({ code: 'config_invalid' })
  })
})
