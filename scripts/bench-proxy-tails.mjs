#!/usr/bin/env node
// Where the proxy's slowest requests lose their time: the 1 KB latency figures of the bench (a request to
// each target in turn, one at a time), each request cut into what the client saw and what the processes
// recorded (scripts/bench-proxy-trace.mjs, preloaded into every one of them):
//   arrival   — client sent → the target's server had the request (the target's thread busy, or asleep)
//   own       — the target's handling: from having the request to its answer out, less the mock's part
//   upstream  — the mock's own handling of the forwarded request (shared by every target)
//   leave     — the answer out → the client had all of it
// and, for the slowest 1 % of each target, which part grew most over its median, and what the target was
// doing then: a GC pause, the proxy's bookkeeping or a request-log write running as the request arrived.
//   npm run build && node scripts/bench-proxy-tails.mjs [--requests N] [role ...]
// Roles: minimal, hangar, hangar-pg (default: all three). Numbers only, no assertion.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import {
  clientHeaders,
  inTurns,
  requestBody,
  startChild,
  stop,
  targetNodeFlags,
  timedRequest,
} from './bench-proxy.mjs'
import { percentile } from './bench-support.mjs'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { requests: { type: 'string', default: '8000' } },
})
const ROLES = ['minimal', 'hangar', 'hangar-pg']
const roles = positionals.length > 0 ? positionals : ROLES
const count = Number(values.requests)
if (roles.some((role) => !ROLES.includes(role)) || !(Number.isInteger(count) && count >= 100)) {
  console.error(`roles: ${ROLES.join(', ')}; --requests takes a whole number of at least 100`)
  process.exit(2)
}

const here = path.dirname(new URL(import.meta.url).pathname)
const servers = path.join(here, 'bench-proxy-servers.mjs')
const traceDir = mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-tails-'))
const env = { ...process.env, BENCH_TRACE_DIR: traceDir }
const preload = ['--import', path.join(here, 'bench-proxy-trace.mjs')]
const start = (role, ...args) =>
  startChild(process.execPath, [...preload, ...targetNodeFlags(role), servers, role, ...args], { env })

const upstream = await start('upstream')
const started = []
/** Per target: [sent, took] of each measured request, in milliseconds of the monotonic clock. */
const sent = new Map()
try {
  for (const role of roles) started.push([role, await start(role, upstream.url)])
  const targets = [
    ['direct', { url: `${upstream.url}/v1/messages` }],
    ...started.map(([role, server]) => [role, { url: `${server.url}/v1/messages` }]),
  ]
  const body = requestBody(1024, false)
  const once = (measured) => async (target) => {
    const at = Number(process.hrtime.bigint()) / 1e6
    const took = (await timedRequest(target.url, clientHeaders(target), body))[1]
    if (measured) measured.push([at, took])
  }
  await inTurns(targets, 500, once())
  for (const [name] of targets) sent.set(name, [])
  await inTurns(
    targets.map(([name, target]) => [name, { ...target, measured: sent.get(name) }]),
    count,
    (target) => once(target.measured)(target),
  )
} finally {
  for (const [, server] of started) await stop(server.child)
  await stop(upstream.child)
}

/** A process's trace, each list by start (a request's 'finish' may come after the next request began). */
function trace(role) {
  const recorded = JSON.parse(readFileSync(path.join(traceDir, `${role}.json`), 'utf8'))
  for (const spans of Object.values(recorded)) spans.sort((a, b) => a[0] - b[0])
  return recorded
}
const traces = new Map(['upstream', ...roles].map((role) => [role, trace(role)]))
rmSync(traceDir, { recursive: true, force: true })
const mock = traces.get('upstream').requests

/** The first entry of `sorted` (by start) at or after `from`, by binary search. */
function firstFrom(sorted, from) {
  let low = 0
  let high = sorted.length
  while (low < high) {
    const middle = (low + high) >> 1
    if (sorted[middle][0] < from) low = middle + 1
    else high = middle
  }
  return low
}

