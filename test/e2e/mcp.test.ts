// The MCP endpoint of a real daemon, driven over real HTTP by the SDK's own client as an MCP host would:
// bearer PATs only, tool annotations, a run of the real Claude Code CLI against the mock model, and the
// propose → commit flow (write tools change nothing; an approve-scoped token commits).
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { openStore } from '../../src/store/store.js'
import {
  DEFAULT_FILE_CONTENT,
  type MockModelServer,
  startMockModelServer,
} from '../fixtures/mock-model-server.js'
import { cleanEnv, type RunningDaemon, startDaemon } from '../helpers/hangar-cli.js'
import {
  loopbackOnlyEnv,
  privateScratchRoot,
  startRefusingProxy,
  TEST_API_KEY,
  realCliPath,
} from '../helpers/real-cli-cases.js'

interface RunView {
  id: string
  status: string
  reason: string | null
  agent: string
}

interface EventView {
  seq: number
  type: string
  [field: string]: unknown
}

interface ProposalView {
  actionId: string
  tool: string
  status: string
  summary: string
  classification: string
  diff: string | null
  origin: string
  runId: string | null
  expiresAt: string
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
}

const FINISHED = ['succeeded', 'failed', 'cancelled', 'interrupted', 'awaiting_confirmation']

describe('MCP endpoint', () => {
  let mock: MockModelServer
  let proxy: Awaited<ReturnType<typeof startRefusingProxy>>
  let root: string
  let project: string
  let daemon: RunningDaemon
  let cliToken: string
  let apiToken: string
  let approveToken: { id: string; token: string }
  let dataDir: string
  const clients: Client[] = []

  async function createToken(body: {
    name: string
    scopes?: string[]
    expiresIn?: string
  }): Promise<{ id: string; token: string }> {
    const response = await fetch(`${daemon.url}/api/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cliToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    expect(response.status).toBe(201)
    return (await response.json()) as { id: string; token: string }
  }

  async function connect(token: string): Promise<Client> {
    const client = new Client({ name: 'hangar-e2e', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${daemon.url}/api/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    )
    clients.push(client)
    return client
  }

  /** Calls a tool: whether it failed, all its text, and its JSON (the last text block) when there is one. */
  async function call<T>(client: Client, name: string, input: Record<string, unknown> = {}) {
    const result = await client.callTool({ name, arguments: input })
    const texts = (result.content as { type: string; text?: string }[])
      .filter((block) => block.type === 'text')
      .map((block) => block.text ?? '')
    let value: unknown = null
    try {
      value = JSON.parse(texts.at(-1) ?? 'null')
    } catch {
      // A plain-text answer (a read tool's output, an error message).
    }
    return { isError: result.isError === true, text: texts.join('\n'), value: value as T }
  }

  async function waitForRun(client: Client, runId: string, statuses = FINISHED, timeoutMs = 90_000) {
    const deadline = Date.now() + timeoutMs
    const events: EventView[] = []
    for (;;) {
      const answer = await call<{ run: RunView; events: EventView[] }>(client, 'get_run', {
        runId,
        afterSeq: events.at(-1)?.seq ?? 0,
      })
      expect(answer.isError, answer.text).toBe(false)
      events.push(...answer.value.events)
      if (statuses.includes(answer.value.run.status)) return { run: answer.value.run, events }
      if (Date.now() > deadline) throw new Error(`run ${runId} is still ${answer.value.run.status}`)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }

  const postRaw = (headers: Record<string, string>, method = 'POST') =>
    fetch(`${daemon.url}/api/mcp`, {
      method,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      ...(method === 'POST' && { body: JSON.stringify(INITIALIZE) }),
    })

  beforeAll(async () => {
    mock = await startMockModelServer()
    proxy = await startRefusingProxy()
    root = await privateScratchRoot('mcp')
    project = path.join(root, 'project')
    await mkdir(path.join(root, 'home'), { recursive: true })
    await mkdir(project)
    execFileSync('git', ['init', '-q'], { cwd: project })
    await writeFile(path.join(project, 'README.md'), '# MCP project\nneedle here\n')
    await writeFile(path.join(root, 'outside.txt'), 'not for MCP clients\n')
    const env = cleanEnv({
      PATH: realCliPath(),
      HOME: path.join(root, 'home'),
      ANTHROPIC_API_KEY: TEST_API_KEY,
      ANTHROPIC_BASE_URL: mock.url,
      CLAUDE_CODE_MAX_RETRIES: '1',
      ...loopbackOnlyEnv(proxy.url),
    })
    dataDir = path.join(root, 'data')
    daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: project })
    cliToken = (JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string })
      .token
    apiToken = (await createToken({ name: 'mcp-api' })).token
    approveToken = await createToken({ name: 'mcp-approve', scopes: ['approve'] })
  }, 180_000)

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()))
  })

  afterAll(async () => {
    await daemon?.stop()
    await mock?.close()
    await proxy?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('answers 401 with WWW-Authenticate to anything but a valid user PAT', async () => {
    const revoked = await createToken({ name: 'revoked' })
    const revoke = await fetch(`${daemon.url}/api/tokens/${revoked.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${cliToken}` },
    })
    expect(revoke.status).toBe(200)
    const expiring = await createToken({ name: 'expiring', expiresIn: '1s' })
    await new Promise((resolve) => setTimeout(resolve, 1200))
    const refusals: [string, Record<string, string>, RegExp][] = [
      ['no header', {}, /personal access token/],
      ['not a bearer header', { authorization: `Basic ${apiToken}` }, /Bearer <token>/],
      ['a malformed token', { authorization: 'Bearer hgr_nonsense' }, /malformed/],
      ['a revoked PAT', { authorization: `Bearer ${revoked.token}` }, /revoked/],
      ['an expired PAT', { authorization: `Bearer ${expiring.token}` }, /expired/],
      ['the CLI session', { authorization: `Bearer ${cliToken}` }, /not a session/],
      ['a session cookie', { cookie: `hangar_session=${cliToken}` }, /personal access token/],
    ]
    for (const [what, headers, message] of refusals) {
      const response = await postRaw(headers)
      expect(response.status, what).toBe(401)
      expect(response.headers.get('www-authenticate'), what).toMatch(/^Bearer /)
      const body = (await response.json()) as { error: { code: string; message: string } }
      expect(body.error.code, what).toBe('unauthorized')
      expect(body.error.message, what).toMatch(message)
    }
    const rejected = await connect(revoked.token).catch((error: unknown) => error)
    expect(rejected).toBeInstanceOf(StreamableHTTPError)
    expect((rejected as StreamableHTTPError).code).toBe(401)
  })

  it('answers 405 with the error envelope to GET and DELETE', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await postRaw({ authorization: `Bearer ${apiToken}` }, method)
      expect(response.status, method).toBe(405)
      expect(response.headers.get('allow')).toBe('POST')
      const body = (await response.json()) as { error: { code: string; message: string } }
      expect(body.error).toMatchObject({ code: 'invalid_request', message: expect.stringContaining(method) })
    }
  })

  it('lists its tools with annotations, and commit/reject only for an approve-scoped token', async () => {
    const { tools } = await (await connect(apiToken)).listTools()
    const byName = new Map(tools.map((tool) => [tool.name, tool]))
    const reads =
      'diff_workspace get_attempts get_run glob grep list_agents list_files list_pending_actions list_projects read_file'.split(
        ' ',
      )
    const changing =
      'cancel_run delete_file edit_file review_workspace run_command start_attempts start_run write_file'.split(
        ' ',
      )
    expect([...byName.keys()].sort()).toEqual([...reads, ...changing].sort())
    for (const name of reads) expect(byName.get(name)?.annotations?.readOnlyHint, name).toBe(true)
    for (const name of changing) expect(byName.get(name)?.annotations?.readOnlyHint, name).toBe(false)
    for (const name of ['write_file', 'delete_file', 'run_command']) {
      expect(byName.get(name)?.annotations, name).toMatchObject({
        readOnlyHint: false,
        destructiveHint: true,
      })
    }
    expect(byName.get('edit_file')?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
    })
    expect(byName.get('read_file')?.inputSchema).toMatchObject({ type: 'object', required: ['path'] })
    expect(byName.get('start_run')?.inputSchema.required).toEqual(['prompt'])

    const approving = new Map(
      (await (await connect(approveToken.token)).listTools()).tools.map((tool) => [tool.name, tool]),
    )
    expect(approving.get('commit_proposal')?.annotations).toMatchObject({ destructiveHint: true })
    expect(approving.get('reject_proposal')?.annotations).toMatchObject({ destructiveHint: false })
    // Landing changes the user's repository: only with the approve scope.
    expect(approving.get('land_workspace')?.annotations).toMatchObject({ destructiveHint: true })
    expect(approving.size).toBe(byName.size + 3)
  })

  it('starts a run of the real Claude Code CLI and follows it with get_run', async () => {
    const client = await connect(apiToken)
    const agents = await call<{ adapters: { id: string; installed: boolean; auth?: { state: string } }[] }>(
      client,
      'list_agents',
    )
    expect(agents.value.adapters.find((adapter) => adapter.id === 'claude-code')).toMatchObject({
      installed: true,
      auth: { state: 'ok' },
    })
    expect(agents.value.adapters.map((adapter) => adapter.id)).toContain('builtin')

    const started = await call<{ run: RunView }>(client, 'start_run', {
      agent: 'claude-code',
      prompt: 'Please create a file. FILE=from-mcp.txt',
    })
    expect(started.isError, started.text).toBe(false)
    expect(started.value.run).toMatchObject({ status: 'queued', agent: 'claude-code' })
    const { run, events } = await waitForRun(client, started.value.run.id)
    expect(run.status, run.reason ?? '').toBe('succeeded')
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1))
    const types = events.map((event) => event.type)
    expect(types[0]).toBe('run-start')
    expect(types).toContain('tool-call')
    expect(events.find((event) => event.type === 'file-change')).toMatchObject({
      path: 'from-mcp.txt',
      kind: 'create',
    })
    expect(events.at(-1)).toMatchObject({ type: 'run-end', status: 'succeeded' })
    expect(await readFile(path.join(project, 'from-mcp.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)

    const after = await call<{ events: EventView[]; more: boolean }>(client, 'get_run', {
      runId: run.id,
      afterSeq: events.length,
    })
    expect(after.value).toMatchObject({ events: [], more: false })
    const unknown = await call(client, 'get_run', { runId: 'run_nope' })
    expect(unknown).toMatchObject({ isError: true, text: 'no run run_nope' })
    expect(proxy.attempts).toEqual([])
  }, 120_000)

  // Resuming is the same on every path (REST, CLI, UI, MCP): start_run takes resumeRunId too.
  it('resumes an earlier run of the real Claude Code CLI with start_run resumeRunId', async () => {
    const client = await connect(apiToken)
    const first = await call<{ run: RunView }>(client, 'start_run', {
      agent: 'claude-code',
      prompt: 'Remember the word marmalade-7731.',
    })
    expect((await waitForRun(client, first.value.run.id)).run.status).toBe('succeeded')
    const before = mock.requests.length
    const resumed = await call<{ run: RunView & { continues: string | null } }>(client, 'start_run', {
      prompt: 'Which word did I ask you to remember?',
      resumeRunId: first.value.run.id,
    })
    expect(resumed.isError, resumed.text).toBe(false)
    expect(resumed.value.run).toMatchObject({ agent: 'claude-code', continues: first.value.run.id })
    expect((await waitForRun(client, resumed.value.run.id)).run.status).toBe('succeeded')
    // Claude's request for the resumed turn carries the first one.
    const carried = mock.requests
      .slice(before)
      .filter((request) => request.method === 'POST' && request.rawBody.includes('Which word'))
    expect(carried.some((request) => request.rawBody.includes('marmalade-7731'))).toBe(true)
    const unknown = await call(client, 'start_run', { prompt: 'go on', resumeRunId: 'run_nope' })
    expect(unknown).toMatchObject({ isError: true, text: expect.stringContaining('no run run_nope') })
  }, 180_000)

  it('cancels a running run', async () => {
    const client = await connect(apiToken)
    const started = await call<{ run: RunView }>(client, 'start_run', { agent: 'builtin', prompt: 'HANG' })
    await waitForRun(client, started.value.run.id, ['running'], 30_000)
    const cancelled = await call<{ run: RunView }>(client, 'cancel_run', { runId: started.value.run.id })
    expect(cancelled.isError, cancelled.text).toBe(false)
    expect(cancelled.value.run.status).toBe('cancelled')
    const again = await call(client, 'cancel_run', { runId: started.value.run.id })
    expect(again).toMatchObject({ isError: true, text: expect.stringContaining('is already cancelled') })
  })

  it('proposes a write without making it, and commits it with an approve-scoped token', async () => {
    const client = await connect(apiToken)
    const target = path.join(project, 'proposed.txt')
    const proposed = await call<{ proposal: ProposalView }>(client, 'write_file', {
      path: 'proposed.txt',
      content: 'proposed over MCP\n',
    })
    expect(proposed.isError, proposed.text).toBe(false)
    const { proposal } = proposed.value
    expect(proposal).toMatchObject({
      actionId: expect.stringMatching(/^act_/),
      tool: 'write_file',
      status: 'pending',
      classification: 'safe_create',
      origin: 'mcp',
      runId: null,
      summary: expect.stringContaining('proposed.txt'),
      diff: expect.stringContaining('+proposed over MCP'),
      expiresAt: expect.any(String),
    })
    expect(existsSync(target)).toBe(false)
    const pending = await call<{ actions: ProposalView[] }>(client, 'list_pending_actions')
    expect(pending.value.actions.map((action) => action.actionId)).toContain(proposal.actionId)
    const notAllowed = await call(client, 'commit_proposal', { actionId: proposal.actionId })
    expect(notAllowed).toMatchObject({
      isError: true,
      text: expect.stringContaining('commit_proposal not found'),
    })
    expect(existsSync(target)).toBe(false)

    const approver = await connect(approveToken.token)
    const committed = await call<{ action: ProposalView; replayed: boolean; continuation: null }>(
      approver,
      'commit_proposal',
      { actionId: proposal.actionId },
    )
    expect(committed.isError, committed.text).toBe(false)
    expect(committed.value).toMatchObject({
      action: { status: 'applied' },
      replayed: false,
      continuation: null,
    })
    expect(await readFile(target, 'utf8')).toBe('proposed over MCP\n')
    const again = await call<{ action: ProposalView; replayed: boolean }>(approver, 'commit_proposal', {
      actionId: proposal.actionId,
    })
    expect(again.value).toMatchObject({ action: { status: 'applied' }, replayed: true })
    const rejectAfter = await call(approver, 'reject_proposal', { actionId: proposal.actionId })
    expect(rejectAfter).toMatchObject({ isError: true, text: expect.stringContaining('already applied') })
    expect(await readFile(target, 'utf8')).toBe('proposed over MCP\n')

    const overwrite = await call<{ proposal: ProposalView }>(client, 'write_file', {
      path: 'proposed.txt',
      content: 'replaced\n',
    })
    expect(overwrite.value.proposal.classification).toBe('destructive_update')
    const rejected = await call<{ action: ProposalView }>(approver, 'reject_proposal', {
      actionId: overwrite.value.proposal.actionId,
      reason: 'keep it',
    })
    expect(rejected.value.action).toMatchObject({ status: 'rejected', decisionReason: 'keep it' })
    expect(await readFile(target, 'utf8')).toBe('proposed over MCP\n')
    const missing = await call(approver, 'commit_proposal', { actionId: 'act_nope' })
    expect(missing).toMatchObject({ isError: true, text: expect.stringContaining('no action act_nope') })

    // The audit trail names the token that decided, never a user id the client could have chosen.
    const store = await openStore({ dataDir })
    try {
      const owner = (await store.users.findOwner())!
      const audit = await store.forUser(owner.id).audit.list({ limit: 1000 })
      expect(audit.find((event) => event.targetId === proposal.actionId)).toMatchObject({
        action: 'action.apply',
        actor: `pat:${approveToken.id}`,
      })
    } finally {
      await store.close()
    }
  })

  it('continues a built-in agent run when its proposal is committed over MCP', async () => {
    const approver = await connect(approveToken.token)
    const started = await call<{ run: RunView }>(approver, 'start_run', {
      agent: 'builtin',
      prompt: 'FILE=continued.txt',
    })
    const waiting = await waitForRun(approver, started.value.run.id, FINISHED, 30_000)
    expect(waiting.run.status, waiting.run.reason ?? '').toBe('awaiting_confirmation')
    const pending = await call<{ actions: ProposalView[] }>(approver, 'list_pending_actions')
    const action = pending.value.actions.find((candidate) => candidate.runId === started.value.run.id)
    expect(action).toMatchObject({ origin: 'chat', tool: 'write_file' })
    const committed = await call<{ continuation: RunView | null }>(approver, 'commit_proposal', {
      actionId: action!.actionId,
    })
    expect(committed.value.continuation).toMatchObject({ status: 'queued' })
    const finished = await waitForRun(approver, committed.value.continuation!.id, FINISHED, 30_000)
    expect(finished.run.status, finished.run.reason ?? '').toBe('succeeded')
    expect(await readFile(path.join(project, 'continued.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
  })

  it('runs read tools in the project and refuses paths outside it', async () => {
    const client = await connect(apiToken)
    const read = await call(client, 'read_file', { path: 'README.md' })
    expect(read.isError, read.text).toBe(false)
    expect(read.text).toContain('# MCP project')
    const grep = await call(client, 'grep', { pattern: 'needle' })
    expect(grep.text).toContain('README.md')
    const listed = await call(client, 'list_files', {})
    expect(listed.text).toContain('README.md')

    for (const [name, input] of [
      ['read_file', { path: '../outside.txt' }],
      ['read_file', { path: path.join(root, 'outside.txt') }],
      ['list_files', { path: '..' }],
      ['grep', { pattern: 'not for', path: '..' }],
    ] as const) {
      const answer = await call(client, name, input)
      expect(answer.isError, `${name} ${JSON.stringify(input)}`).toBe(true)
      expect(answer.text).not.toContain('not for MCP clients')
    }
    const before = (await call<{ actions: ProposalView[] }>(client, 'list_pending_actions')).value.actions
      .length
    const outsideWrite = await call(client, 'write_file', { path: '../escape.txt', content: 'x' })
    expect(outsideWrite.isError).toBe(true)
    expect(existsSync(path.join(root, 'escape.txt'))).toBe(false)
    expect(
      (await call<{ actions: ProposalView[] }>(client, 'list_pending_actions')).value.actions,
    ).toHaveLength(before)
    const invalid = await call(client, 'read_file', { file: 'README.md' })
    expect(invalid).toMatchObject({ isError: true, text: expect.stringContaining('path') })
  })
})
