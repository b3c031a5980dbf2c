// Issue 18 item 1: a hung agent blocked its profile forever. Only OpenClaw had a limit; every other run
// waited on its process with no timer, so a CLI stuck on a stalled model stayed `running`, every later run
// of its profile (concurrency 1) stayed `queued`, and the "Retry with …" fallback never appeared (it
// follows `failed` only). Now profile keys `timeout` (wall clock) and `idleTimeout` (no output and no
// model request in flight) stop such a run the way a cancel does, and it ends `failed` with a retryable
// `timeout` error naming the limit. Real Claude Code and the built-in agent, on the mock model, through a
// real daemon; `hangar run --timeout` in process.
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { groupAlive } from '../../src/adapters/supervisor.js'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { createApiClient } from '../helpers/api-client.js'
import { type FeedProject, startFeedProject } from '../helpers/feed-project.js'
import { cleanEnv, type RunningDaemon, runHangar, startDaemon } from '../helpers/hangar-cli.js'
import { loopbackOnlyEnv, realCliPath, startRefusingProxy, TEST_API_KEY } from '../helpers/real-cli-cases.js'

interface RunJson {
  id: string
  status: string
  reason: string | null
  agentPgid: number | null
  conversationId: string | null
}

interface EventJson {
  type: string
  code?: string
  message?: string
  retryable?: boolean
  status?: string
}

/** The command line of a process's parent (Linux /proc); null before the process is known. */
async function parentCommandOf(pid: number | null): Promise<string | null> {
  if (!pid) return null
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  const parent = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]
  return (await readFile(`/proc/${parent}/cmdline`, 'utf8')).split('\0')[0]!
}

// Long enough for a second run of the same profile (real Claude Code on the mock) to finish under load.
const STUCK_TIMEOUT = '45s'

