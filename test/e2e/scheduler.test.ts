// The daemon's scheduler with a fake agent CLI: many concurrent runs with every limit held and no run
// executed twice, and a daemon killed mid-run whose successor interrupts the run and reaps its agent.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { groupAlive } from '../../src/adapters/supervisor.js'
import { openStore } from '../../src/store/store.js'
import { cleanEnv, type RunningDaemon, startDaemon } from '../helpers/hangar-cli.js'
import { maxOverlap } from '../helpers/run-overlap.js'
import { makeTempDir } from '../helpers/store-engines.js'

const FAKE_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/bin')

interface RunJson {
  id: string
  status: string
  agent: string
  startedAt: string | null
  endedAt: string | null
  reason: string | null
  agentPgid: number | null
}

async function client(dataDir: string, url: string) {
  const { token } = JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string }
  return async <T>(method: string, route: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${url}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
    return (await response.json()) as T
  }
}

describe('scheduler with a fake CLI', () => {
  let root: string
  let project: string
  const daemons: RunningDaemon[] = []

  beforeAll(async () => {
    root = await makeTempDir('hangar-scheduler-')
    project = path.join(root, 'project')
    await mkdir(project)
    execFileSync('git', ['init', '-q'], { cwd: project })
    await writeFile(
      path.join(project, 'hangar.yaml'),
      [
        'agents:',
        '  fast: { adapter: cursor-agent, concurrency: 3 }',
        '  slow: { adapter: cursor-agent, concurrency: 2 }',
        'server: { maxConcurrentRuns: 4 }',
      ].join('\n'),
    )
  })
  afterAll(async () => {
    for (const daemon of daemons) await daemon.stop()
    if (root) await rm(root, { recursive: true, force: true })
  })

  const environment = (extra: Record<string, string>) =>
    cleanEnv({
      PATH: [FAKE_BIN, path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: root,
      ...extra,
    })

  it('runs 20 concurrent runs once each, within the per-profile and global limits', async () => {
    const dataDir = path.join(root, 'data-many')
    const daemon = await startDaemon(['--data-dir', dataDir], {
      env: environment({ FAKE_CURSOR_DELAY_MS: '300' }),
      cwd: project,
    })
    daemons.push(daemon)
    const api = await client(dataDir, daemon.url)
    const submitted = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        api<RunJson>('POST', '/api/runs', {
          agent: index % 2 ? 'slow' : 'fast',
          prompt: `FILE=out-${index}.txt`,
        }),
      ),
    )
    expect(submitted.every((run) => run.status === 'queued')).toBe(true)
    const deadline = Date.now() + 90_000
    let runs: RunJson[] = []
    while (Date.now() < deadline) {
      runs = await Promise.all(submitted.map((run) => api<RunJson>('GET', `/api/runs/${run.id}`)))
      if (runs.every((run) => ['succeeded', 'failed', 'cancelled'].includes(run.status))) break
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect(runs.map((run) => run.status)).toEqual(Array(20).fill('succeeded'))
    for (let index = 0; index < 20; index++)
      expect(existsSync(path.join(project, `out-${index}.txt`))).toBe(true)
    expect(maxOverlap(runs.filter((run) => run.agent === 'fast'))).toBeLessThanOrEqual(3)
    expect(maxOverlap(runs.filter((run) => run.agent === 'slow'))).toBeLessThanOrEqual(2)
    expect(maxOverlap(runs)).toBeLessThanOrEqual(4)
    // Each run was executed once: one run-start in its log.
    const store = await openStore({ dataDir })
    try {
      const owner = (await store.users.findOwner())!
      for (const run of runs) {
        const starts = (await store.forUser(owner.id).runs.listEvents(run.id)).filter(
          (event) => event.type === 'run-start',
        )
        expect(starts).toHaveLength(1)
      }
    } finally {
      await store.close()
    }
  })

  it('interrupts the runs of a SIGKILLed daemon on restart, reaps the agent, and keeps every delivered event', async () => {
    const dataDir = path.join(root, 'data-crash')
    const env = environment({ FAKE_CURSOR_HANG: '1' })
    const first = await startDaemon(['--data-dir', dataDir], { env, cwd: project })
    const api = await client(dataDir, first.url)
    const run = await api<RunJson>('POST', '/api/runs', { agent: 'fast', prompt: 'FILE=hang.txt' })
    const token = (JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string })
      .token
    const stream = await fetch(`${first.url}/api/runs/${run.id}/events`, {
      headers: { authorization: `Bearer ${token}` },
    })
    const delivered: number[] = []
    const reader = (async () => {
      const decoder = new TextDecoder()
      let buffer = ''
      try {
        for await (const chunk of stream.body!) {
          buffer += decoder.decode(chunk as Uint8Array, { stream: true })
          for (const match of buffer.matchAll(/^id: (\d+)$/gm)) delivered.push(Number(match[1]))
          buffer = buffer.slice(buffer.lastIndexOf('\n') + 1)
        }
      } catch {
        // the daemon is killed under the stream
      }
    })()
    const deadline = Date.now() + 30_000
    while (!existsSync(path.join(project, 'hang.txt')) || delivered.length < 3) {
      if (Date.now() > deadline) throw new Error(`no progress: ${delivered.join(',')}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const running = await api<RunJson>('GET', `/api/runs/${run.id}`)
    expect(running.status).toBe('running')
    expect(running.agentPgid).toBeGreaterThan(0)
    first.child.kill('SIGKILL')
    await first.stop()
    await reader
    // The agent lives on in its own process group: an orphan until a daemon reaps it.
    expect(groupAlive(running.agentPgid!)).toBe(true)

    const second = await startDaemon(['--data-dir', dataDir], { env, cwd: project })
    daemons.push(second)
    const after = await (await client(dataDir, second.url))<RunJson>('GET', `/api/runs/${run.id}`)
    expect(after.status).toBe('interrupted')
    expect(groupAlive(running.agentPgid!)).toBe(false)
    const store = await openStore({ dataDir })
    try {
      const owner = (await store.users.findOwner())!
      const stored = (await store.forUser(owner.id).runs.listEvents(run.id)).map((event) => event.seq)
      for (const seq of delivered) expect(stored).toContain(seq)
      expect((await store.forUser(owner.id).runs.listEvents(run.id)).at(-1)).toMatchObject({
        type: 'run-end',
        status: 'interrupted',
      })
    } finally {
      await store.close()
    }
  })
})
