// What the bench scripts share: the percentile they all report, a throw-away PostgreSQL schema, and the
// machine's own speed and CPU time.
import { readFileSync } from 'node:fs'
import pg from 'pg'

/** /proc's CPU times are in clock ticks (USER_HZ), 100 a second on Linux. */
export const CLOCK_TICKS = 100

export const DATABASE_URL =
  process.env.HANGAR_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/** The Node flags in the environment variable `name` (space-separated): what a bench starts a target with. */
export function nodeFlagsFrom(name) {
  return (process.env[name] ?? '').split(' ').filter(Boolean)
}

export function percentile(values, p) {
  return percentileOfSorted(
    [...values].sort((a, b) => a - b),
    p,
  )
}

/** The `p`th percentile of values already sorted ascending (nearest rank), without a copy. */
export function percentileOfSorted(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

/** A new schema on DATABASE_URL: `url` selects it, `drop()` removes it with everything in it. */
export async function freshSchema(prefix = 'hangar_bench') {
  const schema = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`
  const client = new pg.Client({ connectionString: DATABASE_URL })
  await client.connect()
  await client.query(`CREATE SCHEMA ${schema}`)
  await client.end()
  const url = new URL(DATABASE_URL)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return {
    url: url.toString(),
    async drop() {
      const admin = new pg.Client({ connectionString: DATABASE_URL })
      await admin.connect()
      await admin.query(`DROP SCHEMA ${schema} CASCADE`)
      await admin.end()
    },
  }
}

/**
 * How steady this machine's speed is: one fixed piece of single-threaded CPU work (JSON parsing, no I/O),
 * timed `count` times in a row. On a dedicated machine the times stay within a few per cent of the
 * fastest; on a shared virtual machine they have been seen to swing 1.5–4× within seconds (CPU time as
 * well as wall time: the host's other tenants slow each instruction). Absolute figures of a bench taken
 * in such a spell (events/s, p99 latencies) swing with them; the proxy's side-by-side ratios do not.
 */
export function machineSpeed(count = 100) {
  const text = JSON.stringify(
    Array.from({ length: 200 }, (_, index) => ({ id: index, name: `item ${index}`, tags: ['a', 'b'] })),
  )
  const work = () => {
    let total = 0
    for (let round = 0; round < 300; round++) total += JSON.parse(text).length
    return total
  }
  for (let warmUp = 0; warmUp < 10; warmUp++) work()
  const times = []
  for (let index = 0; index < count; index++) {
    const started = performance.now()
    work()
    times.push(performance.now() - started)
  }
  return times
}

/** machineSpeed's times as one line: the fastest, the median and the slowest tenth, and their spread. */
export function formatMachineSpeed(times) {
  const fastest = Math.min(...times)
  const [p50, p90] = [percentile(times, 50), percentile(times, 90)]
  return `fixed CPU task ${fastest.toFixed(1)} ms at best, p50 ${p50.toFixed(1)} ms (${(p50 / fastest).toFixed(2)}×), p90 ${p90.toFixed(1)} ms (${(p90 / fastest).toFixed(2)}×)`
}

/** The machine's CPU time so far, all of it and idle (the first line of /proc/stat, in clock ticks). */
export function machineTicks() {
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
  // idle and iowait
  return { total: ticks.reduce((sum, tick) => sum + tick, 0), idle: ticks[3] + ticks[4] }
}

/** Since `before` (machineTicks()): the machine's busy CPU seconds, and all it had (seconds × cores). */
export function machineCpuSince(before) {
  const now = machineTicks()
  const total = (now.total - before.total) / CLOCK_TICKS
  return { busy: total - (now.idle - before.idle) / CLOCK_TICKS, total }
}
