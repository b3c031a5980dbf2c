// The LLM proxy's cost: latency it adds over a direct call to a mock model (p50/p99, 1 KB and 200 KB
// requests, and time to the first streamed byte), requests/s with 16 clients, and CPU per request — for
// Hangar's proxy (feeds warm), the minimal Node pass-through the design note sets as the floor, and
// Portkey's gateway 1.15.2 when it can be installed (into a cache outside the clone). Part of npm run bench,
// also alone: `npm run build && node scripts/bench-proxy.mjs`.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { createServer } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import {
  CLOCK_TICKS,
  machineCpuSince,
  machineTicks,
  nodeFlagsFrom,
  percentile,
  percentileOfSorted,
} from './bench-support.mjs'
import { seededRandom } from './seeded-random.mjs'

const here = path.dirname(new URL(import.meta.url).pathname)
const PORTKEY_DIR = path.join(os.homedir(), '.cache', 'hangar', 'portkey-1.15.2')
const PORTKEY_PACKAGES = ['@portkey-ai/gateway@1.15.2', 'hono@4.9.7', '@hono/node-server@1.13.5']

export function startChild(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'], ...options })
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
      const line = out.split('\n').find((entry) => entry.startsWith('{'))
      if (line) resolve({ child, url: JSON.parse(line).url })
    })
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${out}`)))
  })
}

/**
 * The Node flags a Hangar target starts with: BENCH_PROXY_NODE_FLAGS (e.g. "--cpu-prof
 * --cpu-prof-dir=/tmp/prof") profiles the proxy under load, as BENCH_DAEMON_NODE_FLAGS does the daemon.
 */
export function targetNodeFlags(role) {
  if (!role.startsWith('hangar')) return []
  return nodeFlagsFrom('BENCH_PROXY_NODE_FLAGS')
}

export function stop(child) {
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  return exited
}

/** CPU seconds `pid` has used, in user space and in the kernel (its system calls: sockets, files). */
export function cpuTimes(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return { user: Number(fields[11]) / CLOCK_TICKS, system: Number(fields[12]) / CLOCK_TICKS }
}

async function freePort() {
  const server = createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

function ensurePortkey() {
  const entry = path.join(PORTKEY_DIR, 'node_modules/@portkey-ai/gateway/build/start-server.js')
  if (existsSync(entry)) return entry
  try {
    mkdirSync(PORTKEY_DIR, { recursive: true })
    writeFileSync(path.join(PORTKEY_DIR, 'package.json'), '{"name":"portkey-bench","private":true}\n')
    execFileSync('npm', ['install', '--no-audit', '--no-fund', ...PORTKEY_PACKAGES], {
      cwd: PORTKEY_DIR,
      stdio: 'ignore',
      timeout: 300_000,
    })
    return existsSync(entry) ? entry : undefined
  } catch {
    return undefined
  }
}

async function startPortkey(upstreamUrl) {
  const entry = ensurePortkey()
  if (!entry) return undefined
  const port = await freePort()
  const child = spawn(process.execPath, [entry, '--headless', `--port=${port}`], {
    cwd: PORTKEY_DIR,
    stdio: 'ignore',
    env: { ...process.env, NODE_ENV: 'production' },
  })
  const url = `http://127.0.0.1:${port}`
  for (let attempt = 0; attempt < 100; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    if (
      await fetch(url)
        .then((response) => response.ok)
        .catch(() => false)
    ) {
      return {
        child,
        url: `${url}/v1/messages`,
        headers: { 'x-portkey-provider': 'anthropic', 'x-portkey-custom-host': `${upstreamUrl}/v1` },
      }
    }
  }
  child.kill('SIGKILL')
  return undefined
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })

/** One request; resolves with [ms to the first body byte, ms to the end]. */
export function timedRequest(url, headers, body, retried = false) {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const request = http.request(url, { method: 'POST', headers, agent }, (response) => {
      let first
      response.on('data', () => (first ??= performance.now() - started))
      response.on('end', () => {
        if (response.statusCode !== 200) reject(new Error(`${url} answered ${response.statusCode}`))
        else resolve([first ?? 0, performance.now() - started])
      })
    })
    request.once('error', (error) => {
      // A kept-alive connection the server closed as it idled (the targets take turns, so one idles for
      // seconds), reused before its close arrived: the client's race, not the server's failure. Sent again
      // once on a new connection, as Node's documentation advises (request.reusedSocket).
      if (!retried && request.reusedSocket && error.code === 'ECONNRESET')
        timedRequest(url, headers, body, true).then(resolve, reject)
      else reject(error)
    })
    request.end(body)
  })
}

