// Schedule triggers across two runtimes sharing one store (two daemons on PostgreSQL; a daemon and a CLI
// process on SQLite), driven by one injectable clock — no sleeps: each slot fires exactly once whichever
// runtime ticks, a slot while the previous run is active is skipped and logged, slots missed while no
// daemon ran are skipped (`skip`) or fire once at start (`once`), and a stopped loop stops cleanly.
import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/core/config.js'
import { createRuntime, type Runtime } from '../../src/main.js'
import { cleanEnv } from '../helpers/hangar-cli.js'
import { gitRepo } from '../helpers/in-process-daemon.js'
import { freshPostgresUrl, makeTempDir, STORE_ENGINES } from '../helpers/store-engines.js'

describe.each(STORE_ENGINES)('schedule triggers on two runtimes ($name)', { timeout: 180_000 }, (engine) => {
  let root: string
  let now = Date.parse('2026-11-26T10:00:30Z')
  const clock = () => new Date(now)
  let first: Runtime
  let second: Runtime

  async function runtime(name: string, databaseUrl: string, dataDir: string): Promise<Runtime> {
    const projectDir = path.join(root, `${name}-dir`)
    await mkdir(projectDir)
    gitRepo(projectDir)
    return createRuntime({
      dataDir,
      databaseUrl: databaseUrl || undefined,
      config: parseConfig(''),
      projectDir,
      nodeId: name,
      env: cleanEnv({
        PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
        HOME: root,
        ANTHROPIC_API_KEY: 'sk-ant-test-schedule-0123456789',
        ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
      }),
      logLevel: 'silent',
      clock,
    })
  }

  beforeAll(async () => {
    root = await makeTempDir('hangar-triggers-schedule-')
    const databaseUrl = engine.name === 'postgres' ? await freshPostgresUrl({ migrated: true }) : ''
    first = await runtime('node-a', databaseUrl, path.join(root, 'data-a'))
    // SQLite: a second process on the same file; PostgreSQL: a second daemon with its own data dir.
    second = await runtime(
      'node-b',
      databaseUrl,
      engine.name === 'postgres' ? path.join(root, 'data-b') : path.join(root, 'data-a'),
    )
    // Fired runs stay queued (no run is executed here): the overlap rule sees them active until ended.
    await Promise.all([first.scheduler.stop(), second.scheduler.stop()])
  })
  afterAll(async () => {
    await second?.close()
    await first?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  const both = () => Promise.all([first.triggerScheduler.tick(), second.triggerScheduler.tick()])
  const firesOf = (id: string) => first.store.triggers.fires(id)

  it('fires each slot once across both runtimes, skips an overlap, and applies the missed-run policy', async () => {
    const owner = first.owner.id
    const every5 = await first.triggers.create(owner, `user:${owner}`, {
      name: 'every-5',
      kind: 'schedule',
      cron: '*/5 * * * *',
      timezone: 'Europe/Paris',
      agent: 'builtin',
      prompt: 'check the build',
    })
    const hourly = await first.triggers.create(owner, `user:${owner}`, {
      name: 'hourly',
      kind: 'schedule',
      cron: '0 * * * *',
      missed: 'once',
      agent: 'builtin',
      prompt: 'hourly report',
    })
    await Promise.all([first.triggerScheduler.start(), second.triggerScheduler.start()])
    await both()
    expect(await firesOf(every5.id)).toEqual([])

    // 10:05: both runtimes see the slot; one claims it.
    now = Date.parse('2026-11-26T10:05:00Z')
    await both()
    await both()
    let fires = await firesOf(every5.id)
    expect(fires.map((fire) => [fire.slot, fire.status])).toEqual([['2026-11-26T10:05:00.000Z', 'started']])
    const firstRun = fires[0]!.runId!
    const scope = first.store.forUser(owner)
    expect((await scope.runs.get(firstRun))?.prompt).toBe('check the build')
    expect(await scope.runs.list()).toHaveLength(1)

    // 10:10: the 10:05 run is still queued: the slot is claimed once and skipped, with the reason.
    now = Date.parse('2026-11-26T10:10:20Z')
    await both()
    fires = await firesOf(every5.id)
    expect(fires[0]).toMatchObject({
      slot: '2026-11-26T10:10:00.000Z',
      status: 'skipped',
      reason: `the previous run ${firstRun} is still active`,
      runId: null,
    })

    // The run ends; 10:15 fires again (and 10:11–10:14 ticks fire nothing).
    await scope.runs.update(firstRun, { status: 'succeeded' })
    now = Date.parse('2026-11-26T10:12:00Z')
    await both()
    now = Date.parse('2026-11-26T10:15:01Z')
    await Promise.all([both(), both()])
    fires = await firesOf(every5.id)
    expect(fires.map((fire) => [fire.slot, fire.status])).toEqual([
      ['2026-11-26T10:15:00.000Z', 'started'],
      ['2026-11-26T10:10:00.000Z', 'skipped'],
      ['2026-11-26T10:05:00.000Z', 'started'],
    ])
    await scope.runs.update(fires[0]!.runId!, { status: 'succeeded' })
    // The hourly trigger had no slot yet (made at 10:00:30).
    expect(await firesOf(hourly.id)).toEqual([])

    // Both daemons stop; three hours pass; both start again.
    await Promise.all([first.triggerScheduler.stop(), second.triggerScheduler.stop()])
    now = Date.parse('2026-11-26T13:20:00Z')
    await Promise.all([first.triggerScheduler.start(), second.triggerScheduler.start()])
    await both()
    // `once`: the latest missed slot fires once; `skip`: nothing for the missed ones.
    expect((await firesOf(hourly.id)).map((fire) => [fire.slot, fire.status])).toEqual([
      ['2026-11-26T13:00:00.000Z', 'started'],
    ])
    expect(await firesOf(every5.id)).toHaveLength(3)
    now = Date.parse('2026-11-26T13:25:00Z')
    await both()
    expect((await firesOf(every5.id))[0]).toMatchObject({
      slot: '2026-11-26T13:25:00.000Z',
      status: 'started',
    })
    await Promise.all([first.triggerScheduler.stop(), second.triggerScheduler.stop()])
  })
})