describe('run limits', () => {
  let mock: MockModelServer
  let refusing: Awaited<ReturnType<typeof startRefusingProxy>>
  let shop: FeedProject
  let daemon: RunningDaemon
  let env: NodeJS.ProcessEnv
  let token: string
  const dataDir = () => path.join(shop.root, 'data')

  const { api, waitForStatus } = createApiClient(() => ({ url: daemon.url, token }))

  /** The run's stored events, as `hangar runs show --events --json` prints them. */
  async function eventsOf(runId: string): Promise<EventJson[]> {
    const shown = await runHangar(['runs', 'show', runId, '--events', '--json', '--data-dir', dataDir()], {
      env,
      cwd: shop.home,
    })
    expect(shown.code, shown.stderr).toBe(0)
    return (JSON.parse(shown.stdout) as { events: EventJson[] }).events
  }

  const timeoutErrors = (events: EventJson[]) =>
    events.filter((event) => event.type === 'error' && event.code === 'timeout')

  beforeAll(async () => {
    mock = await startMockModelServer()
    refusing = await startRefusingProxy()
    shop = await startFeedProject('run-limits', 'unused')
    await writeFile(
      path.join(shop.project, 'hangar.yaml'),
      [
        'agents:',
        '  stuck:',
        '    adapter: claude-code',
        `    timeout: ${STUCK_TIMEOUT}`,
        '  patient:',
        '    adapter: claude-code',
        '    idleTimeout: 10s',
        '  slowpoke:',
        '    adapter: builtin',
        '    timeout: 3s',
        '  drowsy:',
        '    adapter: builtin',
        '    proxy: false',
        '    idleTimeout: 2s',
      ].join('\n'),
    )
    env = cleanEnv({
      PATH: realCliPath(),
      HOME: shop.home,
      HANGAR_DATA_DIR: dataDir(),
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_API_KEY: TEST_API_KEY,
      CLAUDE_CODE_MAX_RETRIES: '1',
      ...loopbackOnlyEnv(refusing.url),
    })
    daemon = await startDaemon(['--data-dir', dataDir()], { env, cwd: shop.project })
    token = (JSON.parse(await readFile(path.join(dataDir(), 'daemon.json'), 'utf8')) as { token: string })
      .token
  }, 90_000)

  afterAll(async () => {
    await daemon?.stop()
    await mock?.close()
    await refusing?.close()
    await shop?.close()
  })

  it('stops a run past its timeout, frees the profile for the next run, and offers the fallback', async () => {
    const conversation = await api<{ id: string }>('POST', '/api/conversations', { agent: 'stuck' })
    expect(conversation.status).toBe(201)
    // The mock never answers: Claude Code waits on a model request that stays open.
    const hung = await api<RunJson>('POST', `/api/conversations/${conversation.json.id}/messages`, {
      text: 'Wait for me. HANG',
    })
    expect(hung.status).toBe(202)
    await waitForStatus(hung.json.id, ['running'], 90_000)
    // Spawned by `hangar up`'s agent launcher, its default (HANGAR_AGENT_LAUNCHER=0: by the daemon itself).
    await expect
      .poll(async () =>
        parentCommandOf((await api<RunJson>('GET', `/api/runs/${hung.json.id}`)).json.agentPgid),
      )
      .toBe('hangar-agent-launcher')
    const next = await api<RunJson>('POST', '/api/runs', { agent: 'stuck', prompt: 'Say hello.' })
    expect(next.status).toBe(201)

    const ended = await waitForStatus<RunJson>(hung.json.id, ['succeeded', 'failed', 'cancelled'], 120_000)
    expect(ended.status).toBe('failed')
    expect(ended.reason).toBe(`ran longer than ${STUCK_TIMEOUT} (timeout)`)
    const events = await eventsOf(hung.json.id)
    expect(timeoutErrors(events)).toEqual([
      expect.objectContaining({ message: `ran longer than ${STUCK_TIMEOUT} (timeout)`, retryable: true }),
    ])
    expect(events.at(-1)).toMatchObject({ type: 'run-end', status: 'failed' })
    // Stopped as a cancel stops it: its whole process group is gone.
    expect(ended.agentPgid).toBeGreaterThan(0)
    expect(groupAlive(ended.agentPgid!)).toBe(false)

    // The profile's one slot is free again: the queued run runs.
    const after = await waitForStatus<RunJson>(next.json.id, ['succeeded', 'failed', 'cancelled'], 120_000)
    expect(after.status, after.reason ?? '').toBe('succeeded')

    // And the conversation offers another agent, as after any failed run.
    const detail = await api<{ fallback: string[] | null }>(
      'GET',
      `/api/conversations/${conversation.json.id}`,
    )
    expect(detail.json.fallback).toContain('builtin')
  }, 300_000)

  it('stops a run of a profile made over the API once it is quiet for its idleTimeout', async () => {
    // Unproxied: nothing but the CLI's own output can keep it from being idle while the mock hangs.
    const created = await api('POST', '/api/profiles', {
      name: 'quiet',
      // Unproxied, so unsandboxed (a new profile's default sandbox could not reach the model).
      definition: { adapter: 'claude-code', proxy: false, sandbox: 'off', idleTimeout: '3s' },
    })
    expect(created.status).toBe(201)
    const run = await api<RunJson>('POST', '/api/runs', { agent: 'quiet', prompt: 'Wait for me. HANG' })
    const ended = await waitForStatus<RunJson>(run.json.id, ['succeeded', 'failed', 'cancelled'], 120_000)
    expect(ended.status).toBe('failed')
    expect(ended.reason).toBe('no agent output or model traffic for 3s (idleTimeout)')
    expect(timeoutErrors(await eventsOf(run.json.id))).toHaveLength(1)
    expect(groupAlive(ended.agentPgid!)).toBe(false)
  }, 180_000)

  it('is not idle while a model request of the run is in flight, however slow', async () => {
    // The mock holds its answer for 25 s, far past the 10 s idleTimeout, while Claude Code prints nothing.
    const run = await api<RunJson>('POST', '/api/runs', {
      agent: 'patient',
      prompt: 'Take your time. WAIT=25000',
    })
    const ended = await waitForStatus<RunJson>(run.json.id, ['succeeded', 'failed', 'cancelled'], 120_000)
    expect(ended.status, ended.reason ?? '').toBe('succeeded')
    expect(timeoutErrors(await eventsOf(run.json.id))).toEqual([])
  }, 180_000)

  it('refuses a limit that is not a duration, naming its key', async () => {
    const refused = await api<{ error: { code: string; details: { fields: { path: string }[] } } }>(
      'POST',
      '/api/profiles',
      { name: 'sloppy', definition: { adapter: 'claude-code', idleTimeout: 'five minutes' } },
    )
    expect(refused.status).toBe(400)
    expect(refused.json.error.code).toBe('invalid_request')
    expect(refused.json.error.details.fields).toEqual([
      { path: 'definition.idleTimeout', message: expect.stringMatching(/"90s", "30m" or "2h", or "off"/) },
    ])
    const put = await api('PUT', '/api/profiles/sloppy', { adapter: 'claude-code', timeout: 90 })
    expect(put.status).toBe(400)
  })

  it('stops a built-in agent run past its timeout while its model request hangs', async () => {
    const run = await api<RunJson>('POST', '/api/runs', { agent: 'slowpoke', prompt: 'HANG' })
    const ended = await waitForStatus<RunJson>(run.json.id, ['succeeded', 'failed', 'cancelled'], 60_000)
    expect(ended.status).toBe('failed')
    expect(ended.reason).toBe('ran longer than 3s (timeout)')
    expect(timeoutErrors(await eventsOf(run.json.id))).toEqual([expect.objectContaining({ retryable: true })])
  }, 90_000)

  it('stops a built-in agent run whose model stream makes no progress for its idleTimeout', async () => {
    const run = await api<RunJson>('POST', '/api/runs', { agent: 'drowsy', prompt: 'HANG' })
    const ended = await waitForStatus<RunJson>(run.json.id, ['succeeded', 'failed', 'cancelled'], 60_000)
    expect(ended.status).toBe('failed')
    expect(ended.reason).toBe('no agent output or model traffic for 2s (idleTimeout)')
  }, 90_000)

  it('hangar run --timeout stops the run and exits 1; a bad value is a usage error', async () => {
    const result = await runHangar(
      ['run', '--agent', 'claude-code', '--timeout', '2s', '--json', 'Wait for me. HANG'],
      { env, cwd: shop.project, timeoutMs: 120_000 },
    )
    expect(result.code, result.stderr).toBe(1)
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as EventJson)
    expect(timeoutErrors(events)).toEqual([
      expect.objectContaining({ message: 'ran longer than 2s (--timeout)', retryable: true }),
    ])
    expect(events.at(-1)).toMatchObject({ type: 'run-end', status: 'failed' })

    const bad = await runHangar(['run', '--timeout', 'soon', 'hello'], { env, cwd: shop.project })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--timeout "soon" is not a duration/)
  }, 180_000)
})