export function requestBody(approxBytes, stream) {
  const history = []
  for (let turn = 0; history.length === 0 || JSON.stringify(history).length < approxBytes - 400; turn++) {
    history.push({
      role: 'user',
      content: `Turn ${turn}: please look at file ${turn}.ts and say what it does.`,
    })
    history.push({
      role: 'assistant',
      content: [{ type: 'text', text: `File ${turn}.ts exports a function. `.repeat(3) }],
    })
  }
  history.push({ role: 'user', content: 'And now?' })
  return Buffer.from(
    JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      stream,
      system: [{ type: 'text', text: 'You are a code reviewer.', cache_control: { type: 'ephemeral' } }],
      messages: history,
    }),
  )
}

export const clientHeaders = (target) => ({
  'content-type': 'application/json',
  'anthropic-version': '2023-06-01',
  'x-api-key': 'sk-client',
  ...target.headers,
})

async function latencies(target, body, count, pick) {
  const headers = clientHeaders(target)
  const samples = []
  for (let index = 0; index < count; index++)
    samples.push((await timedRequest(target.url, headers, body))[pick])
  return samples
}

/**
 * Requests done in `seconds` of `concurrency` clients; CPU seconds used by `target` (all of it, and in the
 * kernel) and by the whole machine meanwhile (the clients, the mock upstream, PostgreSQL: everything).
 */
export async function load(target, body, seconds, concurrency) {
  const headers = clientHeaders(target)
  const before = target.pid ? cpuTimes(target.pid) : undefined
  const machineBefore = machineTicks()
  const until = performance.now() + seconds * 1000
  let done = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        await timedRequest(target.url, headers, body)
        done++
      }
    }),
  )
  if (!before) return { done, cpu: undefined, system: undefined }
  const after = cpuTimes(target.pid)
  const machine = machineCpuSince(machineBefore)
  const system = after.system - before.system
  return {
    done,
    cpu: after.user - before.user + system,
    system,
    machine: machine.busy,
    machineTotal: machine.total,
  }
}

/** Slices of load() summed: requests, CPU seconds (the target's, its kernel's, the machine's) and capacity. */
export function sumSlices(slices) {
  let done = 0
  let cpu = 0
  let system = 0
  let machine = 0
  let machineTotal = 0
  for (const slice of slices) {
    done += slice.done
    cpu += slice.cpu
    system += slice.system
    machine += slice.machine
    machineTotal += slice.machineTotal
  }
  return { done, cpu, system, machine, machineTotal }
}

/** What the bench prints of a target's load slices, taken over `seconds` in all. */
function loadFigures(slices, seconds) {
  const { done, cpu, system, machine, machineTotal } = sumSlices(slices)
  return {
    perSecond: done / seconds,
    cpuMsPerRequest: (cpu * 1000) / done,
    // The whole machine's CPU per request (the clients, the upstream, PostgreSQL and the target), and how
    // busy it was: a target near 1 core while the machine has some idle is held by its own thread; a
    // machine near 100% busy holds every target alike, in proportion to this figure.
    machineUsPerRequest: (machine * 1e6) / done,
    machineBusy: machine / machineTotal,
    // Near 1, the process is held by its own CPU (one JavaScript thread): its throughput is then
    // 1 / CPU per request, and the throughput ratio the inverse of the CPU ratio.
    cores: cpu / seconds,
    // The kernel's share (system calls: the sockets, the store's files).
    systemShare: system / cpu,
    // Requests of each round: the rounds' ratios show how far a shared machine moved them.
    rounds: slices.map((slice) => slice.done),
  }
}

/**
 * Runs `measure(target, slice)` for every target in turns — a slice each, `rounds` times — so that
 * whatever else the machine does in the meantime falls on every target alike, and the ratios between
 * them hold. Each round takes the targets in a new order (shuffled, from a fixed seed), so every target
 * follows every other alike: a request's latency depends on which process ran just before it (two builds of
 * the same code, one always right after the minimal pass-through and one always after the other, differed by
 * 3-45 µs of added 1 KB p50, always in favour of the first). A target that fails a measurement is reported
 * (Portkey 1.15.2 answers streams with 500 on Node 20), not fatal, and left out of the later rounds.
 */
export async function inTurns(targets, rounds, measure) {
  const slices = new Map(targets.map(([name]) => [name, []]))
  const failed = new Map()
  const random = seededRandom(19)
  const order = [...targets]
  for (let round = 0; round < rounds; round++) {
    // Fisher-Yates.
    for (let index = order.length - 1; index > 0; index--) {
      const other = Math.floor(random() * (index + 1))
      ;[order[index], order[other]] = [order[other], order[index]]
    }
    for (const [name, target] of order) {
      if (failed.has(name)) continue
      try {
        slices.get(name).push(await measure(target, round))
      } catch (error) {
        failed.set(name, { error: error.message })
      }
    }
  }
  return new Map(targets.map(([name]) => [name, failed.get(name) ?? slices.get(name)]))
}

