// `hangar up` as a process: listening, daemon.json, sign-in through the printed link, clean stop.
import { readFile, stat } from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { cleanEnv, runHangar, startDaemon, waitForOutput } from '../helpers/hangar-cli.js'
import { freshPostgresUrl, makeTempDir } from '../helpers/store-engines.js'

interface DaemonJson {
  url: string
  pid: number
  token: string
  nodeId: string
}

async function readDaemonJson(dataDir: string): Promise<DaemonJson> {
  return JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as DaemonJson
}

describe('daemon', () => {
  it('starts, prints a sign-in link that yields a session, and stops cleanly on SIGTERM', async () => {
    const dataDir = await makeTempDir()
    const daemon = await startDaemon(['--data-dir', dataDir])
    try {
      expect(daemon.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(daemon.stdout()).toMatch(/sqlite store at .*hangar\.db/)
      expect(daemon.stdout()).toContain('Created the owner account')
      // One detection line per adapter, then a re-detection on SIGHUP.
      await waitForOutput(daemon.stdout, '✗ cursor-agent (not installed')
      daemon.child.kill('SIGHUP')
      await waitForOutput(daemon.stdout, 'Agents detected again (SIGHUP):')

      const info = await readDaemonJson(dataDir)
      expect(info).toMatchObject({
        url: daemon.url,
        pid: daemon.child.pid,
        token: expect.stringMatching(/^hgs_/),
      })
      expect((await stat(path.join(dataDir, 'daemon.json'))).mode & 0o777).toBe(0o600)

      const health = await fetch(`${daemon.url}/api/health`)
      expect(await health.json()).toMatchObject({ status: 'ok', engine: 'sqlite', vault: 'ok' })

      const link = /Sign in: (\S+)/.exec(daemon.stdout())![1]!
      const [pageUrl, secret] = link.split('#')
      const page = await fetch(pageUrl!)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('/api/login')
      const login = await fetch(`${daemon.url}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: secret }),
      })
      expect(login.status).toBe(200)
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!
      const tokens = await fetch(`${daemon.url}/api/tokens`, { headers: { cookie } })
      expect(tokens.status).toBe(200)

      // The CLI finds and authenticates to the daemon through daemon.json.
      const doctor = await runHangar(['doctor', '--data-dir', dataDir])
      expect(doctor.stdout).toMatch(/✓ daemon: http:\/\/127\.0\.0\.1:\d+ \(pid \d+, version [\d.]+\): ok/)
      // The daemon's heartbeat row: this store's one node, alive, at its URL.
      expect(doctor.stdout).toContain(`✓ cluster: ${info.nodeId} alive (${daemon.url})`)
      const viaCli = await fetch(`${daemon.url}/api/tokens`, {
        headers: { authorization: `Bearer ${info.token}` },
      })
      expect(viaCli.status).toBe(200)

      const loginLink = await runHangar(['login', '--data-dir', dataDir])
      expect(loginLink.stdout.trim().startsWith(`${daemon.url}/login#hgl_`)).toBe(true)
    } finally {
      expect(await daemon.stop('SIGTERM')).toBe(0)
    }
    await expect(stat(path.join(dataDir, 'daemon.json'))).rejects.toThrow()
  })

  it('refuses to start a second daemon on the same data dir', async () => {
    const dataDir = await makeTempDir()
    const daemon = await startDaemon(['--data-dir', dataDir])
    try {
      const second = await runHangar(['up', '--port', '0', '--data-dir', dataDir])
      expect(second.code).toBe(1)
      expect(second.stderr).toMatch(
        /hangar: error: a daemon is already running for .* at http:\/\/127\.0\.0\.1:\d+ \(pid \d+\)/,
      )
    } finally {
      await daemon.stop()
    }
  })

  it('says clearly when the port is taken', async () => {
    const blocker = net.createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    const port = (blocker.address() as net.AddressInfo).port
    try {
      const result = await runHangar(['up', '--port', String(port), '--data-dir', await makeTempDir()])
      expect(result.code).toBe(1)
      expect(result.stderr).toMatch(/port \d+ on 127\.0\.0\.1 is already in use.*--port/)
      expect(result.stderr).not.toMatch(/\n\s+at /)
    } finally {
      blocker.close()
    }
  })

  it('warns when it binds a non-loopback address (with --public), and still requires auth there', async () => {
    const daemon = await startDaemon(['--host', '0.0.0.0', '--public', '--data-dir', await makeTempDir()])
    try {
      await waitForOutput(daemon.stderr, 'reachable from the network')
      const port = new URL(daemon.url).port
      const response = await fetch(`http://127.0.0.1:${port}/api/tokens`)
      expect(response.status).toBe(401)
    } finally {
      await daemon.stop()
    }
  })

  it('runs on PostgreSQL and says the vault needs HANGAR_SECRET_KEYS there', async () => {
    const daemon = await startDaemon(['--data-dir', await makeTempDir()], {
      env: cleanEnv({ HANGAR_DATABASE_URL: await freshPostgresUrl() }),
    })
    try {
      const health = await (await fetch(`${daemon.url}/api/health`)).json()
      expect(health).toMatchObject({ status: 'ok', engine: 'postgres', vault: 'unavailable' })
      await waitForOutput(daemon.stderr, 'HANGAR_SECRET_KEYS is not set')
    } finally {
      await daemon.stop()
    }
  })
})
