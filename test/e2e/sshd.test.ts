// The loopback OpenSSH server the remote-execution suites run against: key login as the current user
// with only the generated config, stdin passing through, concurrent sessions, and a clean stop() that
// lets sessions run their exit traps.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { startSshd, type TestSshd } from '../helpers/sshd.js'

function ssh(
  server: TestSshd,
  command: string,
  input = '',
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [program, ...baseArgs] = server.sshCommand.split(' ')
  const args = [
    ...baseArgs,
    '-p',
    String(server.port),
    '-i',
    server.identityFile,
    `${server.user}@${server.host}`,
    command,
  ]
  return new Promise((resolve, reject) => {
    const child = spawn(program!, args, { stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(input)
  })
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

async function childrenOf(pid: number): Promise<number[]> {
  const children: number[] = []
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '')
    if (stat && Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid)
      children.push(Number(entry))
  }
  return children
}

async function processesRunning(commandLine: string): Promise<number[]> {
  const found: number[] = []
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')
    if (cmdline.includes(commandLine)) found.push(Number(entry))
  }
  return found
}

describe('startSshd', () => {
  let server: TestSshd

  beforeAll(async () => {
    server = await startSshd()
  })

  afterAll(async () => {
    await server?.stop()
  })

  it('runs a command over ssh with only the generated config', async () => {
    const result = await ssh(server, 'echo hello; echo $((6*7))')
    expect(result).toEqual({ code: 0, stdout: 'hello\n42\n', stderr: '' })
    const config = await readFile(server.configFile, 'utf8')
    expect(config).not.toMatch(/^\s*(HostName|Port|User|IdentityFile|ControlMaster|ControlPath)\b/im)
  })

  it('passes stdin through', async () => {
    const result = await ssh(server, 'cat', 'line one\nline two\n')
    expect(result.stdout).toBe('line one\nline two\n')
    expect(result.code).toBe(0)
  })

  it('serves concurrent connections', async () => {
    const slow = ssh(server, 'read line; echo "got $line"', 'ping\n')
    const results = await Promise.all([slow, ssh(server, 'echo second')])
    expect(results.map((result) => result.stdout)).toEqual(['got ping\n', 'second\n'])
  })

  it('stops sshd and every session process, and stop() is idempotent', async () => {
    const own = await startSshd()
    const marker = `${30 + Math.random()}`
    const session = ssh(own, `sleep ${marker}`)
    // Stopped once the command runs, not as soon as sshd has a child: the session's shell is in the login
    // user's rc files before that, and pyenv's rehash there (root's .bashrc on these machines) has a moment
    // between taking its lock and setting the trap that removes it. A stop in that moment left the lock, and
    // every later SSH session on the machine waited 60 s for it ('test sshd did not start' in five suites).
    await vi.waitFor(async () => expect(await processesRunning(`sleep\0${marker}`)).not.toEqual([]), {
      timeout: 20_000,
      interval: 50,
    })
    expect((await childrenOf(own.pid)).length).toBeGreaterThan(0)
    await own.stop()
    await own.stop()
    expect(await connects(own.port)).toBe(false)
    expect(await childrenOf(own.pid)).toEqual([])
    expect(await processesRunning(`sleep\0${marker}`)).toEqual([])
    expect((await session).code).not.toBe(0)
  })

  it("lets a session's shell run its exit trap when it stops, so no lock of the user's rc files stays behind", async () => {
    // pyenv's rehash (in root's .bashrc on these machines) holds a lock file it removes in an EXIT trap;
    // a shell killed outright left it, and every later SSH session waited 60 s for it.
    const own = await startSshd()
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hangar-sshd-trap-'))
    const lock = path.join(dir, 'lock')
    const session = ssh(own, `trap 'rm -f ${lock}' EXIT; touch ${lock}; sleep 60`)
    await vi.waitFor(() => expect(existsSync(lock)).toBe(true), { timeout: 20_000, interval: 50 })
    await own.stop()
    expect(existsSync(lock)).toBe(false)
    expect((await session).code).not.toBe(0)
    await rm(dir, { recursive: true, force: true })
  })
})
