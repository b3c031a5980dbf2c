// What `hangar up` loads before it listens. What only some requests or stores need — the Anthropic SDK of
// the built-in agent (with OpenTelemetry's API, some 300 modules), the MCP SDK (with its schema
// validators), web-push (with its JWT and ASN.1 code) and, on SQLite, the PostgreSQL driver — is loaded
// on first use, not by every daemon's start-up. The CLI is a bundle (scripts/build-daemon.mjs): the two SDKs
// are chunks of their own, named for them; web-push, pg and better-sqlite3 are loaded from node_modules.
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import {
  cleanEnv,
  createToken,
  HANGAR_BIN,
  readDaemonToken,
  type RunningDaemon,
  startDaemon,
} from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

const ROOT = path.resolve(import.meta.dirname, '../..')
const REGISTER = path.join(ROOT, 'test/fixtures/module-log/register.mjs')
/** The daemon's own dependencies (agent CLIs it probes may have SDKs of their own elsewhere). */
const DEPENDENCIES = `${pathToFileURL(ROOT).href}/node_modules/`
const BUNDLE = `${pathToFileURL(path.dirname(HANGAR_BIN)).href}/`

describe('daemon start-up', () => {
  let daemon: RunningDaemon | undefined
  afterEach(async () => {
    await daemon?.stop()
    daemon = undefined
  })

  it('loads the SDKs, web-push and the PostgreSQL driver only once something needs them', async () => {
    const dataDir = await makeTempDir()
    const logFile = path.join(await makeTempDir(), 'modules.log')
    daemon = await startDaemon(['--data-dir', dataDir], {
      env: cleanEnv({ NODE_OPTIONS: `--import ${pathToFileURL(REGISTER).href}`, MODULE_LOG_FILE: logFile }),
    })
    const urls = async () => (await readFile(logFile, 'utf8')).split('\n')
    const loaded = async (name: string) =>
      (await urls()).some((url) => url.startsWith(`${DEPENDENCIES}${name}/`))
    /** A chunk of the bundle: `<name>-<hash>.js`. */
    const chunkLoaded = async (name: string) =>
      (await urls()).some((url) => new RegExp(`^${BUNDLE}${name}-[\\w-]+\\.js$`).test(url))
    // The lazy chunks exist (else the checks below would pass on a build that inlined them).
    const chunks = await readdir(path.dirname(HANGAR_BIN))
    for (const name of ['anthropic-sdk', 'mcp-sdk'])
      expect(chunks.filter((file) => file.startsWith(`${name}-`))).toHaveLength(1)
    // The hook sees the daemon's modules: the bundle's main chunk is among them.
    expect(await chunkLoaded('hangar-main')).toBe(true)
    expect(await chunkLoaded('anthropic-sdk')).toBe(false)
    expect(await chunkLoaded('mcp-sdk')).toBe(false)
    expect(await loaded('web-push')).toBe(false)
    expect(await loaded('pg')).toBe(false)
    // The hook sees CommonJS modules too: the SQLite driver (the one for this Node) is one.
    expect((await loaded('better-sqlite3')) || (await loaded('better-sqlite3-node-api'))).toBe(true)

    // The first MCP request loads its SDK, and is answered.
    const pat = await createToken(daemon.url, await readDaemonToken(dataDir), 'mcp')
    const response = await fetch(`${daemon.url}/api/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${pat}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-03-26',
          capabilities: {},
          clientInfo: { name: 'test', version: '1' },
        },
      }),
    })
    expect(response.status).toBe(200)
    expect(
      ((await response.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name,
    ).toBe('hangar')
    expect(await chunkLoaded('mcp-sdk')).toBe(true)
  })
})
