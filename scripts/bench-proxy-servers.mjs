#!/usr/bin/env node
// The processes the proxy benchmark talks to, one role per process so each one's CPU can be read apart:
//   upstream  — a mock Anthropic Messages endpoint (JSON, or SSE when `stream` is true) and a feed
//   minimal   — the floor: a Node pass-through that parses and re-serialises the body and pipes back
//   hangar    — Hangar's proxy (a real runtime on a scratch SQLite store) with one warm feed and a budget
//   hangar-pg — the same on PostgreSQL (HANGAR_BENCH_DATABASE_URL, a throw-away schema)
// Each prints one JSON line with its URL when it is ready.
import http from 'node:http'
import { mkdirSync, mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const [role, upstreamUrl] = process.argv.slice(2)
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')

function listen(server) {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`)),
  )
}

function readBody(req) {
  return new Promise((resolve) => {
    const chunks = []
    req.on('data', (chunk) => chunks.push(chunk))
    req.on('end', () => resolve(Buffer.concat(chunks)))
  })
}

const usage = { input_tokens: 1200, output_tokens: 40, cache_read_input_tokens: 5000 }
const reply = JSON.stringify({
  id: 'msg_bench',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'ok '.repeat(40) }],
  stop_reason: 'end_turn',
  usage,
})
const sse = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
const streamHead = sse('message_start', {
  message: { id: 'msg_bench', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', usage },
})
const streamTail = [
  sse('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  ...Array.from({ length: 20 }, () =>
    sse('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'ok ' } }),
  ),
  sse('content_block_stop', { index: 0 }),
  sse('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 40 } }),
  sse('message_stop', {}),
].join('')

async function upstream() {
  const server = http.createServer(async (req, res) => {
    if (req.url.startsWith('/feed')) {
      res.writeHead(200, { 'content-type': 'text/plain' })
      return res.end('BTC 97000, ETH 3400, deploy freeze until Friday.')
    }
    const body = await readBody(req)
    if (body.includes('"stream":true')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(streamHead)
      // The rest a moment later, as a model would: the first byte is what TTFB measures.
      setTimeout(() => res.end(streamTail), 2)
      return
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) })
    res.end(reply)
  })
  server.keepAliveTimeout = 60_000
  return listen(server)
}

async function minimal() {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 })
  const target = new URL(upstreamUrl)
  const server = http.createServer(async (req, res) => {
    const body = Buffer.from(JSON.stringify(JSON.parse((await readBody(req)).toString('utf8'))))
    const headers = { ...req.headers, 'content-length': body.length }
    delete headers.host
    delete headers.connection
    const upstreamRequest = http.request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers, agent },
      (upstreamResponse) => {
        res.writeHead(upstreamResponse.statusCode, upstreamResponse.headers)
        upstreamResponse.pipe(res)
      },
    )
    upstreamRequest.end(body)
  })
  server.keepAliveTimeout = 60_000
  return listen(server)
}

async function hangar(databaseUrl) {
  const { createRuntime } = await import(path.join(root, 'dist/src/main.js'))
  const { parseConfig } = await import(path.join(root, 'dist/src/core/config.js'))
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-proxy-'))
  // The data dir is never inside the project (runs there could read its keys).
  const projectDir = path.join(scratch, 'project')
  mkdirSync(projectDir)
  const config = parseConfig(
    [
      'services:',
      `  ops: { url: "${upstreamUrl}" }`,
      'agents:',
      '  bench:',
      '    adapter: claude-code',
      '    feeds: [{ source: ops, path: /feed, ttl: 3600 }]',
      // Never reached, but checked on every request as a real budget is.
      '    budget: { usd: 1000000, window: 1d }',
    ].join('\n'),
  )
  const runtime = await createRuntime({
    dataDir: path.join(scratch, 'data'),
    config,
    projectDir,
    env: { ANTHROPIC_BASE_URL: upstreamUrl, ANTHROPIC_API_KEY: 'sk-bench-not-a-real-key' },
    logLevel: 'silent',
    ...(databaseUrl && { databaseUrl }),
  })
  await runtime.serveProxy()
  const { endpoints } = await runtime.modelProxy.mintForProfile('system', runtime.owner.id, 'bench')
  return endpoints.anthropic
}

async function hangarOnPostgres() {
  const { freshSchema } = await import('./bench-support.mjs')
  const schema = await freshSchema('hangar_bench_proxy')
  // Dropped when the bench stops this process (SIGTERM).
  process.once('SIGTERM', () => void schema.drop().finally(() => process.exit(0)))
  return hangar(schema.url)
}

async function hangarOnSqlite() {
  // The bench stops this process with SIGTERM: an exit rather than the signal's default, so that a profile
  // asked for with --cpu-prof (BENCH_PROXY_NODE_FLAGS) is written.
  process.once('SIGTERM', () => process.exit(0))
  return hangar()
}

const roles = { upstream, minimal, hangar: hangarOnSqlite, 'hangar-pg': hangarOnPostgres }
const url = await roles[role]()
process.stdout.write(`${JSON.stringify({ url })}\n`)
