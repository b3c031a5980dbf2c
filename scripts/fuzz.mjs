#!/usr/bin/env node
// `npm run fuzz`: throws generated malformed requests at a real `hangar up` (REST API, MCP endpoint and
// LLM proxy) on loopback and checks that every answer is a 4xx in the right error shape, the daemon stays
// healthy throughout, and the store is unchanged except for the proxy's request log. Bounded in count
// and time; reproducible with --seed. Nothing leaves the machine: every provider upstream is a local sink
// that answers each family's 400 and counts what reaches it (the proxy passes a body it need not read on
// unread, as a provider would get it: the provider's own 400 is then the answer).
//
//   node scripts/fuzz.mjs [--count 1500] [--seconds 120] [--seed N] [--concurrency 8]
import { spawn, spawnSync } from 'node:child_process'
import { request as httpRequest } from 'node:http'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { createFuzzCases } from './fuzz-cases.mjs'
import { startSink, storeSnapshot, diffSnapshots, checkAnswer } from './fuzz-checks.mjs'

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
const bin = path.join(root, 'dist/bin/hangar.js')
const { values: flags } = parseArgs({
  options: {
    count: { type: 'string', default: '1500' },
    seconds: { type: 'string', default: '120' },
    seed: { type: 'string', default: String(Date.now() % 1_000_000) },
    concurrency: { type: 'string', default: '8' },
  },
})
const count = Number(flags.count)
const deadline = Date.now() + Number(flags.seconds) * 1000
const seed = Number(flags.seed)

const work = mkdtempSync(path.join(os.tmpdir(), 'hangar-fuzz-'))
const dataDir = path.join(work, 'data')
const projectDir = path.join(work, 'project')
mkdirSync(projectDir)
spawnSync('git', ['init', '-q', '-b', 'main', projectDir])
writeFileSync(
  path.join(projectDir, 'hangar.yaml'),
  'agents:\n  helper: { adapter: builtin, provider: anthropic, budget: { usd: 5, window: 1d } }\n',
)

const sink = await startSink()
const env = { ...process.env }
for (const name of Object.keys(env)) if (name.startsWith('HANGAR_')) delete env[name]
Object.assign(env, {
  HANGAR_LOG_LEVEL: 'warn',
  ANTHROPIC_BASE_URL: `${sink.url}/anthropic`,
  ANTHROPIC_API_KEY: 'sk-ant-fuzz-operator-key-000000000000',
  OPENAI_BASE_URL: `${sink.url}/openai/v1`,
  OPENAI_API_KEY: 'sk-fuzz-operator-key-0000000000000000',
  GOOGLE_GEMINI_BASE_URL: `${sink.url}/gemini`,
  GEMINI_API_KEY: 'AIzafuzzoperatorkey00000000000000000000',
})

function hangar(args) {
  const result = spawnSync(process.execPath, [bin, ...args, '--data-dir', dataDir], {
    cwd: projectDir,
    env,
    encoding: 'utf8',
  })
  if (result.status !== 0) throw new Error(`hangar ${args.join(' ')}: ${result.stderr}`)
  return result.stdout
}

const daemon = spawn(process.execPath, [bin, 'up', '--port', '0', '--data-dir', dataDir], {
  cwd: projectDir,
  env,
  stdio: ['ignore', 'pipe', 'pipe'],
})
let daemonErr = ''
daemon.stderr.on('data', (chunk) => (daemonErr += chunk))
const baseUrl = await new Promise((resolve, reject) => {
  let out = ''
  daemon.stdout.on('data', (chunk) => {
    out += chunk
    const match = /listening on (\S+)/.exec(out)
    if (match) resolve(match[1])
  })
  daemon.on('exit', (code) => reject(new Error(`daemon exited ${code}: ${out}${daemonErr}`)))
})

async function call(pathname, init = {}) {
  const response = await fetch(new URL(pathname, baseUrl), init)
  return { status: response.status, body: await response.text(), headers: response.headers }
}

/**
 * A fuzz request as sent, byte for byte (fetch would fold `..` and `%2e%2e` in the path itself), on a fresh
 * connection from one of 50 loopback source addresses: failed-auth limits are per client, so one address
 * would spend most of the run answered 429 without reaching a route; some still reach it.
 */
function rawCall(pathname, init, index) {
  return new Promise((resolve) => {
    const outgoing = httpRequest(
      {
        host: '127.0.0.1',
        port: new URL(baseUrl).port,
        localAddress: `127.0.0.${2 + (index % 50)}`,
        agent: false,
        method: init.method,
        path: pathname,
        headers: { host: new URL(baseUrl).host, ...init.headers },
        timeout: 15_000,
      },
      (response) => {
        const chunks = []
        response.on('data', (chunk) => chunks.push(chunk))
        response.on('end', () => {
          const headers = new Headers()
          for (const [name, value] of Object.entries(response.headers))
            for (const item of [value].flat()) if (item !== undefined) headers.append(name, item)
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers })
        })
        response.on('error', (error) =>
          resolve({ status: 0, body: String(error.code ?? error), headers: new Headers() }),
        )
      },
    )
    outgoing.on('timeout', () => outgoing.destroy(new Error('timed out')))
    // The daemon may answer (413, 415, 401) and close before the whole body is written: what it answered
    // still arrives; an error with no answer at all is a failure.
    outgoing.on('error', (error) =>
      resolve({ status: 0, body: String(error.code ?? error), headers: new Headers() }),
    )
    outgoing.end(init.body)
  })
}