// 2,000 samples: a p99 of sub-millisecond figures rests on its 20 slowest, not on 4 (they swung run to run).
// The 1 KB figures, whose p99 is a goal, take 8,000 (80 slowest): on a shared machine a few requests in a
// hundred meet a stall of 1-5 ms that falls on every target alike, and with 2,000 samples the p99 sat on the
// edge of those stalls, its ratio to minimal's swinging 0.8-3.0× between stretches of one run.
export async function benchProxy({ samples = 2000, smallSamples = 8000, seconds = 10 } = {}) {
  const servers = path.join(here, 'bench-proxy-servers.mjs')
  const upstream = await startChild(process.execPath, [servers, 'upstream'])
  const startTarget = (role) =>
    startChild(process.execPath, [...targetNodeFlags(role), servers, role, upstream.url])
  const minimal = await startTarget('minimal')
  const hangar = await startTarget('hangar')
  const hangarPg = await startTarget('hangar-pg')
  const portkey = await startPortkey(upstream.url)
  const targets = [
    ['direct', { url: `${upstream.url}/v1/messages` }],
    ['minimal', { url: `${minimal.url}/v1/messages`, pid: minimal.child.pid }],
    ['hangar', { url: `${hangar.url}/v1/messages`, pid: hangar.child.pid }],
    ['hangar-pg', { url: `${hangarPg.url}/v1/messages`, pid: hangarPg.child.pid }],
    ...(portkey ? [['portkey', { ...portkey, pid: portkey.child.pid }]] : []),
  ]
  try {
    const small = requestBody(1024, false)
    const large = requestBody(200 * 1024, false)
    const streamed = requestBody(1024, true)
    const rounds = 5
    // A daemon proxies for hours: each figure is taken once the code is warm (compiled by the JIT), as
    // the event figures are. Every target gets the same warm-up.
    await inTurns(targets, 1, async (target) => {
      await latencies(target, small, 200, 1)
      if (target.pid) await load(target, small, seconds / 2, 16)
    })
    // Latencies a request to each target in turn (a slice of one): a slow spell of a shared machine (another
    // process, the hypervisor taking the CPU) falls on every target alike, and the tails compare.
    const latenciesInTurns = async (turns, smallCount) => {
      const once = (body, pick) => async (target) =>
        (await timedRequest(target.url, clientHeaders(target), body))[pick]
      const runs = {
        small: await inTurns(turns, smallCount, once(small, 1)),
        large: await inTurns(turns, Math.round(samples / 5), once(large, 1)),
        firstByte: await inTurns(turns, samples, once(streamed, 0)),
      }
      /** One target's samples of each kind. */
      return (name) => ({
        small: runs.small.get(name),
        large: runs.large.get(name),
        firstByte: runs.firstByte.get(name),
      })
    }
    // Portkey takes its turns apart, with its own direct calls: the work it does after each answer (about
    // 1 ms of CPU a request) ran into the next target's request. Among the others' turns it took minimal's
    // 1 KB p99 from +0.6-0.9 ms to +1.8 ms, and Hangar's p99 ratio to minimal swung 0.5-1.9× between
    // stretches of 1,600 turns of one run.
    const isPortkey = ([name]) => name === 'portkey'
    const compared = await latenciesInTurns(
      targets.filter((target) => !isPortkey(target)),
      smallSamples,
    )
    const reference = portkey
      ? await latenciesInTurns([targets[0], targets.find(isPortkey)], samples)
      : undefined
    const loaded = targets.filter(([, target]) => target.pid)
    const loadRuns = await inTurns(loaded, rounds, (target) => load(target, small, seconds / rounds, 16))
    const results = {}
    for (const [name] of targets) {
      const slices = loadRuns.get(name)
      results[name] = {
        ...(name === 'portkey'
          ? // The direct calls its added latency is taken over: those of its own turns.
            { ...reference(name), direct: reference('direct') }
          : compared(name)),
        load: !slices ? undefined : Array.isArray(slices) ? loadFigures(slices, seconds) : slices,
      }
    }
    return { results, portkey: Boolean(portkey), bytes: { small: small.length, large: large.length } }
  } finally {
    // Stopped even when a measurement throws, so no server outlives the bench.
    for (const server of [upstream, minimal, hangar, hangarPg]) await stop(server.child)
    if (portkey) await stop(portkey.child)
  }
}

/** What `name` adds over the direct call at percentile `p`, in ms (`key`: small, large or firstByte). */
export function addedMs(results, name, key, p) {
  const direct = (results[name].direct ?? results.direct)[key]
  return percentile(results[name][key], p) - percentile(direct, p)
}

