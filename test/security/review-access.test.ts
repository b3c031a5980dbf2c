// Issue 22, the attacks: review and land go through one service that checks who may touch a workspace.
// Over REST and MCP, on both engines: another user's workspace is not found (diff, review, land); a member
// whose project grant was revoked can no longer diff, comment on or land their own workspace; landing
// needs the `approve` scope (MCP offers land_workspace only with it). The owner's repository is untouched.
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../src/core/api-types.js'
import type { User } from '../../src/store/repositories/users-repository.js'
import { gitIn } from '../helpers/git-fixture.js'
import { gitRepo, type InProcessDaemon, startInProcessDaemon } from '../helpers/in-process-daemon.js'
import { STORE_ENGINES } from '../helpers/store-engines.js'

interface ErrorJson {
  error: { code: string; message: string }
}

describe.each(STORE_ENGINES)('review and land access ($name)', { timeout: 120_000 }, (engine) => {
  let daemon: InProcessDaemon
  let mallory: User
  let apiToken: string
  let approveToken: string
  let project: Project
  let repo: string
  let ownersWorkspace: string
  let mallorysWorkspace: string
  const clients: Client[] = []

  async function mcpFor(token: string): Promise<Client> {
    const client = new Client({ name: 'review-access', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${daemon.url}/api/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    )
    clients.push(client)
    return client
  }

  async function call(client: Client, name: string, args: Record<string, unknown>) {
    const result = await client.callTool({ name, arguments: args })
    const text = (result.content as { text?: string }[]).map((block) => block.text ?? '').join('\n')
    return { isError: result.isError === true, text }
  }

  async function workspaceOf(user: User): Promise<string> {
    const conversation = await daemon.runtime.store.forUser(user.id).conversations.create({
      title: `${user.name}'s`,
      profile: 'builtin',
      project: project.name,
      projectId: project.id,
    })
    const workspace = await daemon.runtime.workspaces.forConversation(user.id, conversation.id)
    await writeFile(path.join(workspace.path, 'README.md'), `changed by ${user.name}\n`)
    return workspace.id
  }

  const repoState = () => ({
    head: gitIn(repo, 'rev-parse', 'HEAD'),
    status: gitIn(repo, 'status', '--porcelain'),
    branches: gitIn(repo, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads/main'),
  })

  beforeAll(async () => {
    daemon = await startInProcessDaemon(engine, 'hangar-review-access-')
    repo = path.join(daemon.root, 'shared')
    await mkdir(repo)
    gitRepo(repo)
    gitIn(repo, 'branch', '-M', 'main')
    await writeFile(path.join(repo, 'README.md'), 'hello\n')
    gitIn(repo, 'add', '-A')
    gitIn(repo, 'commit', '-q', '-m', 'readme')
    project = (await daemon.api<Project>('POST', '/api/projects', { path: repo })).json
    mallory = await daemon.runtime.store.users.create({ name: 'mallory', role: 'member' })
    await daemon.api('PUT', `/api/projects/${project.id}/members/${mallory.id}`)
    apiToken = await daemon.tokenFor(mallory)
    approveToken = (
      await daemon.runtime.auth.createToken('system', mallory.id, { name: 'approve', scopes: ['approve'] })
    ).token
    ownersWorkspace = await workspaceOf(daemon.runtime.owner)
    mallorysWorkspace = await workspaceOf(mallory)
  })
  afterAll(async () => {
    for (const client of clients) await client.close()
    await daemon?.close()
  })

  it("answers another user's workspace as not found over REST and MCP, and leaves the repository alone", async () => {
    const before = repoState()
    const routes: [string, string, unknown?][] = [
      ['GET', `/api/workspaces/${ownersWorkspace}/diff`],
      ['GET', `/api/workspaces/${ownersWorkspace}/review`],
      [
        'POST',
        `/api/workspaces/${ownersWorkspace}/review`,
        { comments: [{ path: 'README.md', startLine: 1, endLine: 1, body: 'x' }] },
      ],
      ['POST', `/api/workspaces/${ownersWorkspace}/land`, {}],
      ['POST', `/api/workspaces/${ownersWorkspace}/resolve-conflicts`, {}],
    ]
    for (const [method, route, body] of routes) {
      for (const token of [apiToken, approveToken]) {
        const answer = await daemon.api<ErrorJson>(method, route, body, token)
        expect([route, answer.status, answer.json.error.code]).toEqual([route, 404, 'not_found'])
      }
    }
    const mcp = await mcpFor(approveToken)
    for (const [tool, args] of [
      ['diff_workspace', {}],
      ['review_workspace', { comments: [{ path: 'README.md', startLine: 1, endLine: 1, body: 'x' }] }],
      ['land_workspace', {}],
    ] as const) {
      const result = await call(mcp, tool, { workspaceId: ownersWorkspace, ...args })
      expect(result.isError).toBe(true)
      expect(result.text).toContain(`no workspace ${ownersWorkspace}`)
    }
    expect(repoState()).toEqual(before)
  })

  it('lands only with a session or the approve scope; MCP offers land_workspace only then', async () => {
    const before = repoState()
    const refused = await daemon.api<ErrorJson>(
      'POST',
      `/api/workspaces/${mallorysWorkspace}/land`,
      {},
      apiToken,
    )
    expect([refused.status, refused.json.error.code]).toEqual([403, 'forbidden'])
    expect(refused.json.error.message).toContain('approve scope')
    const both = await daemon.api<ErrorJson>(
      'POST',
      `/api/workspaces/${mallorysWorkspace}/land`,
      { squash: true, rebase: true },
      approveToken,
    )
    expect([both.status, both.json.error.code]).toEqual([400, 'invalid_request'])
    const plain = await mcpFor(apiToken)
    const names = (await plain.listTools()).tools.map((tool) => tool.name)
    expect(names).toContain('diff_workspace')
    expect(names).not.toContain('land_workspace')
    expect(repoState()).toEqual(before)
    const diff = await call(plain, 'diff_workspace', { workspaceId: mallorysWorkspace, stat: true })
    expect(diff.isError).toBe(false)
    expect(diff.text).toContain('README.md')
  })

  it('refuses diff, review and land of their own workspace once the project is revoked', async () => {
    await daemon.api('DELETE', `/api/projects/${project.id}/members/${mallory.id}`)
    const before = repoState()
    for (const [method, route, body] of [
      ['GET', `/api/workspaces/${mallorysWorkspace}/diff`],
      [
        'POST',
        `/api/workspaces/${mallorysWorkspace}/review`,
        { comments: [{ path: 'README.md', startLine: 1, endLine: 1, body: 'x' }] },
      ],
      ['POST', `/api/workspaces/${mallorysWorkspace}/land`, {}],
    ] as [string, string, unknown?][]) {
      const answer = await daemon.api<ErrorJson>(method, route, body, approveToken)
      expect([route, answer.status, answer.json.error.code]).toEqual([route, 403, 'forbidden'])
    }
    const mcp = await mcpFor(approveToken)
    for (const tool of ['diff_workspace', 'land_workspace']) {
      const result = await call(mcp, tool, { workspaceId: mallorysWorkspace })
      expect(result.isError).toBe(true)
      expect(result.text).toContain('not granted')
    }
    expect(repoState()).toEqual(before)
    expect(await daemon.runtime.store.forUser(mallory.id).runs.list()).toEqual([])
  })
})
