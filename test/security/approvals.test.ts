// Attacks on confirming proposals (pending actions), issue 17 items 2, 7 and 8:
// - item 2: an `api`-only PAT must not confirm or reject (REST, MCP, CLI all go through the actions
//   service, which decides); the audit row names the principal.
// - item 7: an approved command must not run inside a store transaction — while it runs, /api/health
//   answers, the claim is visible, and a streaming run's events are stored (both engines).
// - item 8: a daemon SIGKILLed during an approved command: on restart the command's process group is
//   gone, the action is failed (interrupted), and a second confirm is 409 — it never runs twice.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { runCommandTool } from '../../src/agent/tools/run-command-tool.js'
import type { Proposal } from '../../src/agent/tools/types.js'
import { parseConfig } from '../../src/core/config.js'
import { createRuntime } from '../../src/main.js'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { cleanEnv, type RunningDaemon, runHangar, startDaemon } from '../helpers/hangar-cli.js'
import { makeTempDir, STORE_ENGINES, type StoreEngine } from '../helpers/store-engines.js'

interface ActionJson {
  id: string
  status: string
  result: { content?: string; reason?: string } | null
}

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds))

async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function gitProject(root: string): Promise<string> {
  const project = path.join(root, 'project')
  await mkdir(project, { recursive: true })
  execFileSync('git', ['init', '-q'], { cwd: project })
  return project
}

/** A command that says it started, then waits for `go` (created by the test), then appends to ran.log. */
function waitingCommand(directory: string): string {
  const file = (name: string) => JSON.stringify(path.join(directory, name))
  return [
    `echo $$ > ${file('command.pid')}`,
    `echo run >> ${file('started.log')}`,
    `while [ ! -e ${file('go')} ]; do sleep 0.05; done`,
    `echo ran >> ${file('ran.log')}`,
  ].join('; ')
}