/**
 * How far a target's 1 KB p99 ratio to minimal moves when this run's turns are drawn again: the middle 95 %
 * of `iterations` resamplings, each as many turns as the run took, drawn at random with repeats, a turn's
 * samples together (the direct call's, minimal's and the target's). The p99 rests on the slowest 1 % of the
 * samples, where a shared machine's stalls fall, and the ratio of two such tails moves far between runs:
 * this says how far within one, beside the figure the goal is judged on.
 */
export function small99Interval(results, name, { iterations = 200, seed = 99 } = {}) {
  const samples = [results.direct.small, results.minimal.small, results[name].small]
  const turns = Math.min(...samples.map((kind) => kind.length))
  const random = seededRandom(seed)
  const drawn = samples.map(() => new Float64Array(turns))
  const ratios = []
  for (let iteration = 0; iteration < iterations; iteration++) {
    for (let index = 0; index < turns; index++) {
      const turn = Math.floor(random() * turns)
      for (let kind = 0; kind < samples.length; kind++) drawn[kind][index] = samples[kind][turn]
    }
    const [direct, minimal, target] = drawn.map((kind) => percentileOfSorted(kind.sort(), 99))
    ratios.push((target - direct) / (minimal - direct))
  }
  return [percentile(ratios, 2.5), percentile(ratios, 97.5)]
}

/** A Hangar target's figures as ratios to the minimal pass-through measured in the same run (issue 19's goals). */
export function proxyRatios(results, name) {
  const ratio = (key, p) => addedMs(results, name, key, p) / addedMs(results, 'minimal', key, p)
  const { load } = results[name]
  const minimal = results.minimal.load
  return {
    small50: ratio('small', 50),
    small99: ratio('small', 99),
    /** [low, high]: the middle 95 % of small99 over resamplings of the run's turns. */
    small99Range: small99Interval(results, name),
    large50: ratio('large', 50),
    firstByte50: ratio('firstByte', 50),
    throughput: load.perSecond / minimal.perSecond,
    perRound: load.rounds.map((done, round) => done / minimal.rounds[round]),
    cpu: load.cpuMsPerRequest / minimal.cpuMsPerRequest,
    machineCpu: load.machineUsPerRequest / minimal.machineUsPerRequest,
  }
}

export function printProxyBench({ results, portkey, bytes }) {
  const failed = (name, key) => results[name][key]?.error
  const ms = (value) => `${value.toFixed(2)} ms`
  const latency = (name, key, label) =>
    failed(name, key)
      ? `${label} failed (${failed(name, key)})`
      : `${label} p50 +${ms(addedMs(results, name, key, 50))} p99 +${ms(addedMs(results, name, key, 99))}`
  console.log(
    `LLM proxy, added over a direct call to the mock (${bytes.small} B and ${Math.round(bytes.large / 1024)} KB requests; 16 clients for load):`,
  )
  for (const name of ['minimal', 'hangar', 'hangar-pg', 'portkey']) {
    if (!results[name]) continue
    const { load } = results[name]
    console.log(
      `  ${name.padEnd(8)} ${latency(name, 'small', '1 KB')}  ${latency(name, 'large', '200 KB')}  ` +
        `${latency(name, 'firstByte', 'first byte')}  ` +
        (load.error
          ? `load failed (${load.error})`
          : `${Math.round(load.perSecond)} req/s  ${load.cpuMsPerRequest.toFixed(2)} ms CPU/req (${load.cores.toFixed(2)} cores, ${Math.round(load.systemShare * 100)}% in the kernel); machine ${Math.round(load.machineUsPerRequest)} µs CPU/req, ${Math.round(load.machineBusy * 100)}% busy`),
    )
  }
  // Goals (issue 19): throughput ≥ 0.8×, CPU ≤ 1.5×, added p50 and p99 at 1 KB ≤ 1.2× (bench-goals.mjs).
  for (const name of ['hangar', 'hangar-pg']) {
    const r = proxyRatios(results, name)
    const [low, high] = r.small99Range
    console.log(
      `  ${name} ÷ minimal: 1 KB p50 ${r.small50.toFixed(2)}× p99 ${r.small99.toFixed(2)}× (${low.toFixed(2)}–${high.toFixed(2)}× over resampled turns)  200 KB ${r.large50.toFixed(2)}×  first byte ${r.firstByte50.toFixed(2)}×  ` +
        `throughput ${r.throughput.toFixed(2)}× (rounds ${Math.min(...r.perRound).toFixed(2)}–${Math.max(...r.perRound).toFixed(2)}×)  CPU ${r.cpu.toFixed(2)}×  ` +
        `machine CPU ${r.machineCpu.toFixed(2)}×`,
    )
  }
  if (!portkey)
    console.log('  portkey: not installed (npm install into ~/.cache/hangar/portkey-1.15.2 failed)')
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) printProxyBench(await benchProxy())
