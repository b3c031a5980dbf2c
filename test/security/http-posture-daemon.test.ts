// Issue 17 item 10, against a real `hangar up`: a non-loopback bind needs --public (or server.public) and
// says what it exposes; the CLI session in daemon.json is minted at every start, a crashed daemon's is
// revoked by the next start, and it lives a day, not a year; MCP token guessing meets the same 429.
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { mintToken, parseToken } from '../../src/store/secret-token.js'
import { openStore } from '../../src/store/store.js'
import { runHangar, startDaemon, waitForOutput } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

const readCliToken = async (dataDir: string) =>
  (JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string }).token

async function sessionRow(dataDir: string, token: string) {
  const store = await openStore({ dataDir })
  try {
    return await store.authLookups.findSession(parseToken(token)!.lookupId)
  } finally {
    await store.close()
  }
}

describe('hangar up and the network (issue 17 item 10)', () => {
  // Failure: `--host 0.0.0.0` alone put the API, MCP endpoint and proxy on the network with a warning.
  it('refuses a non-loopback address without --public, with one line saying how', async () => {
    const result = await runHangar([
      'up',
      '--host',
      '0.0.0.0',
      '--port',
      '0',
      '--data-dir',
      await makeTempDir(),
    ])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/refusing to listen on 0\.0\.0\.0.*--public.*server\.public/)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stdout).not.toContain('listening on')
  })

  it('with --public, says what it exposes and how to put TLS in front', async () => {
    const daemon = await startDaemon(['--host', '0.0.0.0', '--public', '--data-dir', await makeTempDir()])
    try {
      const stderr = await waitForOutput(daemon.stderr, 'trustProxy')
      expect(stderr).toMatch(/REST API and web UI.*MCP endpoint.*LLM proxy/)
      expect(stderr).toMatch(/TLS reverse proxy.*server\.trustProxy/)
      const port = new URL(daemon.url).port
      expect((await fetch(`http://127.0.0.1:${port}/api/health`)).status).toBe(200)
    } finally {
      await daemon.stop()
    }
  })

  it('takes server.public: true in hangar.yaml instead of --public', async () => {
    const project = await makeTempDir()
    await writeFile(path.join(project, 'hangar.yaml'), 'server:\n  public: true\n')
    const daemon = await startDaemon(['--host', '0.0.0.0', '--data-dir', await makeTempDir()], {
      cwd: project,
    })
    try {
      await waitForOutput(daemon.stderr, 'reachable from the network')
    } finally {
      await daemon.stop()
    }
  })
})

describe('the CLI session in daemon.json (issue 17 item 10)', () => {
  // Failure: a SIGKILLed daemon's CLI session stayed valid for a year, for anyone holding the old file.
  it('is minted at every start, the crashed daemon’s revoked, and lives a day', async () => {
    const dataDir = await makeTempDir()
    const first = await startDaemon(['--data-dir', dataDir])
    const crashed = await readCliToken(dataDir)
    first.child.kill('SIGKILL')
    await first.stop()

    const second = await startDaemon(['--data-dir', dataDir])
    let current: string
    try {
      current = await readCliToken(dataDir)
      expect(current).not.toBe(crashed)
      const tokens = (token: string) =>
        fetch(`${second.url}/api/tokens`, { headers: { authorization: `Bearer ${token}` } })
      const old = await tokens(crashed)
      expect(old.status).toBe(401)
      expect(((await old.json()) as { error: { message: string } }).error.message).toContain(
        'the session was signed out',
      )
      expect((await tokens(current)).status).toBe(200)
      const row = (await sessionRow(dataDir, current))!
      const lifetimeMs = Date.parse(row.expires_at) - Date.parse(row.created_at)
      expect(lifetimeMs).toBeGreaterThan(0)
      expect(lifetimeMs).toBeLessThanOrEqual(86_400_000)
    } finally {
      await second.stop()
    }
    // A clean stop signs it out too.
    expect((await sessionRow(dataDir, current))!.revoked_at).not.toBeNull()
  })
})

describe('MCP token guessing (issue 17 item 10)', () => {
  it('answers 429 with Retry-After after more than 20 failed MCP tokens from one client', async () => {
    const daemon = await startDaemon(['--data-dir', await makeTempDir()])
    try {
      const call = () =>
        fetch(`${daemon.url}/api/mcp`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${mintToken('pat').token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        })
      for (let guess = 0; guess < 21; guess++) expect((await call()).status).toBe(401)
      const limited = await call()
      expect(limited.status).toBe(429)
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    } finally {
      await daemon.stop()
    }
  })
})
