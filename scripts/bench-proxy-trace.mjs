// Preloaded (--import) into each process scripts/bench-proxy-tails.mjs starts: records when each proxied
// request reached this process and when its answer went out, each GC pause, and in Hangar the proxy's work
// between requests (src/runs/proxy-timing.ts). Written as JSON to $BENCH_TRACE_DIR/<role>.json when the
// process stops. Times are milliseconds of the monotonic clock, to match the client's.
import diagnostics from 'node:diagnostics_channel'
import { writeFileSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { PerformanceObserver } from 'node:perf_hooks'

const role = process.argv.find((arg) => ['upstream', 'minimal', 'hangar', 'hangar-pg'].includes(arg))
// On CLOCK_MONOTONIC (hrtime), which every process reads alike; performance.timeOrigin was seen to differ
// by tenths of a millisecond from one process to the next. performance.now() is the same clock, shifted.
const shift = Number(process.hrtime.bigint()) / 1e6 - performance.now()
const at = (ms = performance.now()) => ms + shift
/** [reached, answered] per model request (the mock's feed fetches are left out). */
const requests = []
const open = new WeakMap()
const gcs = []
const bookkeeping = []
const requestLog = []

diagnostics.subscribe('http.server.request.start', ({ request }) => {
  if (request.url?.includes('/v1/messages')) open.set(request, at())
})
// Answered when its answer's first write reached the kernel (a 1 KB answer goes whole in that one write):
// 'finish' comes only once the event loop has gone round, after whatever the process does next, and the
// end() of a body written whole may come later still, with nothing left to send.
const handedOver = new WeakMap()
for (const method of ['_writeGeneric', '_writev']) {
  const write = net.Socket.prototype[method]
  net.Socket.prototype[method] = function (...args) {
    const result = write.apply(this, args)
    const request = this._httpMessage?.req
    if (request && open.has(request) && !handedOver.has(request)) handedOver.set(request, at())
    return result
  }
}
diagnostics.subscribe('http.server.response.finish', ({ request }) => {
  const reached = open.get(request)
  if (reached !== undefined) requests.push([reached, handedOver.get(request) ?? at()])
})
const work = (into) => (message) => into.push([at(message.startedAt), at(message.endedAt), message.items])
diagnostics.subscribe('hangar:proxy-bookkeeping', work(bookkeeping))
diagnostics.subscribe('hangar:proxy-request-log-batch', work(requestLog))
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcs.push([at(entry.startTime), at(entry.startTime + entry.duration)])
}).observe({ entryTypes: ['gc'] })

function write() {
  const file = path.join(process.env.BENCH_TRACE_DIR, `${role}.json`)
  writeFileSync(file, JSON.stringify({ requests, gcs, bookkeeping, requestLog }))
}
process.once('exit', write)
// The minimal pass-through and the mock have no SIGTERM handler of their own: without one, no 'exit' event.
process.once('SIGTERM', () => {
  if (process.listenerCount('SIGTERM') === 0) process.exit(0)
})
