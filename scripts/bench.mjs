#!/usr/bin/env node
// npm run bench: numbers, never assertions. Prints percentiles for the daemon's start-up (cold = empty
// data dir with migrations and owner creation; warm = existing data dir), its idle RSS, and API latency.
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { benchProxy, printProxyBench } from './bench-proxy.mjs'
import { benchCluster, printClusterBench } from './bench-cluster.mjs'
import { benchWeb, printWebBench } from './bench-web.mjs'
import { benchWorkspaceSync, formatBytes } from './bench-workspace-sync.mjs'

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
const bin = path.join(root, 'dist/src/bin/hangar.js')
const RUNS = Number(process.env.BENCH_RUNS ?? 10)

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}
const summary = (values, unit) =>
  `p50 ${percentile(values, 50).toFixed(1)}${unit}  p90 ${percentile(values, 90).toFixed(1)}${unit}  max ${Math.max(...values).toFixed(1)}${unit}  (n=${values.length})`

function startDaemon(dataDir, options = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const env = { ...(options.env ?? process.env) }
    for (const name of Object.keys(env)) if (name.startsWith('HANGAR_')) delete env[name]
    const child = spawn(process.execPath, [bin, 'up', '--port', '0', '--data-dir', dataDir], {
      env: { ...env, HANGAR_LOG_LEVEL: 'warn' },
      cwd: options.cwd ?? process.cwd(),
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
      const match = /listening on (\S+)/.exec(out)
      if (match) resolve({ child, url: match[1], ms: performance.now() - started })
    })
    child.on('exit', (code) => reject(new Error(`daemon exited ${code}: ${out}`)))
  })
}

async function stop(child) {
  const exited = new Promise((resolve) => child.on('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024
}

async function latency(url, count, init) {
  const samples = []
  for (let index = 0; index < count; index++) {
    const started = performance.now()
    const response = await fetch(url, init)
    await response.arrayBuffer()
    samples.push(performance.now() - started)
  }
  return samples
}

const cold = []
const warm = []
const rss = []
const dirs = []
for (let run = 0; run < RUNS; run++) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-'))
  dirs.push(dataDir)
  const first = await startDaemon(dataDir)
  cold.push(first.ms)
  await stop(first.child)
  const second = await startDaemon(dataDir)
  warm.push(second.ms)
  await new Promise((resolve) => setTimeout(resolve, 1500))
  rss.push(rssMb(second.child.pid))
  await stop(second.child)
}

const dataDir = dirs[0]
const daemon = await startDaemon(dataDir)
const { token } = JSON.parse(readFileSync(path.join(dataDir, 'daemon.json'), 'utf8'))
await latency(`${daemon.url}/api/health`, 200)
const health = await latency(`${daemon.url}/api/health`, 2000)
const authed = await latency(`${daemon.url}/api/tokens`, 2000, {
  headers: { authorization: `Bearer ${token}` },
})
await stop(daemon.child)
for (const dir of dirs) rmSync(dir, { recursive: true, force: true })

// Events through parse + persist: a recorded real Claude stream, replayed many times into one run.
const { createDefaultAdapterRegistry } = await import(
  path.join(root, 'dist/src/adapters/default-adapters.js')
)
const { loadDetection } = await import(path.join(root, 'dist/src/adapters/detection.js'))
const { openStore } = await import(path.join(root, 'dist/src/store/store.js'))
const { createEventWriter } = await import(path.join(root, 'dist/src/runs/event-writer.js'))
const { createRedactor } = await import(path.join(root, 'dist/src/core/redact.js'))
const registry = createDefaultAdapterRegistry()
const streams = {}
for (const [adapterId, recording] of [
  ['claude-code', 'claude-write'],
  ['copilot', 'copilot-write'],
  ['gemini', 'gemini-write'],
]) {
  const lines = readFileSync(path.join(root, 'test/fixtures/recordings', `${recording}.jsonl`), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
  const replay = Array.from({ length: 300 }, () => lines).flat()
  const parseStarted = performance.now()
  let parsed = 0
  const parser = registry.require(adapterId).createParser({ cwd: '/workspace' })
  for (const line of replay) parsed += parser.line(line).length
  const parseMs = performance.now() - parseStarted

  const benchDir = mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-events-'))
  const store = await openStore({ dataDir: benchDir })
  const owner = await store.users.create({ name: 'bench', role: 'owner' })
  const runs = store.forUser(owner.id).runs
  const run = await runs.create({ agent: adapterId, adapter: adapterId, prompt: 'bench', cwd: '/workspace' })
  const writer = createEventWriter({ runs, runId: run.id, redactor: createRedactor() })
  const persistParser = registry.require(adapterId).createParser({ cwd: '/workspace' })
  const started = performance.now()
  let events = 0
  for (const [index, line] of replay.entries()) {
    for (const event of persistParser.line(line)) {
      writer.write(event)
      events++
    }
    // Let batches form the way a live stream does (lines arrive over time, not all at once).
    if (index % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 0))
  }
  await writer.flush()
  const persistMs = performance.now() - started
  await store.close()
  rmSync(benchDir, { recursive: true, force: true })
  streams[adapterId] = {
    lines: replay.length,
    parsed,
    parsePerSecond: parsed / (parseMs / 1000),
    events,
    persistPerSecond: events / (persistMs / 1000),
    stored: writer.lastSeq(),
  }
}

// Detection of the seven adapters with the pinned test CLIs on PATH: cold (probing) and warm (cache).
const clisDir = (await import('node:child_process'))
  .execFileSync(process.execPath, [path.join(root, 'scripts/install-test-clis.mjs')], { encoding: 'utf8' })
  .trim()
  .split('\n')
  .at(-1)
const detectionEnv = {
  ...process.env,
  PATH: [
    path.join(clisDir, 'main/node_modules/.bin'),
    path.join(clisDir, 'openclaw/node_modules/.bin'),
    process.env.PATH,
  ].join(':'),
  HANGAR_NODE24: path.join(clisDir, 'node24/bin/node'),
}
const detectionDir = mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-detect-'))
const detectCold = []
const detectWarm = []
for (let run = 0; run < 5; run++) {
  let started = performance.now()
  await loadDetection(registry.all(), {
    env: detectionEnv,
    home: os.homedir(),
    dataDir: detectionDir,
    refresh: true,
  })
  detectCold.push(performance.now() - started)
  started = performance.now()
  await loadDetection(registry.all(), { env: detectionEnv, home: os.homedir(), dataDir: detectionDir })
  detectWarm.push(performance.now() - started)
}
rmSync(detectionDir, { recursive: true, force: true })

// Latency from an agent CLI's stdout line to an SSE client, with 1 and 20 runs streaming at once: a fake
// CLI writes timestamped lines; the client reads them back over GET /api/runs/:id/events.
async function streamLatency(concurrentRuns) {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-sse-'))
  const project = path.join(scratch, 'project')
  mkdirSync(project)
  writeFileSync(
    path.join(project, 'hangar.yaml'),
    'agents:\n  fake: { adapter: cursor-agent, concurrency: 20 }\nserver: { maxConcurrentRuns: 20 }\n',
  )
  const env = {
    ...process.env,
    PATH: [path.join(root, 'test/fixtures/bin'), process.env.PATH].join(':'),
    FAKE_CURSOR_STREAM: '200:5',
  }
  for (const name of Object.keys(env)) if (name.startsWith('HANGAR_')) delete env[name]
  const daemon = await startDaemon(path.join(scratch, 'data'), { env, cwd: project })
  const { token } = JSON.parse(readFileSync(path.join(scratch, 'data', 'daemon.json'), 'utf8'))
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const latencies = []
  let events = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrentRuns }, async () => {
      const run = await (
        await fetch(`${daemon.url}/api/runs`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ agent: 'fake', prompt: 'NOTOOL' }),
        })
      ).json()
      const response = await fetch(`${daemon.url}/api/runs/${run.id}/events`, { headers })
      const decoder = new TextDecoder()
      let buffer = ''
      for await (const chunk of response.body) {
        const now = Date.now()
        buffer += decoder.decode(chunk, { stream: true })
        const lines = buffer.split('\n')
        buffer = lines.pop()
        for (const line of lines) {
          if (!line.startsWith('data: ')) continue
          events++
          for (const match of line.matchAll(/\[t=(\d+)\]/g)) latencies.push(now - Number(match[1]))
        }
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  await stop(daemon.child)
  rmSync(scratch, { recursive: true, force: true })
  return { latencies, eventsPerSecond: events / seconds }
}
const sseOne = await streamLatency(1)
const sseTwenty = await streamLatency(20)

