#!/usr/bin/env node
// npm run bench: numbers, never assertions. Prints percentiles for the daemon's start-up (cold = empty
// data dir with migrations and owner creation; warm = existing data dir), its idle RSS, and API latency.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
const bin = path.join(root, 'dist/src/bin/hangar.js')
const RUNS = Number(process.env.BENCH_RUNS ?? 10)

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}
const summary = (values, unit) =>
  `p50 ${percentile(values, 50).toFixed(1)}${unit}  p90 ${percentile(values, 90).toFixed(1)}${unit}  max ${Math.max(...values).toFixed(1)}${unit}  (n=${values.length})`

function startDaemon(dataDir) {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const env = { ...process.env }
    for (const name of Object.keys(env)) if (name.startsWith('HANGAR_')) delete env[name]
    const child = spawn(process.execPath, [bin, 'up', '--port', '0', '--data-dir', dataDir], {
      env: { ...env, HANGAR_LOG_LEVEL: 'warn' },
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

console.log(`hangar bench (node ${process.versions.node}, ${os.cpus().length} cores)`)
console.log(`hangar up start-up, cold (new data dir):  ${summary(cold, ' ms')}`)
console.log(`hangar up start-up, warm (existing dir):  ${summary(warm, ' ms')}`)
console.log(`idle RSS after start-up:                  ${summary(rss, ' MB')}`)
console.log(`GET /api/health latency:                  ${summary(health, ' ms')}`)
console.log(`GET /api/tokens (authenticated) latency:  ${summary(authed, ' ms')}`)
