#!/usr/bin/env node
// The event pipeline in npm run bench (also alone: `npm run build && node scripts/bench-events.mjs
// [--stream] [--sqlite|--postgres] [--stages]`).
// Numbers only, no assertion:
// - parse + persist (once warm: after three warm-up passes, the median of three): recorded real agent
//   streams replayed through each adapter's parser and the one event writer into the store, on SQLite and
//   on PostgreSQL — one run at a time, and 20 runs writing at once;
// - agent stdout line → SSE client: a fake CLI prints timestamped lines, clients read them back over
//   GET /api/runs/:id/events, with 1 and 20 runs streaming at once, on both engines, from a daemon warmed
//   by a first pass of 20 runs; with the daemon's CPU per event and how busy the machine was; with --stages, also
//   the time of each stage: agent → daemon (the pipe, and the daemon's loop getting to the line), to the
//   store (parse, and the wait for the run's previous batch), store (its commit), to the socket (bus and
//   SSE), socket → client;
// - the store's own floor: one commit at a time with nothing else running (bench-store-floor.mjs).
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { pathToFileURL } from 'node:url'
import { STAMP } from './bench-event-stages.mjs'
import { formatStoreFloor, storeFloor } from './bench-store-floor.mjs'
import { cpuTimes } from './bench-proxy.mjs'
import {
  DATABASE_URL,
  formatMachineSpeed,
  freshSchema,
  machineSpeed,
  machineCpuSince,
  machineTicks,
  nodeFlagsFrom,
  percentile,
} from './bench-support.mjs'

const REPLAYS = 2000
const CONCURRENT_RUNS = 20
const WARM_UP_PASSES = 3
const MEASURED_PASSES = 3
const ENGINES = ['sqlite', 'postgres']

