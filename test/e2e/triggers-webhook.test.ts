// Inbound webhook triggers end to end on a daemon in this process (SQLite, its run scheduler started, the
// built-in agent on the mock model): a signed GitHub-style `issues` labeled delivery starts a run in the
// trigger's project with the rendered prompt, and its report lands as a comment on a fake GitHub API
// (loopback, checking the token and path); a bad signature, a replay or a filtered delivery starts none.
// Members: no trigger in a project they cannot use, none that runs as someone else, and a fire after
// their access was revoked fails with its reason.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../src/core/api-types.js'
import { signBody } from '../../src/triggers/webhook-signature.js'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { gitRepo, type InProcessDaemon, startInProcessDaemon } from '../helpers/in-process-daemon.js'
import { STORE_ENGINES } from '../helpers/store-engines.js'

const GITHUB_TOKEN = 'ghp_test_token_0123456789abcdef'

interface FakeGithub {
  url: string
  comments: { path: string; authorization: string | undefined; body: { body: string } }[]
  close(): Promise<void>
}

async function startFakeGithub(): Promise<FakeGithub> {
  const comments: FakeGithub['comments'] = []
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      if (request.headers.authorization !== `Bearer ${GITHUB_TOKEN}`) {
        response.writeHead(401).end('{"message":"Bad credentials"}')
        return
      }
      if (
        request.method !== 'POST' ||
        !/^\/repos\/[^/]+\/[^/]+\/issues\/\d+\/comments$/.test(request.url ?? '')
      ) {
        response.writeHead(404).end('{"message":"Not Found"}')
        return
      }
      comments.push({
        path: request.url!,
        authorization: request.headers.authorization,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as { body: string },
      })
      response.writeHead(201, { 'content-type': 'application/json' }).end('{"id":1}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    comments,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const labeledEvent = (label: string) => ({
  action: 'labeled',
  label: { name: label },
  repository: { full_name: 'acme/widgets' },
  issue: { number: 42, title: 'Make the widget blue', body: 'It is red today.' },
})

