// Issue 17 item 11: malformed input the daemon used to mishandle, against a real runtime on a real socket
// with its real JSON log lines. Invalid UTF-8 in a JSON body was accepted with U+FFFD in its place; MCP
// `initialize` with bad params answered -32603 with a zod dump; an empty MCP batch got 202; a client that
// aborted a large upload was logged as a 500 with a stack.
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/core/config.js'
import { createRuntime, type Runtime } from '../../src/main.js'
import type { RunningServer } from '../../src/server/listen.js'

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const INITIALIZE_PARAMS = {
  protocolVersion: '2025-06-18',
  capabilities: {},
  clientInfo: { name: 'probe', version: '1' },
}
/** `{"adapter":"builtin","model":"m<0xff>"}`: one byte that is not UTF-8 inside a JSON string. */
const INVALID_UTF8_PROFILE = Buffer.concat([
  Buffer.from('{"adapter":"builtin","model":"m'),
  Buffer.from([0xff]),
  Buffer.from('"}'),
])

interface LogLine {
  level: number | string
  msg: string
  [field: string]: unknown
}

describe('malformed input (issue 17 item 11)', () => {
  let root: string
  let runtime: Runtime
  let server: RunningServer
  let token: string
  let logText = ''
  const logLines = (): LogLine[] =>
    logText
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as LogLine)

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'hangar-malformed-'))
    const logs = new PassThrough()
    logs.on('data', (chunk: Buffer) => (logText += chunk.toString()))
    runtime = await createRuntime({
      dataDir: path.join(root, 'data'),
      config: parseConfig(''),
      // The data dir is never inside the project (a run there could read its keys).
      projectDir: await mkdirProject(root),
      env: {},
      // Access lines are debug.
      logLevel: 'debug',
      logDestination: logs,
    })
    server = await runtime.listen({ host: '127.0.0.1', port: 0 })
    ;({ token } = await runtime.auth.createToken('system', runtime.owner.id, { name: 'malformed' }))
  }, 60_000)

  afterAll(async () => {
    await server?.close()
    await runtime?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  const api = (pathname: string, init: RequestInit) =>
    fetch(`${server.url}${pathname}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) },
    })
  const mcp = (body: string | Uint8Array) => api('/api/mcp', { method: 'POST', headers: MCP_HEADERS, body })

  it('refuses invalid UTF-8 in a JSON body with 400 instead of storing U+FFFD', async () => {
    const response = await api('/api/profiles/utf8-probe', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: INVALID_UTF8_PROFILE,
    })
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({
      error: {
        code: 'invalid_json',
        message: expect.stringMatching(/^the request body is not valid UTF-8; .+$/),
        retryable: false,
        details: null,
      },
    })
    const stored = await api('/api/profiles/utf8-probe', { method: 'GET' })
    expect(stored.status).toBe(404)
  })

  it('refuses invalid UTF-8 in an MCP message with a JSON-RPC parse error', async () => {
    const body = Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'),
      Buffer.from('"capabilities":{},"clientInfo":{"name":"pr'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('be","version":"1"}}}'),
    ])
    const response = await mcp(body)
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32700,
        message: expect.stringMatching(/^Parse error: the request body is not valid UTF-8/),
      },
    })
  })

  it('answers initialize with bad params as -32602 with one readable line', async () => {
    const response = await mcp(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'initialize',
        params: { capabilities: {}, clientInfo: { name: 'probe' } },
      }),
    )
    const answer = (await response.json()) as { id: unknown; error: { code: number; message: string } }
    expect(answer.id).toBe(7)
    expect(answer.error.code).toBe(-32602)
    expect(answer.error.message).toMatch(/^Invalid params for initialize: params\.\S+: .+$/)
    expect(answer.error.message).not.toContain('\n')
    expect(answer.error.message).not.toMatch(/"code":|"path":|\[\s*\{/)
  })

  it('still initializes with good params', async () => {
    const response = await mcp(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INITIALIZE_PARAMS }),
    )
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ id: 1, result: { serverInfo: { name: 'hangar' } } })
  })

  it('answers an empty batch with a JSON-RPC Invalid Request error, not 202', async () => {
    const response = await mcp('[]')
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: expect.stringMatching(/^Invalid Request: the batch is empty/) },
    })
  })

  it.each([
    ['PUT', '/api/profiles/abort-probe'],
    ['POST', '/api/mcp'],
  ])(
    'logs a client that aborts a 50 MB upload (%s %s) by its access line alone: 499, no 500, no stack',
    async (method, pathname) => {
      const before = logLines().length
      // Sent chunked (no length for the body limit to refuse up front), so the daemon is reading it when
      // the client goes away after half a megabyte of its 50.
      await new Promise<void>((resolve) => {
        const request = http.request(`${server.url}${pathname}`, {
          method,
          headers: { authorization: `Bearer ${token}`, ...MCP_HEADERS },
        })
        request.on('error', () => resolve())
        request.write(`{"adapter":"builtin","model":"${'x'.repeat(512 * 1024)}`, () => {
          setTimeout(() => request.destroy(), 50)
        })
      })
      // Wait for the daemon to notice: its access line for this request.
      const deadline = Date.now() + 20_000
      const forProbe = () =>
        logLines()
          .slice(before)
          .filter((line) => line.path === pathname)
      while (!forProbe().some((line) => line.msg === 'request')) {
        if (Date.now() > deadline) throw new Error(`no access line for the aborted upload:\n${logText}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      // One line, the access line, at debug level, with the status nginx made the convention for a client
      // that closed the request; no error line, no stack, no 500.
      const lines = forProbe()
      expect(JSON.stringify(lines)).not.toMatch(/"stack"|\bat .+\.(ts|js):\d+/)
      expect(lines).toEqual([expect.objectContaining({ level: 20, msg: 'request', status: 499 })])
      // The daemon is fine afterwards.
      expect((await fetch(`${server.url}/api/health`)).status).toBe(200)
    },
  )
})

async function mkdirProject(root: string): Promise<string> {
  const project = path.join(root, 'project')
  await mkdir(project, { recursive: true })
  return project
}
