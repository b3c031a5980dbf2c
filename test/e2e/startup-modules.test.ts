// What `hangar up` loads before it listens. What only some requests or stores need — the Anthropic SDK of
// the built-in agent (with OpenTelemetry's API, some 300 modules), the MCP SDK (with its schema
// validators), web-push (with its JWT and ASN.1 code) and, on SQLite, the PostgreSQL driver — is loaded
// on first use, not by every daemon's start-up.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import {
  cleanEnv,
  createToken,
  readDaemonToken,
  type RunningDaemon,
  startDaemon,
} from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

const ROOT = path.resolve(import.meta.dirname, '../..')
const REGISTER = path.join(ROOT, 'test/fixtures/module-log/register.mjs')
/** The daemon's own dependencies (agent CLIs it probes may have SDKs of their own elsewhere). */
const DEPENDENCIES = `${pathToFileURL(ROOT).href}/node_modules/`

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
    const loaded = async (name: string) =>
      (await readFile(logFile, 'utf8')).split('\n').some((url) => url.startsWith(`${DEPENDENCIES}${name}/`))
    // The hook sees the daemon's modules: the store's query builder is among them.
    expect(await loaded('kysely')).toBe(true)
    expect(await loaded('@anthropic-ai/sdk')).toBe(false)
    expect(await loaded('@modelcontextprotocol/sdk')).toBe(false)
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
    expect(await loaded('@modelcontextprotocol/sdk')).toBe(true)
  })
})
