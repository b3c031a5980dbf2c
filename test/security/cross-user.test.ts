// Issue 17, "what held, and must keep holding": a member of a shared daemon reaches none of the owner's
// objects. The owner makes one of everything (a run awaiting a decision, a conversation with its
// workspace, a profile, provider settings, a token); the member tries every route on their ids over
// REST (PAT and browser session) and MCP, and every list: each answers 404 (or 403 before the lookup),
// no list or error names them, and the owner's objects are unchanged afterwards.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startMockModelServer, type MockModelServer } from '../fixtures/mock-model-server.js'
import { createApiClient } from '../helpers/api-client.js'
import { cleanEnv, type RunningDaemon, runHangar, startDaemon } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

interface Owned {
  runId: string
  actionId: string
  conversationId: string
  conversationRunId: string
  workspaceId: string
  tokenId: string
}

describe('cross-user boundaries', () => {
  let mock: MockModelServer
  let root: string
  let dataDir: string
  let project: string
  let daemon: RunningDaemon
  let ownerToken: string
  let memberToken: string
  let memberCookie: string
  const owned = {} as Owned
  const { api, waitForStatus } = createApiClient(() => ({ url: daemon.url, token: ownerToken }))

  beforeAll(async () => {
    mock = await startMockModelServer()
    root = await makeTempDir('hangar-cross-user-')
    dataDir = path.join(root, 'data')
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
    const env = cleanEnv({
      PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: root,
      ANTHROPIC_API_KEY: 'sk-ant-test-cross-user-0123456789',
      ANTHROPIC_BASE_URL: mock.url,
    })
    daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: project })
    const cliToken = (
      JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string }
    ).token
    const created = await api<{ id: string; token: string }>(
      'POST',
      '/api/tokens',
      { name: 'owner' },
      cliToken,
    )
    ownerToken = created.json.token
    owned.tokenId = created.json.id

    // One of everything, as the owner.
    const run = await api<{ id: string }>('POST', '/api/runs', {
      agent: 'builtin',
      prompt: 'FILE=owner-run.txt',
    })
    expect(run.status).toBe(201)
    owned.runId = run.json.id
    expect((await waitForStatus(owned.runId)).status).toBe('awaiting_confirmation')
    const pending = await api<{ id: string; runId: string }[]>('GET', '/api/actions?status=pending')
    owned.actionId = pending.json.find((action) => action.runId === owned.runId)!.id
    const conversation = await api<{ id: string }>('POST', '/api/conversations', { agent: 'builtin' })
    owned.conversationId = conversation.json.id
    const message = await api<{ id: string }>('POST', `/api/conversations/${owned.conversationId}/messages`, {
      text: 'FILE=owner-conversation.txt',
    })
    owned.conversationRunId = message.json.id
    await waitForStatus(owned.conversationRunId)
    const workspaces = await api<{ id: string; conversationId: string }[]>('GET', '/api/workspaces')
    owned.workspaceId = workspaces.json.find(
      (workspace) => workspace.conversationId === owned.conversationId,
    )!.id
    expect(
      (await api('POST', '/api/profiles', { name: 'owner-profile', definition: { adapter: 'builtin' } }))
        .status,
    ).toBe(201)
    expect(
      (await api('PUT', '/api/settings/providers/openai', { apiKey: 'sk-owner-secret-key-4242' })).status,
    ).toBe(200)

    // The member: invited, signed in through the link, with a PAT of their own.
    const invited = await runHangar(['users', 'add', 'mallory', '--json', '--data-dir', dataDir], {
      env,
      cwd: project,
    })
    const inviteUrl = (JSON.parse(invited.stdout) as { inviteUrl: string }).inviteUrl
    const origin = new URL(daemon.url).origin
    const login = await fetch(`${daemon.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin },
      body: JSON.stringify({ token: inviteUrl.split('#')[1] }),
    })
    expect(login.status).toBe(200)
    memberCookie = /hangar_session=[^;]+/.exec(login.headers.get('set-cookie') ?? '')![0]
    const memberPat = await fetch(`${daemon.url}/api/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: memberCookie, origin },
      body: JSON.stringify({ name: 'mallory' }),
    })
    memberToken = ((await memberPat.json()) as { token: string }).token
  }, 120_000)

  afterAll(async () => {
    await daemon?.stop()
    await mock?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  const ownedStrings = () => [...Object.values(owned), 'owner-profile', '4242', 'owner-run.txt']

  /** The member's request, with their PAT or their browser session. */
  async function asMember(method: string, route: string, via: 'pat' | 'cookie', body?: unknown) {
    const origin = new URL(daemon.url).origin
    const response = await fetch(`${daemon.url}${route}`, {
      method,
      headers: {
        ...(via === 'pat' ? { authorization: `Bearer ${memberToken}` } : { cookie: memberCookie, origin }),
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
    return { status: response.status, text: await response.text() }
  }

  it.each(['pat', 'cookie'] as const)(
    'answers 404 on every route naming the owner’s objects (%s)',
    async (via) => {
      const attempts: [string, string, unknown?][] = [
        ['GET', `/api/runs/${owned.runId}`],
        ['GET', `/api/runs/${owned.runId}/events`],
        ['GET', `/api/runs/${owned.runId}/requests`],
        ['POST', `/api/runs/${owned.runId}/cancel`],
        ['POST', `/api/runs/${owned.runId}/finalize`],
        ['POST', `/api/runs/${owned.runId}/resume`, { prompt: 'go on' }],
        ['POST', '/api/runs', { prompt: 'go on', resumeRunId: owned.runId }],
        ['POST', '/api/runs', { agent: 'builtin', prompt: 'after', dependsOn: [owned.runId] }],
        ['POST', '/api/runs', { agent: 'builtin', prompt: 'join', conversationId: owned.conversationId }],
        ['GET', `/api/conversations/${owned.conversationId}`],
        ['GET', `/api/conversations/${owned.conversationId}/events`],
        ['POST', `/api/conversations/${owned.conversationId}/messages`, { text: 'hi' }],
        ['DELETE', `/api/conversations/${owned.conversationId}`],
        ['POST', `/api/actions/${owned.actionId}/confirm`],
        ['POST', `/api/actions/${owned.actionId}/reject`, { reason: 'no' }],
        ['GET', `/api/workspaces/${owned.workspaceId}`],
        ['DELETE', `/api/workspaces/${owned.workspaceId}`],
        ['GET', '/api/profiles/owner-profile'],
        ['GET', '/api/profiles/owner-profile/feeds'],
        ['DELETE', '/api/profiles/owner-profile'],
        ['DELETE', `/api/tokens/${owned.tokenId}`],
      ]
      for (const [method, route, body] of attempts) {
        const answer = await asMember(method, route, via, body)
        // 403 is a refusal made before any lookup (a PAT may not manage tokens or decide proposals).
        expect([403, 404], `${method} ${route} → ${answer.status} ${answer.text}`).toContain(answer.status)
        for (const secret of ['4242', 'owner-run.txt']) expect(answer.text).not.toContain(secret)
      }
    },
  )

  it.each(['pat', 'cookie'] as const)('lists none of the owner’s objects (%s)', async (via) => {
    const lists = [
      '/api/runs',
      '/api/conversations',
      '/api/actions?status=pending',
      '/api/actions',
      '/api/workspaces',
      '/api/profiles',
      '/api/settings/providers',
      '/api/usage',
      ...(via === 'cookie' ? ['/api/tokens'] : []),
    ]
    for (const route of lists) {
      const answer = await asMember('GET', route, via)
      expect(answer.status, `${route}: ${answer.text}`).toBe(200)
      for (const value of ownedStrings()) expect(answer.text, route).not.toContain(value)
    }
  })

  it('gives an MCP client of the member none of the owner’s runs or proposals', async () => {
    const call = async (id: number, method: string, params: unknown) => {
      const response = await fetch(`${daemon.url}/api/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${memberToken}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
      })
      return response.text()
    }
    await call(1, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'mallory', version: '1' },
    })
    for (const [name, args] of [
      ['get_run', { runId: owned.runId }],
      ['cancel_run', { runId: owned.runId }],
      ['start_run', { prompt: 'go on', resumeRunId: owned.runId }],
      ['list_pending_actions', {}],
    ] as const) {
      const text = await call(2, 'tools/call', { name, arguments: args })
      for (const value of [owned.actionId, 'owner-run.txt', 'FILE=owner'])
        expect(text, name).not.toContain(value)
      if (name !== 'list_pending_actions') expect(text, name).toMatch(/isError|"error"/)
    }
  })

  it('leaves the owner’s objects as they were', async () => {
    expect((await api<{ status: string }>('GET', `/api/runs/${owned.runId}`)).json.status).toBe(
      'awaiting_confirmation',
    )
    const pending = await api<{ id: string }[]>('GET', '/api/actions?status=pending')
    expect(pending.json.map((action) => action.id)).toContain(owned.actionId)
    expect((await api('GET', `/api/conversations/${owned.conversationId}`)).status).toBe(200)
    expect((await api('GET', `/api/workspaces/${owned.workspaceId}`)).status).toBe(200)
    expect((await api('GET', '/api/profiles/owner-profile')).status).toBe(200)
    const tokens = await api<{ id: string; revokedAt: string | null }[]>(
      'GET',
      '/api/tokens',
      undefined,
      ownerToken,
    )
    // Tokens are managed with a session only; the owner's PAT is refused, which is also a fine answer.
    if (tokens.status === 200)
      expect(tokens.json.find((token) => token.id === owned.tokenId)?.revokedAt).toBeNull()
    expect(existsSync(path.join(project, 'owner-run.txt'))).toBe(false)
  })
})