// Credentials: the owner's PAT, a member's session cookie and PAT, and a proxy token.
const ownerPat = JSON.parse(hangar(['token', 'create', '--name', 'fuzz-owner', '--json'])).token
const invite = JSON.parse(hangar(['users', 'add', 'mallory', '--json'])).inviteUrl
const login = await call('/api/login', {
  method: 'POST',
  headers: { 'content-type': 'application/json', origin: new URL(baseUrl).origin },
  body: JSON.stringify({ token: invite.split('#')[1] }),
})
const memberCookie = /hangar_session=[^;]+/.exec(login.headers.get('set-cookie') ?? '')?.[0]
const memberPatResponse = await call('/api/tokens', {
  method: 'POST',
  headers: { 'content-type': 'application/json', cookie: memberCookie, origin: new URL(baseUrl).origin },
  body: JSON.stringify({ name: 'fuzz-member' }),
})
const memberPat = JSON.parse(memberPatResponse.body).token
const proxyToken = JSON.parse(hangar(['env', 'helper', '--json'])).token
if (!ownerPat || !memberCookie || !memberPat || !proxyToken) {
  throw new Error('could not set up the fuzz credentials')
}

const dbFile = path.join(dataDir, 'hangar.db')
const before = storeSnapshot(dbFile)
const generator = createFuzzCases({ seed, ownerPat, memberPat, memberCookie, proxyToken, origin: baseUrl })
// Generated up front, so a seed names the same requests whatever order the workers send them in.
const cases = Array.from({ length: count }, (_, index) => generator.next(index))

const tally = { sent: 0, byStatus: new Map(), byTarget: new Map(), failures: [], healthChecks: 0 }
let nextCase = 0
async function worker() {
  while (nextCase < count && Date.now() < deadline) {
    const fuzzCase = cases[nextCase++]
    const answer = await rawCall(fuzzCase.path, fuzzCase.init, fuzzCase.index)
    tally.sent++
    tally.byStatus.set(answer.status, (tally.byStatus.get(answer.status) ?? 0) + 1)
    tally.byTarget.set(fuzzCase.target, (tally.byTarget.get(fuzzCase.target) ?? 0) + 1)
    const problem = checkAnswer(fuzzCase, answer)
    if (problem) tally.failures.push({ case: fuzzCase.describe, status: answer.status, problem })
  }
}
async function healthWatch(stop) {
  while (!stop.done) {
    const health = await call('/api/health', { signal: AbortSignal.timeout(10_000) }).catch(() => null)
    tally.healthChecks++
    if (health?.status !== 200)
      tally.failures.push({ case: 'GET /api/health during the fuzz', problem: 'unhealthy' })
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

const started = performance.now()
const stop = { done: false }
const watcher = healthWatch(stop)
await Promise.all(Array.from({ length: Number(flags.concurrency) }, worker))
stop.done = true
await watcher
const seconds = (performance.now() - started) / 1000

const health = await call('/api/health')
if (health.status !== 200)
  tally.failures.push({ case: 'GET /api/health after', problem: `status ${health.status}` })
const changes = diffSnapshots(before, storeSnapshot(dbFile))
for (const change of changes) tally.failures.push({ case: 'store', problem: change })
const daemonAlive = daemon.exitCode === null

daemon.kill('SIGTERM')
await new Promise((resolve) => (daemon.exitCode !== null ? resolve() : daemon.on('exit', resolve)))
await sink.close()
const stackTraces = (daemonErr.match(/\n\s+at .+\(/g) ?? []).length
if (stackTraces > 0)
  tally.failures.push({ case: 'daemon log', problem: `${stackTraces} stack frame line(s) logged` })
rmSync(work, { recursive: true, force: true })

const statuses = [...tally.byStatus.entries()].sort(([a], [b]) => a - b)
console.log(
  `fuzz seed ${seed}: ${tally.sent} requests in ${seconds.toFixed(1)} s (${(tally.sent / seconds).toFixed(0)}/s)`,
)
console.log(`  by target: ${[...tally.byTarget].map(([target, n]) => `${target} ${n}`).join(', ')}`)
console.log(`  by status: ${statuses.map(([status, n]) => `${status} × ${n}`).join(', ')}`)
console.log(`  health checks during the run: ${tally.healthChecks}, daemon alive at the end: ${daemonAlive}`)
console.log(
  `  store rows changed outside the request log: ${changes.length}; forwarded upstream: ${sink.requests()}`,
)
if (tally.sent < Math.min(count, 1000)) {
  tally.failures.push({ case: 'fuzz', problem: `only ${tally.sent} requests sent before the time limit` })
}
if (tally.failures.length > 0 || !daemonAlive) {
  console.log(`FAILED: ${tally.failures.length} problem(s)`)
  for (const failure of tally.failures.slice(0, Number(process.env.FUZZ_SHOW ?? 40))) {
    console.log(
      `  - ${failure.case}${failure.status !== undefined ? ` → ${failure.status}` : ''}: ${failure.problem}`,
    )
  }
  process.exit(1)
}
console.log('ok: every answer a 4xx in its error shape, daemon healthy, store unchanged')
