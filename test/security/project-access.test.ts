// Issue 20 item 1, the attacks first: a member may only make conversations and runs in projects the owner
// granted them. Over REST and over MCP (start_run), on both engines, a member naming an ungranted project,
// aiming a run's directory into one, or continuing a conversation whose project was revoked is refused —
// and nothing is left behind: no conversation, run, message or workspace of theirs.
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Conversation, Project, Run } from '../../src/core/api-types.js'
import type { User } from '../../src/store/repositories/users-repository.js'
import { gitRepo, type InProcessDaemon, startInProcessDaemon } from '../helpers/in-process-daemon.js'
import { STORE_ENGINES } from '../helpers/store-engines.js'

interface ErrorJson {
  error: { code: string; message: string }
}

describe.each(STORE_ENGINES)('project access of members ($name)', { timeout: 120_000 }, (engine) => {
  let daemon: InProcessDaemon
  let mallory: User
  let token: string
  let mcp: Client
  let granted: Project
  let secret: Project

  beforeAll(async () => {
    daemon = await startInProcessDaemon(engine, 'hangar-project-access-')
    mallory = await daemon.runtime.store.users.create({ name: 'mallory', role: 'member' })
    token = await daemon.tokenFor(mallory)
    for (const name of ['shared', 'secret']) {
      await mkdir(path.join(daemon.root, name))
      gitRepo(path.join(daemon.root, name))
    }
    granted = (await daemon.api<Project>('POST', '/api/projects', { path: path.join(daemon.root, 'shared') }))
      .json
    secret = (await daemon.api<Project>('POST', '/api/projects', { path: path.join(daemon.root, 'secret') }))
      .json
    await daemon.api('PUT', `/api/projects/${granted.id}/members/${mallory.id}`)
    mcp = new Client({ name: 'project-access', version: '1.0.0' })
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${daemon.url}/api/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    )
  })
  afterAll(async () => {
    await mcp?.close()
    await daemon?.close()
  })

  const asMallory = <T>(method: string, route: string, body?: unknown) =>
    daemon.api<T>(method, route, body, token)

  /** What mallory has in the store: nothing, after a refusal. */
  async function malloryHas() {
    const scope = daemon.runtime.store.forUser(mallory.id)
    return {
      conversations: (await scope.conversations.list()).length,
      runs: (await scope.runs.list()).length,
      workspaces: (await scope.workspaces.list()).length,
    }
  }

  async function startRun(input: Record<string, unknown>) {
    const result = await mcp.callTool({
      name: 'start_run',
      arguments: { agent: 'builtin', prompt: 'p', ...input },
    })
    const text = (result.content as { type: string; text?: string }[])
      .map((block) => block.text ?? '')
      .join('\n')
    return { isError: result.isError === true, text }
  }

  it('refuses a conversation in an ungranted project over REST, and makes nothing', async () => {
    const before = await malloryHas()
    const named = await asMallory<ErrorJson>('POST', '/api/conversations', {
      agent: 'builtin',
      projectId: secret.id,
    })
    expect(named.status).toBe(404)
    expect(named.json.error).toMatchObject({
      code: 'not_found',
      message: expect.stringContaining(`no project ${secret.id}`),
    })
    // Several projects, none named: the error names only the caller's.
    const unnamed = await asMallory<ErrorJson>('POST', '/api/conversations', { agent: 'builtin' })
    expect(unnamed.status).toBe(400)
    expect(unnamed.json.error.message).toContain(granted.id)
    expect(unnamed.json.error.message).not.toContain(secret.id)
    expect(await malloryHas()).toEqual(before)
  })

  it('refuses a run in an ungranted project over REST, by projectId or by cwd, and makes nothing', async () => {
    const before = await malloryHas()
    const byId = await asMallory<ErrorJson>('POST', '/api/runs', {
      agent: 'builtin',
      prompt: 'p',
      projectId: secret.id,
    })
    expect(byId.status).toBe(404)
    const byCwd = await asMallory<ErrorJson>('POST', '/api/runs', {
      agent: 'builtin',
      prompt: 'p',
      cwd: secret.path,
    })
    expect(byCwd.status).toBe(403)
    expect(byCwd.json.error.message).toBe(
      `project ${secret.name} is not granted to you; ask the owner to grant it (PUT /api/projects/:id/members/:userId)`,
    )
    // The daemon's own directory is no project: a member may not work there once projects exist.
    const outside = await asMallory<ErrorJson>('POST', '/api/runs', { agent: 'builtin', prompt: 'p' })
    expect(outside.status).toBe(403)
    expect(outside.json.error.message).toContain('is in no project granted to you')
    expect(await malloryHas()).toEqual(before)
  })

  it('refuses the same over MCP start_run, and makes nothing', async () => {
    const before = await malloryHas()
    const byId = await startRun({ projectId: secret.id })
    expect(byId.isError).toBe(true)
    expect(byId.text).toContain(`no project ${secret.id}`)
    const byCwd = await startRun({ cwd: secret.path })
    expect(byCwd.isError).toBe(true)
    expect(byCwd.text).toContain('is not granted to you')
    // The MCP workspace tools work in a worktree of the daemon's directory, which is no project of hers.
    const files = await mcp.callTool({ name: 'list_files', arguments: {} })
    expect(files.isError).toBe(true)
    expect(JSON.stringify(files.content)).toContain('is in no project granted to you')
    const listed = await mcp.callTool({ name: 'list_projects', arguments: {} })
    const text = (listed.content as { text?: string }[]).map((block) => block.text ?? '').join('\n')
    expect(text).toContain(granted.id)
    expect(text).not.toContain(secret.id)
    expect(await malloryHas()).toEqual(before)
  })

  it('lets the member work in a granted project, in a workspace of their own', async () => {
    const conversation = await asMallory<Conversation>('POST', '/api/conversations', {
      agent: 'builtin',
      projectId: granted.id,
    })
    expect(conversation.status).toBe(201)
    const run = await asMallory<Run>('POST', '/api/runs', {
      agent: 'builtin',
      prompt: 'p',
      projectId: granted.id,
    })
    expect(run.status).toBe(201)
    expect(run.json.projectId).toBe(granted.id)
    // Never in place in the owner's checkout: a one-off workspace under the data dir.
    expect(run.json.cwd.startsWith(granted.path)).toBe(false)
    await daemon.runtime.scheduler.cancel(mallory.id, run.json.id)
    const viaMcp = await startRun({ projectId: granted.id })
    expect(viaMcp.isError, viaMcp.text).toBe(false)
  })

  it('refuses a message to a conversation whose project was revoked, and makes nothing', async () => {
    const conversation = (
      await asMallory<Conversation>('POST', '/api/conversations', { agent: 'builtin', projectId: granted.id })
    ).json
    await daemon.api('DELETE', `/api/projects/${granted.id}/members/${mallory.id}`)
    const before = await malloryHas()
    const message = await asMallory<ErrorJson>('POST', `/api/conversations/${conversation.id}/messages`, {
      text: 'hi',
    })
    expect(message.status).toBe(403)
    expect(message.json.error.message).toContain(`project ${granted.name} is not granted to you`)
    const viaMcp = await startRun({ conversationId: conversation.id })
    expect(viaMcp.isError).toBe(true)
    expect(viaMcp.text).toContain('is not granted to you')
    expect(await malloryHas()).toEqual(before)
    expect(
      await daemon.runtime.store.forUser(mallory.id).conversations.listMessages(conversation.id),
    ).toEqual([])
  })
})
