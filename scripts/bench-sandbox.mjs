// Sandbox start overhead (`sandbox: workspace`): the time from "start the agent" to its process having run
// and exited, for a trivial agent (`node -e ''`), sandboxed (per-run home, proxy socket, bubblewrap, the
// forwarder listening, then the agent) against the same process started directly. Numbers, no assertions.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { percentile } from './bench-support.mjs'

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')

export async function benchSandbox(runs = Number(process.env.BENCH_SANDBOX_RUNS ?? 30)) {
  const { openRunSandbox } = await import(path.join(root, 'dist/src/sandbox/run-sandbox.js'))
  const { createSupervisor } = await import(path.join(root, 'dist/src/adapters/supervisor.js'))
  const { silentLogger } = await import(path.join(root, 'dist/src/core/logger.js'))
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-sandbox-'))
  const home = path.join(scratch, 'home')
  const dataDir = path.join(scratch, 'data')
  const workspace = path.join(scratch, 'project')
  for (const directory of [home, dataDir, workspace]) mkdirSync(directory, { recursive: true })
  const server = http.createServer((_request, response) => response.end('ok'))
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const proxyOrigin = `http://127.0.0.1:${server.address().port}`
  const supervisor = createSupervisor()
  const plan = {
    command: process.execPath,
    args: ['-e', ''],
    env: { PATH: process.env.PATH },
    stdin: null,
    files: [],
  }
  const base = {
    dataDir,
    env: { HOME: home, PATH: process.env.PATH },
    settings: { mode: 'workspace', paths: { readOnly: [], writable: [] }, hosts: [] },
  }
  const direct = []
  const sandboxed = []
  try {
    for (let index = 0; index < runs; index += 1) {
      let started = performance.now()
      await (
        await supervisor.start(plan, workspace, { onLine() {} })
      ).exited
      direct.push(performance.now() - started)

      const runDir = path.join(dataDir, 'runs', `bench-${index}`)
      mkdirSync(runDir, { recursive: true })
      started = performance.now()
      const sandbox = await openRunSandbox(base, {
        runId: `bench-${index}`,
        runDir,
        cwd: workspace,
        adapterId: 'claude-code',
        executable: undefined,
        useLogin: true,
        proxyOrigin,
        log: silentLogger,
      })
      const exit = await (await supervisor.start(sandbox.wrap(plan), workspace, { onLine() {} })).exited
      await sandbox.close()
      sandboxed.push(performance.now() - started)
      if (exit.code !== 0) throw new Error(`sandboxed run exited ${exit.code}`)
    }
  } finally {
    server.close()
    rmSync(scratch, { recursive: true, force: true })
  }
  const overhead = sandboxed.map((value, index) => value - direct[index])
  return { direct, sandboxed, overhead }
}

export function printSandboxBench(result) {
  const line = (values) =>
    `p50 ${percentile(values, 50).toFixed(1)} ms  p99 ${percentile(values, 99).toFixed(1)} ms  (n=${values.length})`
  console.log(`agent start, direct (node -e ''):          ${line(result.direct)}`)
  console.log(`agent start, sandboxed (bubblewrap):       ${line(result.sandboxed)}`)
  console.log(`sandbox start overhead (per run):          ${line(result.overhead)}`)
}

if (import.meta.url === `file://${process.argv[1]}`) printSandboxBench(await benchSandbox())
