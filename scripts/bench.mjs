#!/usr/bin/env node
// npm run bench: numbers, never assertions. Prints percentiles for the daemon's start-up (cold = empty
// data dir with migrations and owner creation; warm = existing data dir), its idle RSS, and API latency.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { benchEvents, printEventBench } from './bench-events.mjs'
import { issue19Goals, printGoals } from './bench-goals.mjs'
import { benchProxy, printProxyBench } from './bench-proxy.mjs'
import { benchCluster, printClusterBench } from './bench-cluster.mjs'
import { benchWeb, printWebBench } from './bench-web.mjs'
import { benchWorkspaceSync, formatBytes } from './bench-workspace-sync.mjs'
import { formatMachineSpeed, machineSpeed, percentile } from './bench-support.mjs'
import { benchSandbox, printSandboxBench } from './bench-sandbox.mjs'

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
const bin = path.join(root, 'dist/bin/hangar.js')
const RUNS = Number(process.env.BENCH_RUNS ?? 10)

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

// The machine's own steadiness, before and after: the absolute figures below are only as steady as it is.
const speedBefore = machineSpeed()
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

const { createDefaultAdapterRegistry } = await import(
  path.join(root, 'dist/src/adapters/default-adapters.js')
)
const { loadDetection } = await import(path.join(root, 'dist/src/adapters/detection-cache.js'))
const registry = createDefaultAdapterRegistry()

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

// Parse + persist and stdout → SSE latency, on both engines.
const events = await benchEvents(root)

// Shipping a large generated repo to a loopback sshd: first run, then one-file changes each way.
const sync = await benchWorkspaceSync()

// The LLM proxy against a direct call, a minimal pass-through and (when it installs) Portkey.
const proxy = await benchProxy()
const web = await benchWeb(root)
const cluster = await benchCluster(root)
const sandbox = await benchSandbox()

const speedAfter = machineSpeed()
console.log(`hangar bench (node ${process.versions.node}, ${os.cpus().length} cores)`)
console.log(`this machine's speed before the bench: ${formatMachineSpeed(speedBefore)}`)
console.log(`                      after the bench: ${formatMachineSpeed(speedAfter)}`)
console.log(`hangar up start-up, cold (new data dir):  ${summary(cold, ' ms')}`)
console.log(`hangar up start-up, warm (existing dir):  ${summary(warm, ' ms')}`)
console.log(`idle RSS after start-up:                  ${summary(rss, ' MB')}`)
console.log(`GET /api/health latency:                  ${summary(health, ' ms')}`)
console.log(`GET /api/tokens (authenticated) latency:  ${summary(authed, ' ms')}`)
printEventBench(events)
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
printSandboxBench(sandbox)
printClusterBench(cluster)
printGoals(issue19Goals({ startup: { cold, rss }, events, proxy }))
