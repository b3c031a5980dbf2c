// Compare attempts over REST and MCP, on both engines: who may start, see and pick attempts (a member
// without the project: nobody's attempts, not even their own once revoked), bad input answered 400 with
// nothing made, and the project's check setting. (The built-in agent has no model here: its runs fail at
// once; running attempts is attempts-service.test.ts's and attempts-real-clis.test.ts's part.)
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AttemptGroup, Project } from '../../src/core/api-types.js'
import { type InProcessDaemon, startInProcessDaemon } from '../helpers/in-process-daemon.js'
import { STORE_ENGINES } from '../helpers/store-engines.js'

interface ErrorBody {
  error: { code: string; message: string }
}

describe.each(STORE_ENGINES)('attempts over REST and MCP ($name)', (engine) => {
  let daemon: InProcessDaemon
  let project: Project
  let memberToken: string
  let memberId: string
  const clients: Client[] = []

  beforeAll(async () => {
    daemon = await startInProcessDaemon(engine, 'hangar-attempts-access-')
    project = (await daemon.api<Project>('POST', '/api/projects', { path: daemon.daemonDir })).json
    const member = await daemon.runtime.store.users.create({ name: 'member', role: 'member' })
    memberId = member.id
    memberToken = await daemon.tokenFor(member)
  })
  afterAll(async () => {
    for (const client of clients) await client.close()
    await daemon?.close()
  })

  async function mcp(token: string, name: string, input: Record<string, unknown>) {
    const client = new Client({ name: 'attempts-e2e', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${daemon.url}/api/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    )
    clients.push(client)
    const result = await client.callTool({ name, arguments: input })
    const text = (result.content as { text?: string }[]).map((block) => block.text ?? '').join('\n')
    return { isError: result.isError === true, text, value: result.structuredContent }
  }

  /** Reads an SSE stream of the owner's until an event of `type` arrives (the stream is then closed). */
  async function firstEvent(route: string, type: string): Promise<Record<string, unknown>> {
    const token = await daemon.tokenFor(daemon.runtime.owner)
    for (;;) {
      const controller = new AbortController()
      const response = await fetch(`${daemon.url}${route}`, {
        headers: { authorization: `Bearer ${token}` },
        signal: controller.signal,
      })
      const decoder = new TextDecoder()
      let buffer = ''
      const stop = setTimeout(() => controller.abort(), 5000)
      try {
        for await (const chunk of response.body!) {
          buffer += decoder.decode(chunk as Uint8Array, { stream: true })
          for (const line of buffer.split('\n')) {
            if (!line.startsWith('data:')) continue
            const data = JSON.parse(line.slice(5)) as Record<string, unknown>
            if (data.type === type) return data
          }
        }
      } catch {
        // Not there yet: the stream is read again (its check may still run).
      } finally {
        clearTimeout(stop)
        controller.abort()
      }
    }
  }

  const counts = async (userId: string) => ({
    conversations: (await daemon.runtime.store.forUser(userId).conversations.list({ limit: 1000 })).length,
    workspaces: (await daemon.runtime.store.forUser(userId).workspaces.list()).length,
    groups: (await daemon.runtime.store.forUser(userId).attempts.list()).length,
  })

  it("takes the project's check setting (owner only) and snapshots it into new attempts", async () => {
    const patched = await daemon.api<Project>('PATCH', `/api/projects/${project.id}`, { check: 'npm test' })
    expect(patched.status).toBe(200)
    expect(patched.json.check).toBe('npm test')
    const byMember = await daemon.api<ErrorBody>(
      'PATCH',
      `/api/projects/${project.id}`,
      { check: 'rm -rf /' },
      memberToken,
    )
    expect(byMember.status).toBe(403)
    const started = await daemon.api<AttemptGroup>('POST', '/api/attempts', {
      projectId: project.id,
      prompt: 'hello',
      agents: ['builtin', 'builtin'],
    })
    expect(started.status).toBe(201)
    expect(started.json.attempts).toHaveLength(2)
    expect(started.json.attempts[0]).toMatchObject({
      agent: 'builtin',
      check: { command: 'npm test' },
    })
    const shown = await daemon.api<AttemptGroup>('GET', `/api/attempts/${started.json.id}`)
    expect(shown.json.attempts.map((attempt) => attempt.conversationId)).toEqual(
      started.json.attempts.map((attempt) => attempt.conversationId),
    )
    const listed = await daemon.api<{ attempts: AttemptGroup[] }>('GET', '/api/attempts')
    expect(listed.json.attempts.map((group) => group.id)).toContain(started.json.id)
    const cleared = await daemon.api<Project>('PATCH', `/api/projects/${project.id}`, { check: null })
    expect(cleared.json.check).toBeNull()

    // Each attempt's end is an event on its conversation's stream (replayed from the store).
    const conversationId = started.json.attempts[0]!.conversationId
    const event = await firstEvent(`/api/conversations/${conversationId}/events`, 'attempt-finished')
    expect(event).toMatchObject({
      type: 'attempt-finished',
      attemptId: started.json.id,
      conversationId,
      checkStatus: expect.stringMatching(/^(passed|failed|skipped)$/),
    })
  })

  it('answers bad input with 400 and a clear message, and makes nothing', async () => {
    const before = await counts(daemon.runtime.owner.id)
    const cases: [unknown, string][] = [
      [{ projectId: project.id, prompt: 'x', agents: [] }, 'agents: name at least one agent'],
      [{ projectId: project.id, prompt: 'x', agents: Array(9).fill('builtin') }, 'at most 8 agents'],
      [{ projectId: project.id, prompt: 'x', agents: ['builtin', 'no-such-agent'] }, 'unknown agent'],
      [{ projectId: project.id, prompt: 'x', agents: ['builtin'], baseRef: 'nope' }, 'no branch or commit'],
      [{ projectId: project.id, prompt: '', agents: ['builtin'] }, 'the prompt must not be empty'],
    ]
    for (const [body, message] of cases) {
      const response = await daemon.api<ErrorBody>('POST', '/api/attempts', body)
      expect(response.status, message).toBe(400)
      expect(response.json.error.message).toContain(message)
    }
    const viaMcp = await mcp(await daemon.tokenFor(daemon.runtime.owner), 'start_attempts', {
      projectId: project.id,
      prompt: 'x',
      agents: ['no-such-agent'],
    })
    expect(viaMcp.isError).toBe(true)
    expect(viaMcp.text).toContain('unknown agent "no-such-agent"')
    expect(await counts(daemon.runtime.owner.id)).toEqual(before)
  })

  it('lets a member without the project neither start, see nor pick attempts, over REST or MCP', async () => {
    const owners = (await daemon.api<{ attempts: AttemptGroup[] }>('GET', '/api/attempts')).json.attempts[0]!
    const conversationId = owners.attempts[0]!.conversationId
    const body = { projectId: project.id, prompt: 'x', agents: ['builtin'] }
    expect((await daemon.api<ErrorBody>('POST', '/api/attempts', body, memberToken)).status).toBe(404)
    const started = await mcp(memberToken, 'start_attempts', body)
    expect(started.isError).toBe(true)
    expect(started.text).toContain(`no project ${project.id}`)
    expect((await daemon.api('GET', `/api/attempts/${owners.id}`, undefined, memberToken)).status).toBe(404)
    const pick = await daemon.api('POST', `/api/attempts/${owners.id}/pick`, { conversationId }, memberToken)
    expect(pick.status).toBe(404)
    expect((await mcp(memberToken, 'get_attempts', { id: owners.id })).isError).toBe(true)
    const listed = await daemon.api<{ attempts: AttemptGroup[] }>(
      'GET',
      '/api/attempts',
      undefined,
      memberToken,
    )
    expect(listed.json.attempts).toEqual([])
    expect(await counts(memberId)).toEqual({ conversations: 0, workspaces: 0, groups: 0 })

    // Granted, the member starts their own over MCP; revoked, those hide again.
    await daemon.api('PUT', `/api/projects/${project.id}/members/${memberId}`)
    const mine = await mcp(memberToken, 'start_attempts', body)
    expect(mine.isError, mine.text).toBe(false)
    const group = (mine.value as { attempts: AttemptGroup }).attempts
    expect((await daemon.api('GET', `/api/attempts/${group.id}`, undefined, memberToken)).status).toBe(200)
    expect((await mcp(memberToken, 'get_attempts', { id: group.id })).isError).toBe(false)
    // Still not the owner's.
    expect((await daemon.api('GET', `/api/attempts/${owners.id}`, undefined, memberToken)).status).toBe(404)
    await daemon.api('DELETE', `/api/projects/${project.id}/members/${memberId}`)
    expect((await daemon.api('GET', `/api/attempts/${group.id}`, undefined, memberToken)).status).toBe(404)
    const memberPick = await daemon.api(
      'POST',
      `/api/attempts/${group.id}/pick`,
      { conversationId: group.attempts[0]!.conversationId },
      memberToken,
    )
    expect(memberPick.status).toBe(404)
    expect((await mcp(memberToken, 'get_attempts', {})).value).toEqual({ groups: [] })
  })
})
