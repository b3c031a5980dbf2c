// Driving runs and conversations over the REST API of a real daemon, as a user with curl would: a PAT,
// the built-in agent against the mock model, proposals decided over HTTP, and crash recovery.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  DEFAULT_FILE_CONTENT,
  FINAL_TEXT,
  type MockModelServer,
  startMockModelServer,
} from '../fixtures/mock-model-server.js'
import { cleanEnv, type RunningDaemon, runHangar, startDaemon, waitForOutput } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'
import { createApiClient } from '../helpers/api-client.js'

interface RunJson {
  id: string
  status: string
  conversationId: string | null
  reason: string | null
  continues?: string | null
}

describe('REST runs and conversations', () => {
  let mock: MockModelServer
  let root: string
  let dataDir: string
  let project: string
  let env: NodeJS.ProcessEnv
  let daemon: RunningDaemon
  let token: string

  const { api, waitForStatus: waitForRun } = createApiClient(() => ({ url: daemon.url, token }))
  const waitForStatus = (runId: string, statuses: string[], timeoutMs = 30_000) =>
    waitForRun<RunJson>(runId, statuses, timeoutMs)

  beforeAll(async () => {
    mock = await startMockModelServer()
    root = await makeTempDir('hangar-api-')
    dataDir = path.join(root, 'data')
    project = path.join(root, 'project')
    await mkdir(project)
    execFileSync('git', ['init', '-q'], { cwd: project })
    env = cleanEnv({
      PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: root,
      ANTHROPIC_API_KEY: 'sk-ant-test-api-0123456789',
      ANTHROPIC_BASE_URL: mock.url,
    })
    daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: project })
    const cliToken = (
      JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string }
    ).token
    const created = await fetch(`${daemon.url}/api/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cliToken}`, 'content-type': 'application/json' },
      // Deciding proposals over HTTP needs the approve scope (issue 17 item 2).
      body: JSON.stringify({ name: 'curl', scopes: ['approve'] }),
    })
    token = ((await created.json()) as { token: string }).token
  })

  afterAll(async () => {
    await daemon?.stop()
    await mock?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('runs the built-in agent, takes a decision over HTTP and continues', async () => {
    const submitted = await api<RunJson>('POST', '/api/runs', {
      agent: 'builtin',
      prompt: 'FILE=api.txt',
      cwd: project,
    })
    expect(submitted.status).toBe(201)
    expect(submitted.json.status).toBe('queued')
    const waiting = await waitForStatus(submitted.json.id, ['awaiting_confirmation', 'failed'])
    expect(waiting.status, waiting.reason ?? '').toBe('awaiting_confirmation')
    const pending = await api<{ id: string; tool: string }[]>('GET', '/api/actions?status=pending')
    expect(pending.json).toHaveLength(1)
    const decided = await api<{ action: { status: string }; continuation: RunJson | null }>(
      'POST',
      `/api/actions/${pending.json[0]!.id}/confirm`,
    )
    expect(decided.status).toBe(200)
    expect(decided.json.action.status).toBe('applied')
    expect(decided.json.continuation).not.toBeNull()
    const finished = await waitForStatus(decided.json.continuation!.id, ['succeeded', 'failed'])
    expect(finished.status, finished.reason ?? '').toBe('succeeded')
    expect(await readFile(path.join(project, 'api.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
    const again = await api<{ replayed: boolean; continuation: null }>(
      'POST',
      `/api/actions/${pending.json[0]!.id}/confirm`,
    )
    expect(again.json).toMatchObject({ replayed: true, continuation: null })
    const other = await api<{ error: { code: string } }>(
      'POST',
      `/api/actions/${pending.json[0]!.id}/reject`,
      {},
    )
    expect(other.status).toBe(409)
  })

  it('holds a conversation: one run at a time, cancel, then the next message', async () => {
    const conversation = await api<{ id: string; profile: string }>('POST', '/api/conversations', {
      agent: 'builtin',
    })
    expect(conversation.status).toBe(201)
    const first = await api<RunJson>('POST', `/api/conversations/${conversation.json.id}/messages`, {
      text: 'HANG',
    })
    expect(first.status).toBe(202)
    await waitForStatus(first.json.id, ['running'])
    const busy = await api<{ error: { code: string; message: string } }>(
      'POST',
      `/api/conversations/${conversation.json.id}/messages`,
      { text: 'another' },
    )
    expect(busy.status).toBe(409)
    expect(busy.json.error.message).toContain('run queued or running')
    const cancelled = await api<RunJson>('POST', `/api/runs/${first.json.id}/cancel`)
    expect(cancelled.json.status).toBe('cancelled')
    const next = await api<RunJson>('POST', `/api/conversations/${conversation.json.id}/messages`, {
      text: 'Just answer. NOTOOL',
    })
    expect(next.status).toBe(202)
    expect((await waitForStatus(next.json.id, ['succeeded', 'failed'])).status).toBe('succeeded')
    const shown = await api<{ messages: unknown[]; runs: RunJson[] }>(
      'GET',
      `/api/conversations/${conversation.json.id}`,
    )
    expect(shown.json.runs.map((run) => run.status).sort()).toEqual(['cancelled', 'succeeded'])
    expect(shown.json.messages.length).toBeGreaterThanOrEqual(3)
  })

  it('answers bad input with the error envelope and leaves nothing behind', async () => {
    const before = (await api<RunJson[]>('GET', '/api/runs')).json.length
    const unknownAgent = await api<{ error: { code: string; message: string } }>('POST', '/api/runs', {
      agent: 'nosuch',
      prompt: 'x',
    })
    expect(unknownAgent.status).toBe(400)
    expect(unknownAgent.json.error.message).toContain('unknown agent "nosuch"')
    expect((await api('POST', '/api/runs', '{"agent":')).status).toBe(400)
    expect((await api('POST', '/api/runs', { prompt: 'x', cwd: '/nonexistent/dir' })).status).toBe(400)
    expect((await api('POST', '/api/runs', { prompt: 'x', dependsOn: ['run_nope'] })).status).toBe(404)
    expect((await api('GET', '/api/runs/run_nope')).status).toBe(404)
    expect((await api('POST', '/api/conversations/conv_nope/messages', { text: 'x' })).status).toBe(404)
    expect((await api<RunJson[]>('GET', '/api/runs')).json.length).toBe(before)
  })

  it('fails a run whose dependency failed, and runs one whose dependency succeeded', async () => {
    const bad = await api<RunJson>('POST', '/api/runs', { agent: 'builtin', prompt: 'FAIL=500' })
    const after = await api<RunJson>('POST', '/api/runs', {
      agent: 'builtin',
      prompt: 'NOTOOL',
      dependsOn: [bad.json.id],
    })
    expect((await waitForStatus(bad.json.id, ['failed', 'succeeded'])).status).toBe('failed')
    const dependent = await waitForStatus(after.json.id, ['failed', 'succeeded'])
    expect(dependent).toMatchObject({
      status: 'failed',
      reason: expect.stringContaining('dependency_failed'),
    })
    const good = await api<RunJson>('POST', '/api/runs', { agent: 'builtin', prompt: 'NOTOOL' })
    const next = await api<RunJson>('POST', '/api/runs', {
      agent: 'builtin',
      prompt: 'NOTOOL',
      dependsOn: [good.json.id],
    })
    expect((await waitForStatus(next.json.id, ['failed', 'succeeded'])).status).toBe('succeeded')
  })

  it('streams a run over SSE from the daemon, and replays from Last-Event-ID', async () => {
    const run = await api<RunJson>('POST', '/api/runs', { agent: 'builtin', prompt: 'Just answer. NOTOOL' })
    const read = async (lastEventId?: string) => {
      const response = await fetch(`${daemon.url}/api/runs/${run.json.id}/events`, {
        headers: { authorization: `Bearer ${token}`, ...(lastEventId && { 'last-event-id': lastEventId }) },
      })
      expect(response.headers.get('content-type')).toContain('text/event-stream')
      const text = await response.text()
      return [...text.matchAll(/^id: (\d+)\ndata: (.*)$/gm)].map((match) => ({
        id: Number(match[1]),
        event: JSON.parse(match[2]!) as { type: string; seq: number },
      }))
    }
    const all = await read()
    expect(all.map((entry) => entry.id)).toEqual(all.map((_, index) => index + 1))
    expect(all.at(-1)?.event.type).toBe('run-end')
    expect(all.every((entry) => entry.event.seq === entry.id)).toBe(true)
    const rest = await read('2')
    expect(rest.map((entry) => entry.id)).toEqual(all.slice(2).map((entry) => entry.id))
  })

  it('lets the CLI list, cancel and decide through the running daemon', async () => {
    const hanging = await api<RunJson>('POST', '/api/runs', { agent: 'builtin', prompt: 'HANG' })
    await waitForStatus(hanging.json.id, ['running'])
    const cancel = await runHangar(['runs', 'cancel', hanging.json.id, '--data-dir', dataDir], { env })
    expect(cancel.code, cancel.stderr).toBe(0)
    expect(cancel.stdout).toContain(`${hanging.json.id} cancelled`)

    const proposing = await api<RunJson>('POST', '/api/runs', {
      agent: 'builtin',
      prompt: 'FILE=via-cli.txt',
      cwd: project,
    })
    await waitForStatus(proposing.json.id, ['awaiting_confirmation'])
    const [action] = (await api<{ id: string }[]>('GET', '/api/actions?status=pending')).json
    const confirm = await runHangar(['actions', 'confirm', action!.id, '--data-dir', dataDir], {
      env,
      timeoutMs: 60_000,
    })
    expect(confirm.code, confirm.stderr).toBe(0)
    expect(confirm.stdout.trim()).toBe(FINAL_TEXT)
    expect(existsSync(path.join(project, 'via-cli.txt'))).toBe(true)

    const listed = JSON.parse(
      (await runHangar(['runs', 'list', '--json', '--data-dir', dataDir], { env })).stdout,
    ) as RunJson[]
    expect(listed.map((run) => run.id)).toEqual(expect.arrayContaining([hanging.json.id, proposing.json.id]))
    const shown = await runHangar(['runs', 'show', proposing.json.id, '--data-dir', dataDir], { env })
    // Its only proposal decided, the run no longer waits: it names the run that went on from it.
    expect(shown.stdout).toMatch(/^status\s+succeeded$/m)
    const continuation = listed.find((run) => run.continues === proposing.json.id)
    expect(continuation).toBeDefined()
    expect(shown.stdout).toContain(`every proposal was decided; continued in ${continuation!.id}`)
  })

  it('manages profiles created over the API, checked like hangar.yaml', async () => {
    const created = await api<{ name: string; source: string }>('POST', '/api/profiles', {
      name: 'careful',
      definition: { adapter: 'builtin', autoApprove: ['safe_create'] },
    })
    expect(created.status).toBe(201)
    expect(created.json).toMatchObject({ name: 'careful', source: 'user' })
    const listed = await api<{ name: string }[]>('GET', '/api/profiles')
    expect(listed.json.map((profile) => profile.name)).toContain('careful')
    const invalid = await api<{ error: { message: string } }>('PUT', '/api/profiles/careful', {
      adapter: 'claud',
    })
    expect(invalid.status).toBe(400)
    expect(
      (await api('POST', '/api/profiles', { name: 'codex', definition: { adapter: 'codex' } })).status,
    ).toBe(400)
    expect((await api('DELETE', '/api/profiles/careful')).status).toBe(204)
    expect((await api('GET', '/api/profiles/careful')).status).toBe(404)
    const nodes = await api<{ id: string; state: string; self: boolean; url: string }[]>('GET', '/api/nodes')
    expect(nodes.json).toEqual([
      expect.objectContaining({ state: 'alive', self: true, url: daemon.url, stoppedAt: null }),
    ])
  })

  // A profile made over the API (or in the web UI) is an agent like hangar.yaml's, budget included: it
  // was refused as "unknown agent", and its budget was never enforced.
  it('runs a profile made over the API, enforces its budget, and reports usage per agent and day', async () => {
    const created = await api('POST', '/api/profiles', {
      name: 'thrifty',
      definition: { adapter: 'builtin', budget: { usd: 0.000001, window: '1d' } },
    })
    expect(created.status).toBe(201)
    const first = await api<RunJson>('POST', '/api/runs', { agent: 'thrifty', prompt: 'Just talk. NOTOOL' })
    expect(first.status, JSON.stringify(first.json)).toBe(201)
    expect((await waitForStatus(first.json.id, ['succeeded', 'failed'])).status).toBe('succeeded')
    const second = await api<RunJson>('POST', '/api/runs', { agent: 'thrifty', prompt: 'Again. NOTOOL' })
    const refused = await waitForStatus(second.json.id, ['succeeded', 'failed'])
    expect(refused.status).toBe('failed')
    expect(refused.reason).toMatch(/budget/)

    type Usage = {
      total: { requests: number; runs: number; costUsd: number }
      groups: { key: string; costUsd: number; runs: number; byAgent?: Record<string, { costUsd: number }> }[]
      budgets: { profile: string; usd: number; spentUsd: number; fraction: number }[]
    }
    const perAgent = await api<Usage>('GET', '/api/usage?groupBy=agent')
    expect(perAgent.status).toBe(200)
    const thrifty = perAgent.json.groups.find((group) => group.key === 'thrifty')
    expect(thrifty?.costUsd).toBeGreaterThan(0)
    expect(thrifty?.runs).toBe(1)
    expect(perAgent.json.budgets).toContainEqual(
      expect.objectContaining({ profile: 'thrifty', usd: 0.000001, fraction: expect.any(Number) }),
    )
    expect(
      perAgent.json.budgets.find((budget) => budget.profile === 'thrifty')!.fraction,
    ).toBeGreaterThanOrEqual(1)
    const perDay = await api<Usage>('GET', '/api/usage')
    expect(perDay.json.groups).toHaveLength(30)
    const today = new Date().toISOString().slice(0, 10)
    expect(perDay.json.groups.at(-1)?.key).toBe(today)
    expect(perDay.json.groups.at(-1)?.byAgent?.thrifty?.costUsd).toBe(thrifty?.costUsd)
    expect(perDay.json.total.requests).toBeGreaterThan(0)
    const bad = await api<{ error: { message: string } }>('GET', '/api/usage?from=yesterday')
    expect(bad.status).toBe(400)
    expect(bad.json.error.message).toBe(
      'from must be a date (2026-11-01) or an ISO-8601 time, not "yesterday"',
    )
  })

  it('lists agents with capabilities, the built-in one included', async () => {
    const agents = await api<{ adapters: { id: string; capabilities: object }[] }>('GET', '/api/agents')
    expect(agents.json.adapters.map((adapter) => adapter.id)).toContain('builtin')
    expect(agents.json.adapters.map((adapter) => adapter.id)).toContain('claude-code')
  })

  it('marks the runs of a daemon killed mid-run as interrupted on the next start', async () => {
    const run = await api<RunJson>('POST', '/api/runs', { agent: 'builtin', prompt: 'HANG' })
    await waitForStatus(run.json.id, ['running'])
    daemon.child.kill('SIGKILL')
    await daemon.stop()
    daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: project })
    await waitForOutput(daemon.stdout, 'Marked 1 run(s) left unfinished by an earlier daemon as interrupted.')
    const after = await api<RunJson>('GET', `/api/runs/${run.json.id}`)
    expect(after.json.status).toBe('interrupted')
    expect(existsSync(path.join(dataDir, 'daemon.json'))).toBe(true)
  })
})
