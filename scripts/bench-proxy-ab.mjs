#!/usr/bin/env node
// The proxy's throughput and CPU per request, side by side in turns, for telling whether a change helps on a
// shared machine: there the ratio to the minimal pass-through has swung 0.69–0.83× between runs minutes
// apart, while two builds of Hangar loaded in the same turns move together.
//   npm run build && node scripts/bench-proxy-ab.mjs [--against <dir>] [--rounds N] [--slice seconds] [--latency N] [role ...]
// Roles: minimal, hangar, hangar-pg (default: minimal hangar). --against <dir>: each Hangar role runs from
// that checkout's build as well (say a `git worktree` of the commit before, built), named `<role>@<dir>`.
// Prints req/s, CPU µs per request (and the kernel's part) and each target's ratio to the first, with
// the spread of the per-round ratios. --latency N: instead of load, N requests of 1 KB to each target one at a
// time, a request to each in turn (the direct call to the mock among them), and the latency each adds over
// the direct call, p50 and p99, with its ratio to the first target's: the bench's 1 KB figures, A/B.
// Numbers only, no assertion.
import path from 'node:path'
import { parseArgs } from 'node:util'
import {
  clientHeaders,
  inTurns,
  load,
  requestBody,
  startChild,
  stop,
  sumSlices,
  targetNodeFlags,
  timedRequest,
} from './bench-proxy.mjs'
import { percentile } from './bench-support.mjs'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    against: { type: 'string' },
    rounds: { type: 'string', default: '10' },
    slice: { type: 'string', default: '1.5' },
    latency: { type: 'string' },
  },
})
const ROLES = ['minimal', 'hangar', 'hangar-pg']
const roles = positionals.length > 0 ? positionals : ['minimal', 'hangar']
const unknown = roles.find((role) => !ROLES.includes(role))
if (unknown) {
  console.error(`unknown role "${unknown}": expected ${ROLES.join(', ')}`)
  process.exit(2)
}
const rounds = Number(values.rounds)
const slice = Number(values.slice)
const latencyCount = values.latency === undefined ? undefined : Number(values.latency)
if (
  !(Number.isInteger(rounds) && rounds >= 1 && slice > 0) ||
  (latencyCount !== undefined && !(Number.isInteger(latencyCount) && latencyCount >= 100))
) {
  console.error(
    '--rounds takes a whole number of at least 1, --slice a number of seconds above 0, --latency a whole number of requests of at least 100',
  )
  process.exit(2)
}

/** A target's slices: requests per second, and CPU µs per request (all, and the kernel's). */
function totals(slices) {
  const { done, cpu, system } = sumSlices(slices)
  const seconds = slices.reduce((total, one) => total + one.seconds, 0)
  return { perSecond: done / seconds, cpuUs: (cpu * 1e6) / done, systemUs: (system * 1e6) / done }
}

const here = path.dirname(new URL(import.meta.url).pathname)
const serversOf = (root) => path.join(root, 'scripts/bench-proxy-servers.mjs')
const upstream = await startChild(process.execPath, [serversOf(path.join(here, '..')), 'upstream'])
const started = []
try {
  const trees = [path.join(here, '..'), ...(values.against ? [path.resolve(values.against)] : [])]
  for (const role of roles)
    for (const [index, root] of trees.entries()) {
      if (index > 0 && role === 'minimal') continue
      const server = await startChild(process.execPath, [
        ...targetNodeFlags(role),
        serversOf(root),
        role,
        upstream.url,
      ])
      const name = index === 0 ? role : `${role}@${values.against}`
      started.push({ ...server, target: [name, { url: `${server.url}/v1/messages`, pid: server.child.pid }] })
    }
  const targets = started.map((server) => server.target)
  const body = requestBody(1024, false)
  if (latencyCount !== undefined) await compareLatencies(targets, body, latencyCount)
  else await compareLoads(targets, body)
} finally {
  for (const server of [...started, upstream]) await stop(server.child)
}

/**
 * `count` requests to each target and to the mock directly, one at a time, a request to each in turn, after a
 * warm-up; then the latency each target adds over the direct call (p50, p99) and its ratio to the first's.
 */
async function compareLatencies(targets, body, count) {
  const all = [['direct', { url: `${upstream.url}/v1/messages` }], ...targets]
  const once = async (target) => (await timedRequest(target.url, clientHeaders(target), body))[1]
  await inTurns(all, 500, once)
  const samples = await inTurns(all, count, once)
  const failed = [...samples].find(([, result]) => !Array.isArray(result))
  if (failed) throw new Error(`${failed[0]} failed: ${failed[1].error}`)
  const added = (name, p) => percentile(samples.get(name), p) - percentile(samples.get('direct'), p)
  const [first] = targets[0]
  console.log(
    `direct                       p50 ${percentile(samples.get('direct'), 50).toFixed(3)} ms  p99 ${percentile(samples.get('direct'), 99).toFixed(3)} ms  (n=${count})`,
  )
  for (const [name] of targets)
    console.log(
      `${name.padEnd(28)} added p50 +${added(name, 50).toFixed(3)} ms (${(added(name, 50) / added(first, 50)).toFixed(2)}× ${first})  ` +
        `p99 +${added(name, 99).toFixed(3)} ms (${(added(name, 99) / added(first, 99)).toFixed(2)}×)`,
    )
}

/** Each target under load in turns; req/s and CPU per request, with each one's ratio to the first's. */
async function compareLoads(targets, body) {
  // Warm (JIT, statements, feeds) before anything counts, as in the bench.
  await inTurns(targets, 1, (target) => load(target, body, 3, 16))
  const results = await inTurns(targets, rounds, async (target) => {
    const from = performance.now()
    const measured = await load(target, body, slice, 16)
    return { ...measured, seconds: (performance.now() - from) / 1000 }
  })
  const [first] = targets[0]
  const base = results.get(first)
  if (!Array.isArray(base))
    throw new Error(`${first} failed, so there is nothing to compare with: ${base.error}`)
  const baseTotals = totals(base)
  for (const [name] of targets) {
    const slices = results.get(name)
    if (!Array.isArray(slices)) {
      console.log(`${name.padEnd(28)} failed (${slices.error})`)
      continue
    }
    const { perSecond, cpuUs, systemUs } = totals(slices)
    const ratios = slices.map(
      (one, round) => one.done / one.seconds / (base[round].done / base[round].seconds),
    )
    console.log(
      `${name.padEnd(28)} ${Math.round(perSecond)} req/s  ${cpuUs.toFixed(1)} µs CPU/req (${systemUs.toFixed(1)} in the kernel)  ` +
        `÷ ${first}: throughput ${(perSecond / baseTotals.perSecond).toFixed(3)}× (rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×, median ${percentile(ratios, 50).toFixed(2)}×)  CPU ${(cpuUs / baseTotals.cpuUs).toFixed(3)}×`,
    )
  }
}