// Shipping a large generated repo to a loopback sshd: first run, then one-file changes each way.
const sync = await benchWorkspaceSync()

// The LLM proxy against a direct call, a minimal pass-through and (when it installs) Portkey.
const proxy = await benchProxy()
const web = await benchWeb(root)
const cluster = await benchCluster(root)

console.log(`hangar bench (node ${process.versions.node}, ${os.cpus().length} cores)`)
console.log(`hangar up start-up, cold (new data dir):  ${summary(cold, ' ms')}`)
console.log(`hangar up start-up, warm (existing dir):  ${summary(warm, ' ms')}`)
console.log(`idle RSS after start-up:                  ${summary(rss, ' MB')}`)
console.log(`GET /api/health latency:                  ${summary(health, ' ms')}`)
console.log(`GET /api/tokens (authenticated) latency:  ${summary(authed, ' ms')}`)
for (const [adapterId, numbers] of Object.entries(streams)) {
  console.log(
    `${adapterId} stream (${numbers.lines} lines): parse ${Math.round(numbers.parsePerSecond).toLocaleString('en')} events/s; parse + persist ${Math.round(numbers.persistPerSecond).toLocaleString('en')} events/s (${numbers.events} events stored as ${numbers.stored} after coalescing)`,
  )
}
const pct = (values, p) => percentile(values, p).toFixed(1)
for (const [label, result] of [
  ['1 run', sseOne],
  ['20 runs', sseTwenty],
]) {
  console.log(
    `agent stdout → SSE client, ${label}: p50 ${pct(result.latencies, 50)} ms  p99 ${pct(result.latencies, 99)} ms  (n=${result.latencies.length}); ${Math.round(result.eventsPerSecond)} events/s delivered`,
  )
}
console.log(`agent detection, cold (7 adapters, probing): ${summary(detectCold, ' ms')}`)
console.log(`agent detection, warm (cached):              ${summary(detectWarm, ' ms')}`)
console.log(
  `workspace ship over ssh, repo ${sync.files} files / ${formatBytes(sync.treeBytes)} tree / ${formatBytes(sync.gitBytes)} .git:`,
)
console.log(
  `  first run: ${formatBytes(sync.first.bytes)} in ${Math.round(sync.first.ms)} ms (${Math.round((100 * sync.first.bytes) / sync.treeBytes)}% of the tree)`,
)
for (const [label, result] of [
  ['one-file change, uncommitted', sync.uncommitted],
  ['one-file change, committed', sync.committed],
  ['sync back of a one-file change', sync.back],
]) {
  console.log(
    `  ${label}: ${formatBytes(result.bytes)} in p50 ${Math.round(result.p50Ms)} ms (n=${sync.runs})`,
  )
}
printProxyBench(proxy)
printWebBench(web, summary)
printClusterBench(cluster)