describe('webhook triggers', { timeout: 180_000 }, () => {
  const engine = STORE_ENGINES.find((candidate) => candidate.name === 'sqlite')!
  let mock: MockModelServer
  let github: FakeGithub
  let daemon: InProcessDaemon
  let alpha: Project
  let beta: Project

  beforeAll(async () => {
    mock = await startMockModelServer()
    github = await startFakeGithub()
    daemon = await startInProcessDaemon(engine, 'hangar-triggers-hook-', {
      configText: [
        'services:',
        `  github: { url: "${github.url}", auth: { bearerEnv: GH_REPORT_TOKEN } }`,
        'triggers: { allowPrivateNetworks: true }',
      ].join('\n'),
      env: {
        ANTHROPIC_API_KEY: 'sk-ant-test-triggers-0123456789',
        ANTHROPIC_BASE_URL: mock.url,
        GH_REPORT_TOKEN: GITHUB_TOKEN,
      },
    })
    daemon.runtime.scheduler.start()
    for (const name of ['alpha', 'beta']) {
      const directory = path.join(daemon.root, name)
      await mkdir(directory)
      gitRepo(directory)
      const added = await daemon.api<Project>('POST', '/api/projects', { path: directory })
      expect(added.status, JSON.stringify(added.json)).toBe(201)
      if (name === 'alpha') alpha = added.json
      else beta = added.json
    }
  })
  afterAll(async () => {
    await daemon?.runtime.scheduler.stop()
    await daemon?.close()
    await github?.close()
    await mock?.close()
  })

  async function deliver(
    hook: { url: string; secret: string },
    payload: unknown,
    options: { delivery: string; event?: string; secret?: string; generic?: boolean },
  ) {
    const body = JSON.stringify(payload)
    const signature = signBody(options.secret ?? hook.secret, body)
    const headers: Record<string, string> = options.generic
      ? {
          'x-hangar-signature-256': signature,
          'x-hangar-delivery': options.delivery,
          'x-hangar-event': options.event ?? 'issues',
        }
      : {
          'x-hub-signature-256': signature,
          'x-github-delivery': options.delivery,
          'x-github-event': options.event ?? 'issues',
        }
    const response = await fetch(`${daemon.url}${hook.url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    })
    return { status: response.status, json: (await response.json()) as Record<string, unknown> }
  }

  it('starts a run in the right project from a signed labeled issue, and reports on the issue', async () => {
    const created = await daemon.api<{ id: string; url: string; secret: string }>('POST', '/api/triggers', {
      name: 'issue-agent',
      kind: 'webhook',
      projectId: beta.id,
      agent: 'builtin',
      prompt: 'Issue: {{issue.title}}\n\n{{issue.body}}',
      filter: { event: 'issues', action: 'labeled', label: 'agent' },
      report: { type: 'github' },
    })
    expect(created.status, JSON.stringify(created.json)).toBe(201)
    expect(created.json.url).toBe(`/api/hooks/${created.json.id}`)
    expect(created.json.secret).toMatch(/^whsec_/)
    const hook = { url: created.json.url, secret: created.json.secret }
    // The secret is shown once: never in a listing or a read.
    const listed = await daemon.api<{ triggers: unknown[] }>('GET', '/api/triggers')
    expect(JSON.stringify(listed.json)).not.toContain(hook.secret)
    expect(JSON.stringify((await daemon.api('GET', `/api/triggers/${created.json.id}`)).json)).not.toContain(
      hook.secret,
    )

    const runsBefore = (await daemon.runtime.store.forUser(daemon.runtime.owner.id).runs.list()).length
    // A bad signature: 401, nothing started, nothing recorded.
    const forged = await deliver(hook, labeledEvent('agent'), { delivery: 'd-forged', secret: 'whsec_wrong' })
    expect(forged.status).toBe(401)
    expect(forged.json).toMatchObject({ error: { code: 'unauthorized' } })
    // A delivery the filter refuses: recorded as filtered, nothing started.
    const other = await deliver(hook, labeledEvent('bug'), { delivery: 'd-bug' })
    expect(other.status).toBe(202)
    expect(other.json).toMatchObject({ fired: false, status: 'filtered', reason: 'label bug is not agent' })

    const accepted = await deliver(hook, labeledEvent('agent'), { delivery: 'd-1' })
    expect(accepted.status, JSON.stringify(accepted.json)).toBe(202)
    expect(accepted.json).toMatchObject({ fired: true })
    const runId = accepted.json.runId as string
    // A replay of the same delivery (even re-signed): a duplicate, nothing started.
    const replay = await deliver(hook, labeledEvent('agent'), { delivery: 'd-1' })
    expect(replay).toEqual({ status: 200, json: { fired: false, duplicate: true } })

    const scope = daemon.runtime.store.forUser(daemon.runtime.owner.id)
    expect((await scope.runs.list()).length).toBe(runsBefore + 1)
    const run = (await scope.runs.get(runId))!
    expect(run.prompt).toBe('Issue: Make the widget blue\n\nIt is red today.')
    expect(run.projectId).toBe(beta.id)
    expect((await scope.conversations.get(run.conversationId!))?.projectId).toBe(beta.id)
    const ended = await waitFor('the run to end', async () => {
      const current = await scope.runs.get(runId)
      return current && ['succeeded', 'failed', 'cancelled', 'awaiting_confirmation'].includes(current.status)
        ? current
        : undefined
    })
    expect(ended.status, ended.reason ?? '').toBe('succeeded')

    const comment = await waitFor('the report comment', async () => github.comments[0])
    expect(comment.path).toBe('/repos/acme/widgets/issues/42/comments')
    expect(comment.body.body).toContain(`run ${runId} succeeded`)
    // The summary is the agent's final text (the mock model echoes the prompt).
    expect(comment.body.body).toContain('mock reply to: Issue: Make the widget blue')
    expect(comment.body.body).toContain(`${daemon.url}/runs/${runId}`)
    expect(github.comments).toHaveLength(1)

    const fires = await daemon.api<{
      fires: {
        slot: string
        status: string
        runId: string | null
        reportStatus: string | null
        runStatus: string | null
      }[]
    }>('GET', `/api/triggers/${created.json.id}/fires`)
    expect(fires.json.fires.map((fire) => [fire.slot, fire.status])).toEqual(
      expect.arrayContaining([
        ['delivery:d-1', 'started'],
        ['delivery:d-bug', 'filtered'],
      ]),
    )
    expect(fires.json.fires).toHaveLength(2)
    await waitFor('the report status', async () => {
      const listedFires = (
        await daemon.api<typeof fires.json>('GET', `/api/triggers/${created.json.id}/fires`)
      ).json
      const fire = listedFires.fires.find((candidate) => candidate.runId === runId)
      return fire?.reportStatus === 'sent' ? fire : undefined
    })
  })

  it('takes the generic X-Hangar-Signature-256 form and runs a trigger by hand', async () => {
    const created = await daemon.api<{ id: string; url: string; secret: string }>('POST', '/api/triggers', {
      name: 'generic',
      kind: 'webhook',
      projectId: alpha.id,
      agent: 'builtin',
      prompt: 'Deploy {{service}}',
    })
    expect(created.status).toBe(201)
    const accepted = await deliver(
      created.json,
      { service: 'api' },
      { delivery: 'g-1', generic: true, event: 'deploy' },
    )
    expect(accepted.status, JSON.stringify(accepted.json)).toBe(202)
    expect(accepted.json.fired).toBe(true)
    const scope = daemon.runtime.store.forUser(daemon.runtime.owner.id)
    expect((await scope.runs.get(accepted.json.runId as string))?.prompt).toBe('Deploy api')
    await waitFor('the run to end', async () => {
      const run = await scope.runs.get(accepted.json.runId as string)
      return run && !['queued', 'preparing', 'running', 'finalizing'].includes(run.status) ? run : undefined
    })
    const manual = await daemon.api<{ fired: boolean; runId: string }>(
      'POST',
      `/api/triggers/${created.json.id}/run`,
    )
    expect(manual.status).toBe(202)
    expect(manual.json.fired).toBe(true)
    // Unknown hooks answer as a bad signature does.
    expect((await deliver({ url: '/api/hooks/trg_nope', secret: 'x' }, {}, { delivery: 'n' })).status).toBe(
      401,
    )
  })

  it("refuses a member's trigger in a project they cannot use, or running as someone else", async () => {
    const member = await daemon.runtime.store.users.create({ name: 'mallory', role: 'member' })
    const token = await daemon.tokenFor(member)
    const grant = await daemon.api('PUT', `/api/projects/${alpha.id}/members/${member.id}`)
    expect(grant.status).toBe(200)
    const base = { kind: 'schedule', cron: '0 3 * * *', agent: 'builtin', prompt: 'hi' }
    const notGranted = await daemon.api<{ error: { code: string } }>(
      'POST',
      '/api/triggers',
      { ...base, name: 'sneaky', projectId: beta.id },
      token,
    )
    expect(notGranted.status).toBe(404)
    const asOwner = await daemon.api<{ error: { code: string; message: string } }>(
      'POST',
      '/api/triggers',
      { ...base, name: 'impostor', projectId: alpha.id, userId: daemon.runtime.owner.id },
      token,
    )
    expect(asOwner.status).toBe(400)
    expect(asOwner.json.error.message).toMatch(/userId/)
    // Another user's conversation is not found either.
    const ownerConversation = await daemon.api<{ id: string }>('POST', '/api/conversations', {
      projectId: beta.id,
      agent: 'builtin',
    })
    const intoOwners = await daemon.api(
      'POST',
      '/api/triggers',
      { ...base, name: 'hijack', conversationId: ownerConversation.json.id },
      token,
    )
    expect(intoOwners.status).toBe(404)

    // A trigger in a granted project runs as the member; after the grant is revoked, its fire fails.
    const mine = await daemon.api<{ id: string; userId: string }>(
      'POST',
      '/api/triggers',
      { ...base, name: 'mine', projectId: alpha.id },
      token,
    )
    expect(mine.status, JSON.stringify(mine.json)).toBe(201)
    expect(mine.json.userId).toBe(member.id)
    // The owner does not see (or run) the member's trigger.
    expect((await daemon.api('POST', `/api/triggers/${mine.json.id}/run`)).status).toBe(404)
    const revoke = await daemon.api('DELETE', `/api/projects/${alpha.id}/members/${member.id}`)
    expect(revoke.status).toBe(200)
    const fired = await daemon.api<{ fired: boolean; status: string; reason: string }>(
      'POST',
      `/api/triggers/${mine.json.id}/run`,
      undefined,
      token,
    )
    expect(fired.json).toMatchObject({ fired: false, status: 'failed' })
    expect(fired.json.reason).toMatch(/no project/)
    const fires = await daemon.api<{ fires: { status: string; reason: string }[] }>(
      'GET',
      `/api/triggers/${mine.json.id}/fires`,
      undefined,
      token,
    )
    expect(fires.json.fires[0]).toMatchObject({ status: 'failed' })
    expect((await daemon.runtime.store.forUser(member.id).runs.list()).length).toBe(0)
  })

  // Near the end: it leaves this client limited for the rest of the window (the 413 comes before any auth).
  it('limits a client sending bad signatures like failed sign-ins (429)', async () => {
    const created = await daemon.api<{ id: string; url: string; secret: string }>('POST', '/api/triggers', {
      name: 'flooded',
      kind: 'webhook',
      projectId: alpha.id,
      agent: 'builtin',
      prompt: 'x',
    })
    // Earlier tests' bad signatures may still be in the window: at most 21 more are answered 401.
    const statuses: number[] = []
    while (statuses.length < 22 && statuses.at(-1) !== 429)
      statuses.push(
        (await deliver(created.json, {}, { delivery: `f-${statuses.length}`, secret: 'whsec_wrong' })).status,
      )
    expect(statuses.at(-1)).toBe(429)
    expect(statuses.slice(0, -1).every((status) => status === 401)).toBe(true)
    // A limited client is refused even with a good signature (the limit hides the oracle).
    expect((await deliver(created.json, {}, { delivery: 'f-good' })).status).toBe(429)
    expect(await daemon.runtime.store.triggers.fires(created.json.id)).toEqual([])
  })

  // After the others: the daemon closes the connection it refused mid-upload.
  it('refuses a body over 1 MiB with 413 before looking at it', async () => {
    const response = await fetch(`${daemon.url}/api/hooks/trg_any`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ padding: 'x'.repeat(1024 * 1024 + 10) }),
    })
    expect(response.status).toBe(413)
  })
})