/** A daemon's runtime in this process, on one engine, with the mock model behind the built-in agent. */
async function openRuntime(engine: StoreEngine, mock: MockModelServer) {
  const root = await makeTempDir('hangar-approvals-')
  const project = await gitProject(root)
  const testStore = await engine.open()
  // The runtime opens the store itself (same data dir or database), like a daemon.
  await testStore.store.close()
  const runtime = await createRuntime({
    dataDir: testStore.dataDir,
    databaseUrl: testStore.databaseUrl || undefined,
    config: parseConfig(''),
    projectDir: project,
    env: {
      PATH: process.env.PATH,
      HOME: root,
      ANTHROPIC_API_KEY: 'sk-ant-test-approvals-0123456789',
      ANTHROPIC_BASE_URL: mock.url,
    },
    logLevel: 'silent',
  })
  const server = await runtime.listen({ host: '127.0.0.1', port: 0 })
  const token = async (scopes: ('api' | 'approve')[]) =>
    runtime.auth.createToken('system', runtime.owner.id, { name: `t-${scopes.join('-')}`, scopes })
  const cliSession = await runtime.auth.createSession(runtime.owner.id, 'cli')

  async function api<T>(method: string, route: string, secret: string, body?: unknown) {
    const response = await fetch(`${server.url}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${secret}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    return { status: response.status, json: (text ? JSON.parse(text) : null) as T }
  }

  /** A run_command proposal, as the MCP write tool parks it (no run; applied in the project). */
  async function proposeCommand(command: string): Promise<string> {
    const input = { command, timeout_seconds: 600 }
    const proposal = (await runCommandTool.propose(input, { workspace: project })) as Proposal
    const parked = await runtime.actions
      .createMcpDesk(runtime.owner.id)
      .park({ tool: 'run_command', input }, proposal)
    return parked.id
  }

  return {
    root,
    project,
    runtime,
    server,
    token,
    cliSession,
    api,
    proposeCommand,
    async close() {
      await server.close()
      await runtime.close()
      await testStore.dispose()
      await rm(root, { recursive: true, force: true })
    },
  }
}

type OpenedRuntime = Awaited<ReturnType<typeof openRuntime>>

describe('approvals: the approve scope (issue 17 item 2)', () => {
  let mock: MockModelServer
  let opened: OpenedRuntime

  beforeAll(async () => {
    mock = await startMockModelServer()
    opened = await openRuntime(STORE_ENGINES[0]!, mock)
  })
  afterAll(async () => {
    await opened?.close()
    await mock?.close()
  })

  it('refuses confirm and reject with an api-only PAT (403 naming the scope), and changes nothing', async () => {
    const marker = path.join(opened.root, 'pwned')
    const id = await opened.proposeCommand(`touch ${JSON.stringify(marker)}`)
    const { token } = await opened.token(['api'])
    for (const kind of ['confirm', 'reject']) {
      const answer = await opened.api<{ error: { code: string; message: string } }>(
        'POST',
        `/api/actions/${id}/${kind}`,
        token,
        {},
      )
      expect(answer.status, kind).toBe(403)
      expect(answer.json.error.code).toBe('forbidden')
      expect(answer.json.error.message).toMatch(/approve/)
      expect(answer.json.error.message).toContain('hangar token create')
      expect(answer.json.error.message).toContain('--scope approve')
    }
    expect(existsSync(marker)).toBe(false)
    const [stored] = (await opened.api<ActionJson[]>('GET', '/api/actions?status=pending', token)).json
    expect(stored).toMatchObject({ id, status: 'pending' })
    // The service decides, whichever path calls it (MCP hides the tools, the CLI calls it in process).
    const principal = await opened.runtime.auth.authenticate(token)
    await expect(opened.runtime.actions.decide(principal, id, { kind: 'confirm' })).rejects.toMatchObject({
      code: 'forbidden',
    })
    expect(existsSync(marker)).toBe(false)
  })

  it('confirms with an approve-scoped PAT and with a session, each audited as its principal', async () => {
    const byPat = await opened.proposeCommand('echo by-pat')
    const approve = await opened.token(['approve'])
    const confirmed = await opened.api<{ action: ActionJson }>(
      'POST',
      `/api/actions/${byPat}/confirm`,
      approve.token,
    )
    expect(confirmed.status).toBe(200)
    expect(confirmed.json.action.status).toBe('applied')

    const bySession = await opened.proposeCommand('echo by-session')
    const rejected = await opened.api<{ action: ActionJson }>(
      'POST',
      `/api/actions/${bySession}/reject`,
      opened.cliSession,
      { reason: 'no' },
    )
    expect(rejected.status).toBe(200)

    const audit = opened.runtime.store.forUser(opened.runtime.owner.id).audit
    expect(
      (await audit.list({ action: 'action.apply' })).find((row) => row.targetId === byPat),
    ).toMatchObject({ actor: `pat:${approve.record.id}` })
    expect(
      (await audit.list({ action: 'action.reject' })).find((row) => row.targetId === bySession),
    ).toMatchObject({ actor: `user:${opened.runtime.owner.id}` })
  })

  it('refuses an api-only PAT a profile that auto-approves (deciding in advance)', async () => {
    const api = await opened.token(['api'])
    const approve = await opened.token(['approve'])
    const definition = { adapter: 'builtin', autoApprove: ['destructive_update'] }
    const refused = await opened.api<{ error: { code: string; message: string } }>(
      'POST',
      '/api/profiles',
      api.token,
      { name: 'yes-man', definition },
    )
    expect(refused.status).toBe(403)
    expect(refused.json.error.message).toContain('--scope approve')
    const plain = await opened.api('PUT', '/api/profiles/plain', api.token, { adapter: 'builtin' })
    expect(plain.status).toBe(200)
    const widened = await opened.api('PUT', '/api/profiles/plain', api.token, definition)
    expect(widened.status).toBe(403)
    const allowed = await opened.api('POST', '/api/profiles', approve.token, { name: 'yes-man', definition })
    expect(allowed.status).toBe(201)
  })

  it("answers 404 to another user's session and leaves the action pending", async () => {
    const id = await opened.proposeCommand('echo mine')
    const member = await opened.runtime.store.users.create({ name: 'member', role: 'member' })
    const session = await opened.runtime.auth.createSession(member.id, 'cli')
    const answer = await opened.api('POST', `/api/actions/${id}/confirm`, session)
    expect(answer.status).toBe(404)
    expect((await opened.runtime.store.forUser(opened.runtime.owner.id).actions.get(id))?.status).toBe(
      'pending',
    )
  })
})

describe.each(STORE_ENGINES)(
  'approvals: a running command does not freeze the daemon ($name, issue 17 item 7)',
  (engine) => {
    let mock: MockModelServer
    let opened: OpenedRuntime
    let scratch: string

    beforeAll(async () => {
      mock = await startMockModelServer()
      opened = await openRuntime(engine, mock)
      scratch = await makeTempDir('hangar-approvals-command-')
    })
    afterEach(async () => {
      // Never leave the command waiting, whatever failed.
      await writeFile(path.join(scratch, 'go'), '')
    })
    afterAll(async () => {
      await opened?.close()
      await mock?.close()
      if (scratch) await rm(scratch, { recursive: true, force: true })
    })

    it('answers health, shows the claim and stores a streaming run while the approved command runs', async () => {
      const id = await opened.proposeCommand(waitingCommand(scratch))
      const { token } = await opened.token(['approve'])
      let commandFinished = false
      const confirming = opened
        .api<{ action: ActionJson }>('POST', `/api/actions/${id}/confirm`, token)
        // A failed test closes the daemon under the request: that is the failure shown, not this.
        .catch((error: unknown) => ({ status: 0, json: { action: { status: String(error) } as ActionJson } }))
        .finally(() => {
          commandFinished = true
        })
      await waitFor(() => existsSync(path.join(scratch, 'started.log')), 'the command to start')
      // A safety valve only: if the daemon is frozen, the command is let go so the test can fail, not hang.
      const valve = setTimeout(() => void writeFile(path.join(scratch, 'go'), ''), 90_000)
      try {
        const health = await opened.api<{ status: string }>('GET', '/api/health', token)
        expect(health.status).toBe(200)
        expect(commandFinished, 'health answered only after the command finished').toBe(false)

        // The claim is committed: other readers see the action `applying` while it runs.
        const applying = await opened.api<ActionJson[]>('GET', '/api/actions?status=applying', token)
        expect(applying.status).toBe(200)
        expect(applying.json.map((action) => action.id)).toEqual([id])
        expect(commandFinished).toBe(false)

        // A streaming run of the built-in agent stores all its events and ends meanwhile.
        const prompt = `SLOW=5 Tell me a story about hangars while a command runs (${engine.name}).`
        const submitted = await opened.api<{ id: string }>('POST', '/api/runs', token, {
          agent: 'builtin',
          prompt,
          cwd: opened.project,
        })
        expect(submitted.status).toBe(201)
        let run = { status: 'queued' }
        await waitFor(async () => {
          run = (await opened.api<{ status: string }>('GET', `/api/runs/${submitted.json.id}`, token)).json
          return ['succeeded', 'failed', 'cancelled', 'interrupted'].includes(run.status) || commandFinished
        }, 'the streaming run to end')
        expect(commandFinished, 'the run ended only after the command finished').toBe(false)
        expect(run.status).toBe('succeeded')
        const events = await opened.runtime.store
          .forUser(opened.runtime.owner.id)
          .runs.listEvents(submitted.json.id)
        // All of the streamed answer is stored. (How many deltas it is stored as depends on how long the
        // store's commits take: deltas that arrive during one are coalesced into one event.)
        const streamed = events.flatMap((event) => (event.type === 'text-delta' ? [event.text] : []))
        expect(streamed.join('')).toBe(`mock reply to: ${prompt}`)
        expect(events.at(-1)?.type).toBe('run-end')
        expect(commandFinished).toBe(false)
      } finally {
        clearTimeout(valve)
      }

      await writeFile(path.join(scratch, 'go'), '')
      const confirmed = await confirming
      expect(confirmed.status).toBe(200)
      expect(confirmed.json.action.status).toBe('applied')
      expect(await readFile(path.join(scratch, 'ran.log'), 'utf8')).toBe('ran\n')
    }, 180_000)
  },
)

describe('approvals: a daemon killed during an approved command (issue 17 item 8)', () => {
  let root: string
  let project: string
  let dataDir: string
  let env: NodeJS.ProcessEnv
  let daemon: RunningDaemon | undefined
  let commandGroup: number | undefined
  const clients: Client[] = []

  beforeAll(async () => {
    root = await makeTempDir('hangar-approvals-crash-')
    project = await gitProject(root)
    dataDir = path.join(root, 'data')
    env = cleanEnv({ PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'), HOME: root })
  })
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => {})))
    await daemon?.stop()
    if (commandGroup !== undefined && groupAlive(commandGroup)) process.kill(-commandGroup, 'SIGKILL')
    if (root) await rm(root, { recursive: true, force: true })
  })

  async function cliToken(): Promise<string> {
    return (JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string }).token
  }

  async function request<T>(method: string, route: string, token: string, body?: unknown) {
    const response = await fetch(`${daemon!.url}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    return { status: response.status, json: (text ? JSON.parse(text) : null) as T }
  }

  it('kills the command on restart, marks the action failed (interrupted) and never runs it again', async () => {
    daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: project, timeoutMs: 60_000 })
    const created = await request<{ token: string }>('POST', '/api/tokens', await cliToken(), {
      name: 'approver',
      scopes: ['approve'],
    })
    expect(created.status).toBe(201)
    const pat = created.json.token

    // Proposed over MCP, as an MCP client would.
    const client = new Client({ name: 'approvals-e2e', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${daemon.url}/api/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${pat}` } },
      }),
    )
    clients.push(client)
    const proposed = await client.callTool({
      name: 'run_command',
      arguments: { command: waitingCommand(root), timeout_seconds: 600 },
    })
    const texts = (proposed.content as { type: string; text?: string }[]).map((block) => block.text ?? '')
    const actionId = (JSON.parse(texts.at(-1)!) as { proposal: { actionId: string } }).proposal.actionId
    await client.close()

    let confirmAnswer: unknown = 'no answer'
    const confirming = request('POST', `/api/actions/${actionId}/confirm`, pat).then(
      (answer) => (confirmAnswer = answer),
      (error: unknown) => (confirmAnswer = String(error)),
    )
    await waitFor(
      () => existsSync(path.join(root, 'started.log')) || confirmAnswer !== 'no answer',
      'the command to start',
    )
    expect(confirmAnswer, JSON.stringify({ texts, confirmAnswer })).toBe('no answer')
    commandGroup = Number((await readFile(path.join(root, 'command.pid'), 'utf8')).trim())
    daemon.child.kill('SIGKILL')
    await daemon.stop()
    await confirming
    daemon = undefined

    daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: project, timeoutMs: 60_000 })
    await waitFor(() => !groupAlive(commandGroup!), 'the command group to be gone', 30_000)

    const failed = await request<ActionJson[]>('GET', '/api/actions?status=failed', pat)
    const action = failed.json.find((candidate) => candidate.id === actionId)
    expect(action?.result?.reason).toBe('interrupted')
    const again = await request<{ error: { code: string; message: string } }>(
      'POST',
      `/api/actions/${actionId}/confirm`,
      pat,
    )
    expect(again.status).toBe(409)
    expect(again.json.error.message).toMatch(/interrupted/)
    // Even let go, it does not run: one start, no finish.
    await writeFile(path.join(root, 'go'), '')
    expect(await readFile(path.join(root, 'started.log'), 'utf8')).toBe('run\n')
    expect(existsSync(path.join(root, 'ran.log'))).toBe(false)
    // The CLI (in process, no daemon) refuses it the same way.
    await daemon.stop()
    daemon = undefined
    const cli = await runHangar(['actions', 'confirm', actionId, '--data-dir', dataDir], {
      env,
      cwd: project,
    })
    expect(cli.code).not.toBe(0)
    expect(cli.stderr).toMatch(/interrupted/)
    expect(await readFile(path.join(root, 'started.log'), 'utf8')).toBe('run\n')
  }, 180_000)
})
