// Three daemons on loopback sharing one real PostgreSQL, with a fake agent CLI: runs spread over them, each
// executed once, agent limits held across the cluster; events of a run on one node streamed (and resumed)
// from another; a conversation's workspace answered for by its own node; and a daemon killed mid-run whose
// runs the others mark interrupted once its lease has expired.
import { execFileSync } from 'node:child_process'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest'
import { groupAlive } from '../../src/adapters/supervisor.js'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { cleanEnv, type RunningDaemon, startDaemon } from '../helpers/hangar-cli.js'
import { maxOverlap } from '../helpers/run-overlap.js'
import { freshPostgresUrl, makeTempDir } from '../helpers/store-engines.js'

const FAKE_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/bin')
const NODES = ['n1', 'n2', 'n3'] as const

interface RunJson {
  id: string
  agentPgid: number | null
  status: string
  agent: string
  owner: { node: string | null }
  startedAt: string | null
  endedAt: string | null
  reason: string | null
}

interface Envelope {
  runId: string
  seq: number
  type: string
  status?: string
}

/** Reads an SSE response until `done` says so (or the stream ends); returns the envelopes and last id. */
async function readEvents(
  response: Response,
  done: (envelopes: Envelope[]) => boolean,
): Promise<{ envelopes: Envelope[]; lastId: string | undefined }> {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  const envelopes: Envelope[] = []
  let buffer = ''
  let lastId: string | undefined
  while (!done(envelopes)) {
    const { value, done: ended } = await reader.read()
    if (ended) break
    buffer += decoder.decode(value, { stream: true })
    let boundary: number
    while ((boundary = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, boundary)
      buffer = buffer.slice(boundary + 2)
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) lastId = line.slice(4)
        if (line.startsWith('data: ')) envelopes.push(JSON.parse(line.slice(6)) as Envelope)
      }
      if (done(envelopes)) break
    }
  }
  await reader.cancel().catch(() => {})
  return { envelopes, lastId }
}