/** An empty store on `engine`, and how to throw it away. */
async function openBenchStore(root, engine) {
  const { openStore } = await import(path.join(root, 'dist/src/store/store.js'))
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-events-'))
  const schema = engine === 'postgres' ? await freshSchema('hangar_bench_events') : undefined
  const store = await openStore({ dataDir, ...(schema && { url: schema.url }) })
  return {
    store,
    async dispose() {
      await store.close()
      await schema?.drop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

function loadRecording(root, recording) {
  return readFileSync(path.join(root, 'test/fixtures/recordings', `${recording}.jsonl`), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
}

/**
 * Parses `lines` and writes the events of `runCount` runs at once, yielding to the event loop every 50
 * lines so that batches form the way they do on a live stream (lines arrive over time, not all at once).
 */
async function parseAndPersist(modules, store, adapterId, lines, runCount, label = '') {
  const { registry, createEventWriter, createRedactor } = modules
  const owner = await store.users.create({ name: `bench-${adapterId}-${runCount}${label}`, role: 'owner' })
  const runs = store.forUser(owner.id).runs
  const redactor = createRedactor()
  const writers = []
  for (let index = 0; index < runCount; index++) {
    const run = await runs.create({
      agent: adapterId,
      adapter: adapterId,
      prompt: 'bench',
      cwd: '/workspace',
    })
    writers.push({
      writer: createEventWriter({ runs, runId: run.id, redactor }),
      parser: registry.require(adapterId).createParser({ cwd: '/workspace' }),
    })
  }
  // Each run gets its share of the replays, whole, interleaved line by line with the other runs.
  const perRun = Math.ceil(lines.length / runCount)
  const started = performance.now()
  const cpuBefore = process.cpuUsage()
  let events = 0
  for (let index = 0; index < perRun; index++) {
    for (const { writer, parser } of writers) {
      for (const event of parser.line(lines[index])) {
        writer.write(event)
        events++
      }
    }
    // A turn of the event loop per chunk of stdout, as a pipe's data events give (setTimeout would add its
    // 1 ms floor per chunk and measure the timer, not the pipeline).
    if (index % Math.max(1, Math.round(50 / runCount)) === 0) await nextTurn()
  }
  await Promise.all(writers.map(({ writer }) => writer.flush()))
  const ms = performance.now() - started
  const cpu = process.cpuUsage(cpuBefore)
  const stored = writers.reduce((sum, { writer }) => sum + writer.lastSeq(), 0)
  // Per second of this process's CPU too: on a shared machine the wall clock also counts other processes.
  return {
    events,
    stored,
    perSecond: events / (ms / 1000),
    perCpuSecond: events / ((cpu.user + cpu.system) / 1e6),
  }
}

export async function benchPersist(root, engine) {
  const { createDefaultAdapterRegistry } = await import(
    path.join(root, 'dist/src/adapters/default-adapters.js')
  )
  const { createEventWriter } = await import(path.join(root, 'dist/src/runs/event-writer.js'))
  const { createRedactor } = await import(path.join(root, 'dist/src/core/redact.js'))
  const modules = { registry: createDefaultAdapterRegistry(), createEventWriter, createRedactor }
  const results = []
  for (const [adapterId, recording] of [
    ['claude-code', 'claude-write'],
    ['copilot', 'copilot-write'],
    ['gemini', 'gemini-write'],
  ]) {
    const lines = Array.from({ length: REPLAYS }, () => loadRecording(root, recording)).flat()
    // A daemon streams for hours: each figure is taken once the code is warm (compiled by the JIT,
    // statements prepared), after a first pass that is thrown away.
    for (let pass = 0; pass < WARM_UP_PASSES; pass++) {
      const warmUp = modules.registry.require(adapterId).createParser({ cwd: '/workspace' })
      for (const line of lines) warmUp.line(line)
    }
    const parser = modules.registry.require(adapterId).createParser({ cwd: '/workspace' })
    const parseStarted = performance.now()
    const parseCpu = process.cpuUsage()
    let parsed = 0
    for (const line of lines) parsed += parser.line(line).length
    const parsePerSecond = parsed / ((performance.now() - parseStarted) / 1000)
    const { user, system } = process.cpuUsage(parseCpu)
    const parsePerCpuSecond = parsed / ((user + system) / 1e6)
    const { store, dispose } = await openBenchStore(root, engine)
    try {
      // Warm means more than one pass: the first passes ran at 60-70% of the rate the later ones settle at
      // (the JIT's later tiers, a WAL that stops growing and is reused), a daemon's state within its first
      // minute of streaming. Then each figure is the median of three passes.
      for (let pass = 0; pass < WARM_UP_PASSES; pass++) {
        await parseAndPersist(modules, store, adapterId, lines, 1, `-warm-up-${pass}`)
        await parseAndPersist(modules, store, adapterId, lines, CONCURRENT_RUNS, `-warm-up-${pass}`)
      }
      const median = async (runCount) => {
        const passes = []
        for (let pass = 0; pass < MEASURED_PASSES; pass++)
          passes.push(await parseAndPersist(modules, store, adapterId, lines, runCount, `-${pass}`))
        return passes.sort((a, b) => a.perSecond - b.perSecond)[Math.floor(passes.length / 2)]
      }
      const one = await median(1)
      const many = await median(CONCURRENT_RUNS)
      results.push({ adapterId, lines: lines.length, parsePerSecond, parsePerCpuSecond, one, many })
    } finally {
      await dispose()
    }
  }
  return results
}

function startDaemon(bin, dataDir, env, cwd, extraFlags = []) {
  return new Promise((resolve, reject) => {
    // BENCH_DAEMON_NODE_FLAGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"): profile the daemon under load.
    const flags = [...nodeFlagsFrom('BENCH_DAEMON_NODE_FLAGS'), ...extraFlags]
    const child = spawn(process.execPath, [...flags, bin, 'up', '--port', '0', '--data-dir', dataDir], {
      env: { ...env, HANGAR_LOG_LEVEL: 'warn' },
      cwd,
      stdio: ['ignore', 'pipe', 'inherit'],
      // A session (and so a scheduling group) of its own, as a daemon started from a terminal or by a
      // service: the bench's own SSE clients, like a browser, do not share its CPU weight.
      detached: true,
    })
    // Out of the bench's process group, so a Ctrl-C of the bench no longer reaches it: stopped on any exit.
    const stopOnExit = () => child.kill('SIGTERM')
    process.once('exit', stopOnExit)
    child.once('exit', () => process.off('exit', stopOnExit))
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
      const match = /listening on (\S+)/.exec(out)
      if (match) resolve({ child, url: match[1] })
    })
    child.on('exit', (code) => reject(new Error(`daemon exited ${code}: ${out}`)))
  })
}

async function stopDaemon(child) {
  const exited = new Promise((resolve) => child.on('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

/**
 * agent stdout → SSE client on one daemon: a pass of CONCURRENT_RUNS runs to warm it, then 1 run, then
 * CONCURRENT_RUNS runs at once, measured. A daemon streams for hours: as the parse + persist and proxy
 * figures are, these are taken once its code is warm. A daemon just started runs its event path in V8's
 * interpreter and baseline tiers while it compiles it, at several times the CPU per event.
 */
async function streamLatency(root, engine, { stages = false } = {}) {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-sse-'))
  const stagesFile = path.join(scratch, 'stages.json')
  const project = path.join(scratch, 'project')
  mkdirSync(project)
  writeFileSync(
    path.join(project, 'hangar.yaml'),
    'agents:\n  fake: { adapter: cursor-agent, concurrency: 20 }\nserver: { maxConcurrentRuns: 20 }\n',
  )
  const env = {
    ...process.env,
    PATH: [path.join(root, 'test/fixtures/bin'), process.env.PATH].join(':'),
    FAKE_CURSOR_STREAM: '400:5',
  }
  for (const name of Object.keys(env)) if (name.startsWith('HANGAR_')) delete env[name]
  const schema = engine === 'postgres' ? await freshSchema('hangar_bench_events') : undefined
  if (schema) env.HANGAR_DATABASE_URL = schema.url
  const bin = path.join(root, 'dist/bin/hangar.js')
  // --stages: the daemon also times each line at every stage of its pipeline (bench-event-stages.mjs).
  if (stages) env.BENCH_EVENT_STAGES_FILE = stagesFile
  const preload = stages
    ? [`--import=${pathToFileURL(path.join(root, 'scripts/bench-event-stages.mjs'))}`]
    : []
  const daemon = await startDaemon(bin, path.join(scratch, 'data'), env, project, preload)
  const passes = {}
  try {
    const { token } = JSON.parse(readFileSync(path.join(scratch, 'data', 'daemon.json'), 'utf8'))
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
    // A daemon that has just started detects its agents (a --version probe each) right after it listens:
    // start-up, not streaming, so the runs start once it is done.
    await (await fetch(`${daemon.url}/api/agents`, { headers })).arrayBuffer()
    await streamPass(daemon, headers, CONCURRENT_RUNS)
    passes.one = await streamPass(daemon, headers, 1)
    passes.many = await streamPass(daemon, headers, CONCURRENT_RUNS)
  } finally {
    await stopDaemon(daemon.child)
    // Written as the daemon exits.
    if (stages && passes.many) {
      const timed = JSON.parse(readFileSync(stagesFile, 'utf8'))
      for (const pass of [passes.one, passes.many]) pass.stages = stageDurations(timed, pass.received)
    }
    await schema?.drop()
    rmSync(scratch, { recursive: true, force: true })
  }
  return passes
}

/** `concurrentRuns` runs of the fake agent started at once, each read back over SSE as it streams. */
async function streamPass(daemon, headers, concurrentRuns) {
  // The client's receipt of each stamped line, by its stamp (for the last stage, socket → client).
  const received = new Map()
  // [received at, latency] of every timestamped line, and each run's first and last such line.
  const samples = []
  const spans = []
  let events = 0
  const started = performance.now()
  // What the daemon spent per event, and how busy the whole machine was meanwhile: a p99 taken on
  // saturated cores is the scheduler's as much as the daemon's, while CPU per event is the daemon's alone.
  const daemonBefore = cpuTimes(daemon.child.pid)
  const machineBefore = machineTicks()
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
      const span = { first: Infinity, last: 0 }
      spans.push(span)
      let buffer = ''
      for await (const chunk of response.body) {
        // The agent's clock (fake-cursor-agent.mjs): the wall clock to the microsecond.
        const now = performance.timeOrigin + performance.now()
        buffer += decoder.decode(chunk, { stream: true })
        const lines = buffer.split('\n')
        buffer = lines.pop()
        for (const line of lines) {
          if (!line.startsWith('data: ')) continue
          events++
          for (const match of line.matchAll(STAMP)) {
            samples.push([now, now - Number(match[1])])
            received.set(Number(match[1]), now)
            span.first = Math.min(span.first, now)
            span.last = now
          }
        }
      }
    }),
  )
  const daemonAfter = cpuTimes(daemon.child.pid)
  const machine = machineCpuSince(machineBefore)
  const daemonSeconds = daemonAfter.user + daemonAfter.system - daemonBefore.user - daemonBefore.system
  // While every run streams at once: the CPU of starting 20 agent processes (spawn blocks the daemon's
  // event loop) is outside the window, and shows in the figure over all lines.
  const from = Math.max(...spans.map((span) => span.first))
  const until = Math.min(...spans.map((span) => span.last))
  return {
    received,
    latencies: samples.map(([, latency]) => latency),
    allStreaming: samples.filter(([at]) => at >= from && at <= until).map(([, latency]) => latency),
    eventsPerSecond: events / ((performance.now() - started) / 1000),
    daemonCpuUsPerEvent: (daemonSeconds * 1e6) / events,
    machineBusy: machine.busy / machine.total,
  }
}

/** Each stage's durations (ms) over the lines timed in the daemon and seen by the client. */
function stageDurations(timed, received) {
  const stages = {
    'agent → daemon': [],
    'to the store': [],
    store: [],
    'to the socket': [],
    'socket → client': [],
    // The whole way but the client's own share: what a client on other cores would see, less its network.
    'stdout → socket, all': [],
  }
  for (const [stamp, read, storing, stored, sent] of timed) {
    const client = received.get(stamp)
    if (client === undefined) continue
    stages['agent → daemon'].push(read - stamp)
    stages['to the store'].push(storing - read)
    stages.store.push(stored - storing)
    stages['to the socket'].push(sent - stored)
    stages['socket → client'].push(client - sent)
    stages['stdout → socket, all'].push(sent - stamp)
  }
  return stages
}

export async function benchEvents(root, { streamOnly = false, only, stages = false } = {}) {
  const engines = {}
  for (const engine of ENGINES.filter((engine) => !only || engine === only)) {
    try {
      engines[engine] = {
        persist: streamOnly ? [] : await benchPersist(root, engine),
        floor: await storeFloor(root, engine),
        stream: await streamLatency(root, engine, { stages }),
      }
    } catch (error) {
      if (engine !== 'postgres' || !['ECONNREFUSED', 'ENOTFOUND'].includes(error.code)) throw error
      engines[engine] = { skipped: `no PostgreSQL at ${DATABASE_URL} (${error.code})` }
    }
  }
  return engines
}

export function printEventBench(engines) {
  const rate = (value) => Math.round(value).toLocaleString('en')
  const pct = (values, p) => percentile(values, p).toFixed(1)
  const load = os.loadavg().map((value) => value.toFixed(2))
  console.log(
    `event pipeline (parse + persist through the event writer; stdout → SSE); load average ${load.join(' ')} on ${os.availableParallelism()} cores, events/s by wall clock [and per CPU-second of the bench process]:`,
  )
  for (const [engine, result] of Object.entries(engines)) {
    if (result.skipped) {
      console.log(`  ${engine}: skipped, ${result.skipped}`)
      continue
    }
    for (const { adapterId, lines, parsePerSecond, parsePerCpuSecond, one, many } of result.persist) {
      console.log(
        `  ${engine}, ${adapterId} stream (${lines} lines): parse ${rate(parsePerSecond)} [${rate(parsePerCpuSecond)}] events/s; parse + persist, 1 run ${rate(one.perSecond)} [${rate(one.perCpuSecond)}] events/s, ${CONCURRENT_RUNS} runs ${rate(many.perSecond)} [${rate(many.perCpuSecond)}] events/s (${one.events} events stored as ${one.stored} after coalescing)`,
      )
    }
    console.log(`  ${engine}, the store's own floor on this machine: ${formatStoreFloor(result.floor)}`)
    for (const [label, stream] of [
      ['1 run', result.stream.one],
      [`${CONCURRENT_RUNS} runs`, result.stream.many],
    ]) {
      const steady =
        stream.allStreaming.length > 0
          ? `; while all stream: p50 ${pct(stream.allStreaming, 50)} ms  p99 ${pct(stream.allStreaming, 99)} ms  (n=${stream.allStreaming.length})`
          : ''
      console.log(
        `  ${engine}, agent stdout → SSE client, ${label}: p50 ${pct(stream.latencies, 50)} ms  p99 ${pct(stream.latencies, 99)} ms  (n=${stream.latencies.length})${steady}; ${Math.round(stream.eventsPerSecond)} events/s delivered, daemon ${Math.round(stream.daemonCpuUsPerEvent)} µs CPU per event, machine ${Math.round(stream.machineBusy * 100)}% busy`,
      )
      if (stream.stages) {
        const parts = Object.entries(stream.stages).map(
          ([stage, values]) => `${stage} ${pct(values, 50)} / ${pct(values, 99)}`,
        )
        console.log(`    where the time went (p50 / p99 ms): ${parts.join(', ')}`)
      }
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
  // --stream: only the stdout → SSE figures (a minute instead of several); --sqlite or --postgres: that
  // engine alone; --stages: also where each line's time went, stage by stage (the daemon then runs with
  // bench-event-stages.mjs preloaded, which costs it a little: the headline figures are taken without).
  const only = ENGINES.find((engine) => process.argv.includes(`--${engine}`))
  const options = {
    streamOnly: process.argv.includes('--stream'),
    only,
    stages: process.argv.includes('--stages'),
  }
  const speedBefore = machineSpeed()
  const engines = await benchEvents(root, options)
  console.log(`this machine's speed before: ${formatMachineSpeed(speedBefore)}`)
  console.log(`               after: ${formatMachineSpeed(machineSpeed())}`)
  printEventBench(engines)
}