/** Whether any span of `spans` (sorted by start) overlaps [from, to]. */
function overlaps(spans, from, to) {
  for (let index = Math.max(0, firstFrom(spans, from) - 4); index < spans.length; index++) {
    const [begin, end] = spans[index]
    if (begin > to) return false
    if (end >= from) return true
  }
  return false
}

/**
 * How far two processes' monotonic clocks were seen to disagree (kvm-clock, one vCPU to the other): a request
 * may seem to reach its server that much before it was sent.
 */
const CLOCKS_AGREE_MS = 0.05
const ms = (value) => value.toFixed(3)
const PARTS = ['arrival', 'own', 'upstream', 'leave']
const direct = sent.get('direct').map(([, took]) => took)
console.log(
  `direct: p50 ${ms(percentile(direct, 50))} ms, p99 ${ms(percentile(direct, 99))} ms (n=${direct.length})`,
)
for (const role of roles) {
  const { requests, gcs, bookkeeping, requestLog } = traces.get(role)
  const rows = []
  for (const [at, took] of sent.get(role)) {
    const served = requests[firstFrom(requests, at - CLOCKS_AGREE_MS)]
    if (!served || served[0] > at + took) continue
    const forwarded = mock[firstFrom(mock, served[0])]
    const upstreamMs = forwarded && forwarded[1] <= served[1] ? forwarded[1] - forwarded[0] : 0
    rows.push({
      at,
      took,
      reached: served[0],
      arrival: served[0] - at,
      own: served[1] - served[0] - upstreamMs,
      upstream: upstreamMs,
      leave: at + took - served[1],
    })
  }
  const medians = Object.fromEntries(
    PARTS.map((part) => [
      part,
      percentile(
        rows.map((row) => row[part]),
        50,
      ),
    ]),
  )
  const slowest = rows.filter(
    (row) =>
      row.took >=
      percentile(
        rows.map((one) => one.took),
        99,
      ),
  )
  const grew = Object.fromEntries(PARTS.map((part) => [part, 0]))
  const during = { gc: 0, bookkeeping: 0, requestLog: 0 }
  for (const row of slowest) {
    const excess = PARTS.map((part) => row[part] - medians[part])
    grew[PARTS[excess.indexOf(Math.max(...excess))]]++
    if (overlaps(gcs, row.at, row.at + row.took)) during.gc++
    if (overlaps(bookkeeping, row.at, row.reached)) during.bookkeeping++
    if (overlaps(requestLog, row.at, row.reached)) during.requestLog++
  }
  const arrivedDuring = (spans) => rows.filter((row) => overlaps(spans, row.at, row.reached)).length
  const parts = PARTS.map(
    (part) =>
      `${part} ${ms(medians[part])}/${ms(
        percentile(
          rows.map((row) => row[part]),
          99,
        ),
      )}`,
  )
  console.log(
    `${role.padEnd(9)} n=${rows.length}  total p50 ${ms(
      percentile(
        rows.map((row) => row.took),
        50,
      ),
    )} ` +
      `p99 ${ms(
        percentile(
          rows.map((row) => row.took),
          99,
        ),
      )} ms  (p50/p99 ms) ${parts.join('  ')}`,
  )
  console.log(
    `          slowest 1 % (${slowest.length}): grew most in ${PARTS.map((part) => `${part} ${grew[part]}`).join(', ')}; ` +
      `with a GC pause ${during.gc}, arrived during bookkeeping ${during.bookkeeping}, during a request-log write ${during.requestLog}`,
  )
  if (role !== 'minimal')
    console.log(
      `          all requests that arrived during bookkeeping: ${arrivedDuring(bookkeeping)}, during a request-log write: ` +
        `${arrivedDuring(requestLog)}; ${bookkeeping.length} drains, ${requestLog.length} batches, ${gcs.length} GC pauses`,
    )
}