describe('several daemons sharing one PostgreSQL', () => {
  let root: string
  let project: string
  let databaseUrl: string
  let mock: MockModelServer
  const daemons = new Map<string, RunningDaemon>()
  const tokens = new Map<string, string>()

  const environment = (extra: Record<string, string> = {}) =>
    cleanEnv({
      PATH: [FAKE_BIN, path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: root,
      FAKE_CURSOR_DELAY_MS: '150',
      // The built-in agent's model.
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_API_KEY: 'sk-ant-test-cluster-0123456789',
      ...extra,
    })

  async function start(node: string, extra: Record<string, string> = {}): Promise<RunningDaemon> {
    const dataDir = path.join(root, `data-${node}`)
    const daemon = await startDaemon(['--data-dir', dataDir, '--database', databaseUrl, '--node-id', node], {
      env: environment(extra),
      cwd: project,
    })
    daemons.set(node, daemon)
    const { token } = JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as {
      token: string
    }
    tokens.set(node, token)
    return daemon
  }

  async function api<T>(node: string, method: string, route: string, body?: unknown) {
    const response = await fetch(`${daemons.get(node)!.url}${route}`, {
      method,
      // A daemon that stops answering fails the test here, with its log, rather than at the test's timeout.
      signal: AbortSignal.timeout(20_000),
      headers: {
        authorization: `Bearer ${tokens.get(node)}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
    return { status: response.status, json: (await response.json()) as T }
  }

  async function waitForRuns(
    node: string,
    ids: string[],
    done: (run: RunJson) => boolean,
    timeoutMs = 90_000,
  ) {
    const deadline = Date.now() + timeoutMs
    let runs: RunJson[] = []
    while (Date.now() < deadline) {
      runs = await Promise.all(
        ids.map(async (id) => (await api<RunJson>(node, 'GET', `/api/runs/${id}`)).json),
      )
      if (runs.every(done)) return runs
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    return runs
  }

  beforeAll(async () => {
    mock = await startMockModelServer()
    root = await makeTempDir('hangar-cluster-')
    project = path.join(root, 'project')
    await mkdir(project)
    execFileSync('git', ['init', '-q'], { cwd: project })
    execFileSync(
      'git',
      ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'init'],
      {
        cwd: project,
      },
    )
    await writeFile(
      path.join(project, 'hangar.yaml'),
      [
        'agents:',
        '  fast: { adapter: cursor-agent, concurrency: 3 }',
        '  slow: { adapter: cursor-agent, concurrency: 2 }',
        // A lease of twenty beats: a node that is only slow (two loaded cores, twenty agents starting, a busy
        // PostgreSQL) misses several beats in a row, and must not be taken for dead (1.5 s was not enough).
        'server: { maxConcurrentRuns: 4, heartbeatMs: 250, leaseMs: 5000 }',
      ].join('\n'),
    )
    databaseUrl = await freshPostgresUrl()
    for (const node of NODES) await start(node)
  }, 90_000)

  // What each daemon logged, when a test fails: the one record of what went on inside them.
  beforeEach(() => {
    onTestFailed(() => {
      for (const [node, daemon] of daemons)
        console.error(
          `--- ${node} (pid ${daemon.child.pid}) stderr, last 4000 characters:\n${daemon.stderr().slice(-4000)}`,
        )
    })
  })

  afterAll(async () => {
    for (const daemon of daemons.values()) await daemon.stop()
    await mock?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('lists every node alive in GET /api/nodes', async () => {
    const nodes = await api<{ id: string; state: string; self: boolean }[]>('n2', 'GET', '/api/nodes')
    expect(nodes.json.map((node) => [node.id, node.state, node.self])).toEqual([
      ['n1', 'alive', false],
      ['n2', 'alive', true],
      ['n3', 'alive', false],
    ])
  })

  it('runs 60 runs over three nodes once each, with every agent limit held across the cluster', async () => {
    const submitted = await Promise.all(
      Array.from({ length: 60 }, async (_, index) => {
        const node = NODES[index % 3]!
        const agent = index % 2 ? 'slow' : 'fast'
        const response = await api<RunJson>(node, 'POST', '/api/runs', {
          agent,
          prompt: `FILE=out-${index}.txt`,
        })
        expect(response.status).toBe(201)
        return { node, id: response.json.id }
      }),
    )
    const runs = await waitForRuns(
      'n1',
      submitted.map((run) => run.id),
      (run) => ['succeeded', 'failed', 'cancelled', 'interrupted'].includes(run.status),
    )
    expect(runs.map((run) => run.status)).toEqual(Array(60).fill('succeeded'))
    // Each ran on the node it was submitted to (its files are there), and each exactly once.
    expect(runs.map((run) => run.owner.node)).toEqual(submitted.map((run) => run.node))
    for (const run of runs) {
      const response = await fetch(`${daemons.get('n2')!.url}/api/runs/${run.id}/events`, {
        headers: { authorization: `Bearer ${tokens.get('n2')}` },
      })
      const { envelopes } = await readEvents(response, (events) => events.at(-1)?.type === 'run-end')
      expect(envelopes.filter((envelope) => envelope.type === 'run-start')).toHaveLength(1)
    }
    expect(maxOverlap(runs.filter((run) => run.agent === 'fast'))).toBeLessThanOrEqual(3)
    expect(maxOverlap(runs.filter((run) => run.agent === 'slow'))).toBeLessThanOrEqual(2)
  }, 120_000)

  it('streams a run executing on one node to a client of another, in order, and resumes after a drop', async () => {
    const submitted = await api<RunJson>('n3', 'POST', '/api/runs', { agent: 'fast', prompt: 'STREAM=12:60' })
    const runId = submitted.json.id
    const url = `${daemons.get('n1')!.url}/api/runs/${runId}/events`
    const headers = { authorization: `Bearer ${tokens.get('n1')}` }
    // Drop the connection after a few events (the run still streaming), then come back with the last id.
    const first = await readEvents(await fetch(url, { headers }), (events) => events.length >= 4)
    const rest = await readEvents(
      await fetch(url, { headers: { ...headers, 'last-event-id': first.lastId! } }),
      (events) => events.some((envelope) => envelope.type === 'run-end'),
    )
    const seqs = [...first.envelopes, ...rest.envelopes].map((envelope) => envelope.seq)
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, index) => index + 1))
    expect(rest.envelopes.at(-1)).toMatchObject({ type: 'run-end', status: 'succeeded' })
    const run = await api<RunJson>('n1', 'GET', `/api/runs/${runId}`)
    expect(run.json.owner.node).toBe('n3')
  }, 60_000)

  it('answers a message for a conversation whose workspace is on another node with 409 naming that node', async () => {
    const conversation = await api<{ id: string }>('n1', 'POST', '/api/conversations', { agent: 'fast' })
    const first = await api<RunJson>('n1', 'POST', `/api/conversations/${conversation.json.id}/messages`, {
      text: 'FILE=conversation.txt',
    })
    expect(first.status).toBe(202)
    await waitForRuns('n1', [first.json.id], (run) => run.status === 'succeeded')
    const elsewhere = await api<{ error: { code: string; message: string } }>(
      'n2',
      'POST',
      `/api/conversations/${conversation.json.id}/messages`,
      { text: 'and more' },
    )
    expect(elsewhere.status).toBe(409)
    expect(elsewhere.json.error.message).toMatch(/is on node n1, and this is n2/)
  }, 60_000)

  it('confirms a proposal only on the node holding its workspace, rejects it anywhere, and continues there', async () => {
    const created = await api<{ id: string }>('n1', 'POST', '/api/conversations', { agent: 'builtin' })
    const conversationId = created.json.id
    const propose = async (file: string) => {
      const message = await api<RunJson>('n1', 'POST', `/api/conversations/${conversationId}/messages`, {
        text: `FILE=${file}`,
      })
      await waitForRuns('n1', [message.json.id], (run) => run.status === 'awaiting_confirmation', 30_000)
      const pending = await api<{ id: string; conversationId: string }[]>(
        'n2',
        'GET',
        '/api/actions?status=pending',
      )
      return pending.json.find((action) => action.conversationId === conversationId)!.id
    }
    const first = await propose('confirmed.txt')
    const refused = await api<{ error: { message: string } }>(
      'n2',
      'POST',
      `/api/actions/${first}/confirm`,
      {},
    )
    expect(refused.status).toBe(409)
    expect(refused.json.error.message).toMatch(/applies in a workspace on node n1, and this is n2/)
    const confirmed = await api<{ continuation: RunJson }>('n1', 'POST', `/api/actions/${first}/confirm`, {})
    expect(confirmed.status).toBe(200)
    const [continued] = await waitForRuns(
      'n2',
      [confirmed.json.continuation.id],
      (run) => run.status === 'succeeded',
    )
    expect(continued?.owner.node).toBe('n1')

    const second = await propose('rejected.txt')
    const rejected = await api<{ continuation: RunJson }>('n2', 'POST', `/api/actions/${second}/reject`, {
      reason: 'not that one',
    })
    expect(rejected.status).toBe(200)
    // Decided on n2, continued on n1, where the conversation's workspace is.
    const [afterReject] = await waitForRuns(
      'n2',
      [rejected.json.continuation.id],
      (run) => run.status === 'succeeded',
    )
    expect(afterReject?.owner.node).toBe('n1')
  }, 90_000)

  it('marks the runs of a SIGKILLed node interrupted once its lease expires; other nodes keep every event', async () => {
    const daemon = await start('n4')
    const submitted = await api<RunJson>('n4', 'POST', '/api/runs', {
      agent: 'slow',
      prompt: 'HANG=1 FILE=hang.txt',
    })
    const runId = submitted.json.id
    const [started] = await waitForRuns('n1', [runId], (run) => run.status === 'running', 30_000)
    expect(started).toMatchObject({ status: 'running', owner: { node: 'n4' } })
    // A client on n1 follows the run; then n4 dies without a word, once the agent has written all it will
    // (its tool's result, then it hangs silent). Killed sooner, n4 would take the agent's stdout with it,
    // and the agent's next line would end it on the closed pipe: a slow start (agents run below the
    // daemon's priority, on two loaded cores) is not what this test is about.
    let agentHung!: () => void
    const hung = new Promise<void>((resolve) => (agentHung = resolve))
    const following = fetch(`${daemons.get('n1')!.url}/api/runs/${runId}/events`, {
      headers: { authorization: `Bearer ${tokens.get('n1')}` },
    }).then((response) =>
      readEvents(response, (events) => {
        if (events.some((envelope) => envelope.type === 'tool-result')) agentHung()
        return events.some((envelope) => envelope.type === 'run-end')
      }),
    )
    await Promise.race([
      hung,
      new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`the agent of ${runId} on n4 never reached its hang`)),
          30_000,
        ).unref(),
      ),
    ])
    daemon.child.kill('SIGKILL')
    await daemon.stop()
    daemons.delete('n4')
    const [ended] = await waitForRuns('n1', [runId], (run) => run.status === 'interrupted', 30_000)
    expect(ended?.reason).toBe('node n4 stopped answering (no heartbeat for 5 s)')
    const { envelopes } = await Promise.race([
      following,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`n1's event stream of ${runId} did not end`)), 15_000).unref(),
      ),
    ])
    expect(envelopes.map((envelope) => envelope.seq)).toEqual(
      Array.from({ length: envelopes.length }, (_, index) => index + 1),
    )
    expect(envelopes.at(-1)).toMatchObject({ type: 'run-end', status: 'interrupted' })
    const nodes = await api<{ id: string; state: string }[]>('n1', 'GET', '/api/nodes')
    expect(nodes.json.find((node) => node.id === 'n4')?.state).toBe('lost')
    // The agent n4 started is not the others' to kill (it could be on another machine): it still runs,
    // and the test reaps it itself.
    expect(ended?.agentPgid).toBeGreaterThan(0)
    expect(groupAlive(ended!.agentPgid!)).toBe(true)
    process.kill(-ended!.agentPgid!, 'SIGKILL')
  }, 60_000)
})
