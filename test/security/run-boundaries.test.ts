// Issue 17 item 1 (confinement): a member of a shared daemon, with an `api` PAT, tried to take the owner's
// instance over through a run's directory — a run in the data dir (or `../../..`, an absolute path
// elsewhere, a symlink in the project pointing out) whose built-in agent read `<data-dir>/secret.key` and
// daemon.json unapproved. Each attack runs against a real daemon over REST and MCP: it is refused before
// anything runs, a member never works in place in the operator's checkout, and a PAT never mints a token
// or a session.
import { mkdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { createApiClient } from '../helpers/api-client.js'
import { gitIn } from '../helpers/git-fixture.js'
import { cleanEnv, type RunningDaemon, runHangar, startDaemon } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

const FAKE_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/bin')

interface RunJson {
  id: string
  status: string
  cwd: string
  reason: string | null
  conversationId: string | null
}

interface ErrorJson {
  error: { code: string; message: string; details: unknown }
}

describe('run boundaries', () => {
  let mock: MockModelServer
  let root: string
  let project: string
  let outside: string
  let dataDir: string
  let daemon: RunningDaemon
  let ownerToken: string
  let memberPat: string
  let memberApprovePat: string
  let memberCookie: string
  let secrets: string[]
  const clients: Client[] = []

  const { api, waitForStatus } = createApiClient(() => ({ url: daemon.url, token: memberPat }))
  const asOwner = createApiClient(() => ({ url: daemon.url, token: ownerToken }))

  /** A cookie-signed-in request from the web UI's own origin. */
  const withCookie = (method: string, route: string, body?: unknown) =>
    fetch(`${daemon.url}${route}`, {
      method,
      headers: {
        cookie: memberCookie,
        origin: daemon.url,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })

  async function connect(token: string): Promise<Client> {
    const client = new Client({ name: 'attacker', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${daemon.url}/api/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    )
    clients.push(client)
    return client
  }

  async function call(client: Client, name: string, input: Record<string, unknown>) {
    const result = await client.callTool({ name, arguments: input })
    const text = (result.content as { type: string; text?: string }[])
      .map((block) => block.text ?? '')
      .join('\n')
    return { isError: result.isError === true, text }
  }

  /** What a leak would look like: the instance key and the CLI's session, as they are on disk. */
  function expectNoSecret(text: string): void {
    for (const secret of secrets) expect(text).not.toContain(secret)
  }

  beforeAll(async () => {
    mock = await startMockModelServer()
    root = await realpath(await makeTempDir('hangar-bounds-'))
    project = path.join(root, 'project')
    outside = path.join(root, 'outside')
    dataDir = path.join(root, 'data')
    await mkdir(project)
    await mkdir(outside)
    await mkdir(path.join(root, 'home'))
    await writeFile(path.join(outside, 'private.txt'), 'not for members\n')
    await writeFile(path.join(project, 'README.md'), '# project\n')
    gitIn(project, 'init', '-q', '-b', 'main')
    gitIn(project, 'add', '.')
    gitIn(project, 'commit', '-q', '-m', 'first')
    // Links a member could plant (or find) in the checkout, pointing out of it; ignored, so the checkout is clean.
    await symlink(outside, path.join(project, 'out-link'))
    await symlink(dataDir, path.join(project, 'data-link'))
    await writeFile(path.join(project, '.git', 'info', 'exclude'), 'out-link\ndata-link\n')
    const env = cleanEnv({
      PATH: [FAKE_BIN, path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: path.join(root, 'home'),
      ANTHROPIC_API_KEY: 'sk-ant-test-bounds-0123456789',
      ANTHROPIC_BASE_URL: mock.url,
    })
    daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: project, timeoutMs: 60_000 })
    const daemonJson = await readFile(path.join(dataDir, 'daemon.json'), 'utf8')
    ownerToken = (JSON.parse(daemonJson) as { token: string }).token
    secrets = [ownerToken, (await readFile(path.join(dataDir, 'secret.key'), 'utf8')).trim()]

    // Mallory joins as a member the way people do: an invite link, a browser session, then PATs.
    const added = await runHangar(['users', 'add', 'mallory', '--json', '--data-dir', dataDir], {
      env,
      cwd: project,
    })
    expect(added.code, added.stderr).toBe(0)
    // `hangar up` made the checkout the first project; the owner lets mallory work on it (issue 20).
    const granted = await runHangar(['projects', 'grant', 'project', 'mallory', '--data-dir', dataDir], {
      env,
      cwd: project,
    })
    expect(granted.code, granted.stderr).toBe(0)
    const invite = (JSON.parse(added.stdout) as { inviteUrl: string }).inviteUrl
    const login = await fetch(`${daemon.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: daemon.url },
      body: JSON.stringify({ token: invite.slice(invite.indexOf('#') + 1) }),
    })
    expect(login.status).toBe(200)
    memberCookie = /hangar_session=[^;]+/.exec(login.headers.get('set-cookie') ?? '')![0]
    const minted = await withCookie('POST', '/api/tokens', { name: 'mallory-api' })
    expect(minted.status).toBe(201)
    memberPat = ((await minted.json()) as { token: string }).token
    const approving = await withCookie('POST', '/api/tokens', { name: 'mallory-ok', scopes: ['approve'] })
    memberApprovePat = ((await approving.json()) as { token: string }).token
  }, 120_000)

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()))
  })

  afterAll(async () => {
    await daemon?.stop()
    await mock?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  /** Every directory a run must never work in, as a member would ask for it. */
  const escapes = () => [
    { what: 'the data dir', cwd: dataDir, message: /inside Hangar's data dir/ },
    { what: '../../..', cwd: '../../..', message: /outside the allowed roots/ },
    { what: 'an absolute path elsewhere', cwd: outside, message: /outside the allowed roots/ },
    { what: 'a symlink pointing out', cwd: 'out-link', message: /outside the allowed roots/ },
    { what: 'a symlink to the data dir', cwd: 'data-link', message: /inside Hangar's data dir/ },
    { what: 'a path that does not exist', cwd: 'no/such/dir', message: /does not exist/ },
  ]

  it('refuses a member built-in agent run outside the allowed roots over REST, and nothing runs', async () => {
    const requestsBefore = mock.requests.length
    for (const attack of escapes()) {
      const refused = await api<ErrorJson>('POST', '/api/runs', {
        agent: 'builtin',
        prompt: 'TOOL=read_file FILE=secret.key',
        cwd: attack.cwd,
      })
      expect(refused.status, attack.what).toBe(400)
      expect(refused.json.error.code, attack.what).toBe('invalid_request')
      expect(refused.json.error.message, attack.what).toMatch(attack.message)
    }
    const outsideRefusal = await api<ErrorJson & { error: { hint?: string } }>('POST', '/api/runs', {
      agent: 'builtin',
      prompt: 'hi',
      cwd: outside,
    })
    // One readable line: which path, which roots, and how an operator adds one.
    expect(outsideRefusal.json.error.message).toContain(outside)
    expect(outsideRefusal.json.error.message).toContain(project)
    expect(JSON.stringify(outsideRefusal.json)).toContain('server.allowedRoots')
    expect((await api<RunJson[]>('GET', '/api/runs')).json).toEqual([])
    expect((await api<unknown[]>('GET', '/api/conversations')).json).toEqual([])
    expect(mock.requests.length).toBe(requestsBefore)
  })

  it('refuses the same runs over MCP start_run, and nothing runs', async () => {
    const client = await connect(memberPat)
    const requestsBefore = mock.requests.length
    for (const attack of escapes()) {
      const answer = await call(client, 'start_run', {
        agent: 'builtin',
        prompt: 'TOOL=read_file FILE=daemon.json',
        cwd: attack.cwd,
      })
      expect(answer.isError, attack.what).toBe(true)
      expect(answer.text, attack.what).toMatch(attack.message)
    }
    expect((await api<RunJson[]>('GET', '/api/runs')).json).toEqual([])
    expect(mock.requests.length).toBe(requestsBefore)
  })

  it(
    "does not let a member's run or MCP tools read secret.key or daemon.json (the original chain)",
    { timeout: 180_000 },
    async () => {
      const reads = [
        path.join(dataDir, 'secret.key'),
        path.join(dataDir, 'daemon.json'),
        // From a member's workspace under <data-dir>/workspaces/<name>/ these lead to the data dir itself.
        '../../secret.key',
        '../../daemon.json',
        'data-link/secret.key',
      ]
      // The reported chain: a run in the data dir reading its files by name; then every other way in.
      const attempts = [
        { cwd: dataDir, file: 'secret.key' },
        { cwd: 'data-link', file: 'daemon.json' },
        ...reads.map((file) => ({ cwd: undefined, file })),
      ]
      for (const { cwd, file } of attempts) {
        const submitted = await api<RunJson>('POST', '/api/runs', {
          agent: 'builtin',
          prompt: `TOOL=read_file FILE=${file}`,
          ...(cwd !== undefined && { cwd }),
        })
        if (cwd !== undefined && submitted.status === 400) continue
        expect(submitted.status, JSON.stringify(submitted.json)).toBe(201)
        const run = await waitForStatus<RunJson>(submitted.json.id)
        const events = await fetch(`${daemon.url}/api/runs/${run.id}/events`, {
          headers: { authorization: `Bearer ${memberPat}`, 'last-event-id': '0' },
          signal: AbortSignal.timeout(30_000),
        }).then((response) => response.text())
        expect(events, file).toContain('"tool-result"')
        expectNoSecret(events)
        const conversation = await api<unknown>('GET', `/api/conversations/${run.conversationId}`)
        expectNoSecret(JSON.stringify(conversation.json))
      }
      const client = await connect(memberPat)
      for (const file of reads) {
        const answer = await call(client, 'read_file', { path: file })
        expect(answer.isError, `${file}: ${answer.text}`).toBe(true)
        expectNoSecret(answer.text)
      }
      const listing = await call(client, 'list_files', { path: '.' })
      expectNoSecret(listing.text)
    },
  )

  it(
    "puts a member's run in place into a worktree of its own; the operator's checkout is unchanged",
    { timeout: 180_000 },
    async () => {
      const head = gitIn(project, 'rev-parse', 'HEAD')
      const submitted = await api<RunJson>('POST', '/api/runs', {
        agent: 'cursor-agent',
        prompt: 'FILE=member.txt',
        isolate: false,
      })
      expect(submitted.status, JSON.stringify(submitted.json)).toBe(201)
      const run = await waitForStatus<RunJson>(submitted.json.id)
      expect(run.status, run.reason ?? '').toBe('succeeded')
      expect(run.cwd.startsWith(`${dataDir}${path.sep}workspaces${path.sep}`)).toBe(true)
      expect(existsSync(path.join(run.cwd, 'member.txt'))).toBe(true)
      expect(existsSync(path.join(project, 'member.txt'))).toBe(false)
      expect(gitIn(project, 'status', '--porcelain')).toBe('')
      expect(gitIn(project, 'rev-parse', 'HEAD')).toBe(head)
      expect(gitIn(project, 'branch', '--show-current')).toBe('main')

      // The owner keeps working in place, as before.
      const owned = await asOwner.api<RunJson>('POST', '/api/runs', {
        agent: 'cursor-agent',
        prompt: 'FILE=owner.txt',
      })
      const ownerRun = await asOwner.waitForStatus<RunJson>(owned.json.id)
      expect(ownerRun.status, ownerRun.reason ?? '').toBe('succeeded')
      expect(ownerRun.cwd).toBe(project)
      expect(existsSync(path.join(project, 'owner.txt'))).toBe(true)
      await rm(path.join(project, 'owner.txt'))
    },
  )

  it("runs a member's MCP workspace tools in the member's own workspace, never the checkout", async () => {
    const client = await connect(memberApprovePat)
    const proposed = await call(client, 'write_file', { path: 'from-mcp.txt', content: 'member\n' })
    expect(proposed.isError, proposed.text).toBe(false)
    const actionId = /Action (act_\w+)/.exec(proposed.text)![1]!
    const committed = await call(client, 'commit_proposal', { actionId })
    expect(committed.isError, committed.text).toBe(false)
    expect(existsSync(path.join(project, 'from-mcp.txt'))).toBe(false)
    expect(gitIn(project, 'status', '--porcelain')).toBe('')
    const workspaces = (await api<{ path: string; branch: string | null }[]>('GET', '/api/workspaces')).json
    const own = workspaces.find((workspace) => workspace.branch?.startsWith('hangar/usr_'))
    expect(own, JSON.stringify(workspaces)).toBeDefined()
    expect(await readFile(path.join(own!.path, 'from-mcp.txt'), 'utf8')).toBe('member\n')
    const read = await call(client, 'read_file', { path: 'from-mcp.txt' })
    expect(read.text).toContain('member')
  })

  // Issue 17 item 1: "A PAT cannot create a session or another token" — on every path there is.
  it('never lets a PAT mint a token or a session', async () => {
    const tokensBefore = ((await (await withCookie('GET', '/api/tokens')).json()) as unknown[]).length
    const asPat = (method: string, route: string, body?: unknown) =>
      fetch(`${daemon.url}${route}`, {
        method,
        headers: {
          authorization: `Bearer ${memberApprovePat}`,
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      })
    const attempts: [string, Response, number][] = [
      ['POST /api/tokens', await asPat('POST', '/api/tokens', { name: 'more' }), 403],
      [
        'POST /api/tokens (approve)',
        await asPat('POST', '/api/tokens', { name: 'x', scopes: ['approve'] }),
        403,
      ],
      ['GET /api/tokens', await asPat('GET', '/api/tokens'), 403],
      // A PAT is not a sign-in link, whether it is sent as the link or as the caller.
      ['POST /api/login { token: PAT }', await asPat('POST', '/api/login', { token: memberApprovePat }), 401],
      ['POST /api/logout', await asPat('POST', '/api/logout'), 403],
    ]
    for (const [what, response, status] of attempts) {
      expect(response.status, what).toBe(status)
      expect(response.headers.get('set-cookie'), what).toBeNull()
    }
    const bearerAsCookie = await fetch(`${daemon.url}/api/tokens`, {
      method: 'POST',
      headers: {
        cookie: `hangar_session=${memberApprovePat}`,
        origin: daemon.url,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name: 'via-cookie' }),
    })
    expect(bearerAsCookie.status).toBe(401)
    // Over MCP there is no tool that makes one, and a run started with a PAT does not either.
    const client = await connect(memberApprovePat)
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name).filter((name) => /token|session|login|user/i.test(name))).toEqual(
      [],
    )
    const tokensAfter = ((await (await withCookie('GET', '/api/tokens')).json()) as unknown[]).length
    expect(tokensAfter).toBe(tokensBefore)
  })
})
