// The approval state machine on both engines.
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { agentNiceness } from '../adapters/agent-priority.js'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import { createToolRegistry } from '../agent/tools/tool-registry.js'
import type { Proposal, WriteTool } from '../agent/tools/types.js'
import { createWorkspaceTools } from '../agent/tools/workspace-tools.js'
import type { TokenScope } from '../store/repositories/tokens-repository.js'
import type { User } from '../store/repositories/users-repository.js'
import {
  type ActionsService,
  createActionsService,
  type Decider,
  PROPOSAL_TTL_MS,
  queueContinuation,
} from './actions-service.js'

/** The CLI with the store opened directly: the owner in person. */
const local = (user: User): Decider => ({ via: 'local', user })

describe.each(STORE_ENGINES)('actions-service ($name)', (engine) => {
  let testStore: TestStore
  let actions: ActionsService
  let owner: User
  let other: User
  let workspace: string
  let now: Date
  let runId: string
  let conversationId: string
  const tools = createToolRegistry(createWorkspaceTools())

  beforeEach(async () => {
    now = new Date('2026-06-01T00:00:00.000Z')
    testStore = await engine.open({ clock: () => now })
    owner = await testStore.store.users.create({ name: 'owner', role: 'owner' })
    other = await testStore.store.users.create({ name: 'other', role: 'member' })
    workspace = await mkdtemp(path.join(os.tmpdir(), 'hangar-actions-'))
    actions = createActionsService({ store: testStore.store, tools, clock: () => now })
    const scope = testStore.store.forUser(owner.id)
    conversationId = (await scope.conversations.create({ title: 't', profile: 'builtin', project: 'p' })).id
    runId = (
      await scope.runs.create({
        agent: 'builtin',
        adapter: 'builtin',
        prompt: 'p',
        cwd: workspace,
        conversationId,
      })
    ).id
    await scope.conversations.appendMessage(conversationId, {
      role: 'user',
      content: [{ type: 'text', text: 'go' }],
    })
  })
  afterEach(async () => {
    await testStore.dispose()
  })

  async function propose(file = 'a.txt', callId = 'call_1'): Promise<string> {
    await testStore.store.forUser(owner.id).conversations.appendMessage(conversationId, {
      role: 'assistant',
      content: [],
      toolCalls: [{ id: callId, name: 'write_file', input: { path: file, content: 'hello\n' } }],
      stopReason: 'tool_use',
    })
    const tool = tools.get('write_file') as WriteTool
    const input = { path: file, content: 'hello\n' }
    const proposal = (await tool.propose(input, { workspace })) as Proposal
    const desk = actions.createDesk(owner.id, { runId, conversationId }, 'test')
    return (await desk.park({ toolCallId: callId, tool: 'write_file', input }, proposal)).actionId
  }

  const toolMessages = async () =>
    (await testStore.store.forUser(owner.id).conversations.listMessages(conversationId)).filter(
      (stored) => stored.message.role === 'tool',
    )

  it("applies a confirmed command with its run's workspace variables (HANGAR_PORT), below the daemon's CPU priority", async () => {
    const withPorts = createActionsService({
      store: testStore.store,
      tools,
      clock: () => now,
      workspaceVariables: async (userId, forRun): Promise<Record<string, string>> =>
        userId === owner.id && forRun === runId ? { HANGAR_PORT: '41007', HANGAR_PORT_COUNT: '1' } : {},
    })
    const input = { command: 'echo "$HANGAR_PORT" > port.txt; cut -d" " -f19 /proc/self/stat > nice.txt' }
    await testStore.store.forUser(owner.id).conversations.appendMessage(conversationId, {
      role: 'assistant',
      content: [],
      toolCalls: [{ id: 'call_cmd', name: 'run_command', input }],
      stopReason: 'tool_use',
    })
    const tool = tools.get('run_command') as WriteTool
    const proposal = (await tool.propose(input, { workspace })) as Proposal
    const desk = withPorts.createDesk(owner.id, { runId, conversationId }, 'test')
    const { actionId } = await desk.park({ toolCallId: 'call_cmd', tool: 'run_command', input }, proposal)
    await withPorts.decide(local(owner), actionId, { kind: 'confirm' })
    expect(await readFile(path.join(workspace, 'port.txt'), 'utf8')).toBe('41007\n')
    // As a CLI agent's process runs (the supervisor): an agent's burst of work never starves the daemon.
    expect(await readFile(path.join(workspace, 'nice.txt'), 'utf8')).toBe(
      `${agentNiceness(os.getPriority())}\n`,
    )
  })

  it('parks a proposal without touching the workspace', async () => {
    const id = await propose()
    await expect(readFile(path.join(workspace, 'a.txt'))).rejects.toThrow()
    expect((await actions.list(owner.id, { status: 'pending' })).map((action) => action.id)).toEqual([id])
  })

  it('applies once under concurrent confirms, with one audit row and one tool result', async () => {
    const id = await propose()
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => actions.decide(local(owner), id, { kind: 'confirm' })),
    )
    const fulfilled = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))
    expect(fulfilled.filter((result) => !result.replayed)).toHaveLength(1)
    expect(await readFile(path.join(workspace, 'a.txt'), 'utf8')).toBe('hello\n')
    expect(await toolMessages()).toHaveLength(1)
    const audit = await testStore.store.forUser(owner.id).audit.list({ action: 'action.apply' })
    expect(audit).toHaveLength(1)
    expect(fulfilled[0]?.remaining).toBe(0)
  })

  // "900 concurrent confirms: exactly one apply each" (issue 17, what held): 30 proposals, 30 confirms
  // each, all at once — each applied once, with one audit row and one tool result, the rest replays.
  it('applies each of 30 proposals once under 900 concurrent confirms', { timeout: 120_000 }, async () => {
    const ids: string[] = []
    for (let index = 0; index < 30; index++) ids.push(await propose(`f${index}.txt`, `call_${index}`))
    const results = await Promise.allSettled(
      ids.flatMap((id) =>
        Array.from({ length: 30 }, () => actions.decide(local(owner), id, { kind: 'confirm' })),
      ),
    )
    const rejected = results.filter((result) => result.status === 'rejected')
    expect(rejected, JSON.stringify(rejected.slice(0, 3))).toEqual([])
    const fulfilled = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))
    for (const id of ids) {
      const mine = fulfilled.filter((result) => result.action.id === id)
      expect(mine.filter((result) => !result.replayed)).toHaveLength(1)
      expect(mine.every((result) => result.action.status === 'applied')).toBe(true)
    }
    expect(await toolMessages()).toHaveLength(30)
    const audit = await testStore.store.forUser(owner.id).audit.list({ action: 'action.apply', limit: 1000 })
    expect(audit.map((row) => row.targetId).sort()).toEqual([...ids].sort())
  })

  // Issue 17 item 2: the scope is checked in the service, whichever path (REST, MCP, CLI) calls it.
  it('lets only a session, the local CLI or an approve-scoped user PAT decide', async () => {
    const id = await propose()
    const token = (scopes: TokenScope[], kind: 'user' | 'proxy' = 'user'): Decider => ({
      via: 'token',
      user: owner,
      tokenId: `pat_${kind}_${scopes.join('_')}`,
      kind,
      scopes,
      profile: null,
    })
    for (const decider of [token(['api']), token(['api', 'approve'], 'proxy')]) {
      for (const decision of [{ kind: 'confirm' }, { kind: 'reject' }] as const) {
        await expect(actions.decide(decider, id, decision)).rejects.toMatchObject({
          code: 'forbidden',
          message: expect.stringContaining('"approve" scope'),
          hint: expect.stringContaining('hangar token create --name NAME --scope approve'),
        })
      }
    }
    expect((await testStore.store.forUser(owner.id).actions.get(id))?.status).toBe('pending')
    const approver = token(['api', 'approve'])
    expect((await actions.decide(approver, id, { kind: 'confirm' })).action.status).toBe('applied')
    const [row] = await testStore.store.forUser(owner.id).audit.list({ action: 'action.apply' })
    expect(row?.actor).toBe('pat:pat_user_api_approve')
    const session: Decider = { via: 'session', user: owner, sessionId: 'ses_1', sessionKind: 'browser' }
    const second = await propose('b.txt', 'call_2')
    await actions.decide(session, second, { kind: 'reject' })
    const [rejection] = await testStore.store.forUser(owner.id).audit.list({ action: 'action.reject' })
    expect(rejection?.actor).toBe(`user:${owner.id}`)
  })

  // Issue 17 item 8: a process that died while applying a command leaves the action `applying`; start-up
  // recovery kills the recorded process group and fails it as interrupted — a confirm then answers 409.
  it('recovers an action a dead process left applying: group killed, failed as interrupted, never re-run', async () => {
    const id = await propose()
    const scope = testStore.store.forUser(owner.id).actions
    // The dead claimant: a process that has exited, on this node, from another boot.
    const dead = spawn(process.execPath, ['-e', ''])
    await new Promise((resolve) => dead.on('exit', resolve))
    await scope.claim(id, {
      status: 'applying',
      decidedBy: 'user:someone',
      applier: { node: 'node-a', pid: dead.pid!, bootId: 'old-boot' },
    })
    const command = spawn('/bin/sh', ['-c', 'sleep 600'], { detached: true, stdio: 'ignore' })
    await scope.recordProcess(id, command.pid!)
    // A live claimant's action is not touched.
    const live = await propose('live.txt', 'call_live')
    await scope.claim(live, {
      status: 'applying',
      applier: { node: 'node-a', pid: process.pid, bootId: 'other-live-process' },
    })

    const restarted = createActionsService({
      store: testStore.store,
      tools,
      clock: () => now,
      owner: { node: 'node-a', pid: process.pid + 1_000_000, bootId: 'new-boot' },
    })
    expect(await restarted.recover()).toBe(1)
    expect(() => process.kill(-command.pid!, 0)).toThrow()
    const failed = await scope.get(id)
    expect(failed).toMatchObject({ status: 'failed', result: { reason: 'interrupted', isError: true } })
    expect((await scope.get(live))?.status).toBe('applying')
    await expect(restarted.decide(local(owner), id, { kind: 'confirm' })).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('interrupted'),
    })
    await expect(readFile(path.join(workspace, 'a.txt'))).rejects.toThrow()
    expect((await toolMessages())[0]?.message).toMatchObject({
      isError: true,
      content: expect.stringContaining('Interrupted'),
    })
    const [row] = await testStore.store.forUser(owner.id).audit.list({ action: 'action.apply' })
    expect(row).toMatchObject({
      actor: 'system',
      targetId: id,
      details: { outcome: 'failed', reason: 'interrupted', decidedBy: 'user:someone' },
    })
  })

  it('fails the applying actions of a lost node without touching this one', async () => {
    const id = await propose()
    await testStore.store.forUser(owner.id).actions.claim(id, {
      status: 'applying',
      applier: { node: 'lost-node', pid: 1, bootId: 'b' },
    })
    const here = createActionsService({ store: testStore.store, tools, nodeId: 'node-b' })
    expect(await here.interruptNode('lost-node', 'node lost-node stopped answering')).toBe(1)
    expect((await testStore.store.forUser(owner.id).actions.get(id))?.result).toMatchObject({
      reason: 'interrupted',
      content: expect.stringContaining('node lost-node stopped answering'),
    })
  })

  it('rejects with the reason in the tool result, and refuses a different decision afterwards', async () => {
    const id = await propose()
    const result = await actions.decide(local(owner), id, { kind: 'reject', reason: 'wrong file' })
    expect(result.action.status).toBe('rejected')
    expect((await toolMessages())[0]?.message).toMatchObject({
      isError: true,
      content: expect.stringContaining('wrong file'),
    })
    expect((await actions.decide(local(owner), id, { kind: 'reject' })).replayed).toBe(true)
    await expect(actions.decide(local(owner), id, { kind: 'confirm' })).rejects.toMatchObject({
      code: 'conflict',
    })
  })

  it('turns a stale target into a conflict and tells the model to re-read', async () => {
    const id = await propose()
    await writeFile(path.join(workspace, 'a.txt'), 'someone else\n')
    const result = await actions.decide(local(owner), id, { kind: 'confirm' })
    expect(result.action.status).toBe('conflict')
    expect(await readFile(path.join(workspace, 'a.txt'), 'utf8')).toBe('someone else\n')
    expect((await toolMessages())[0]?.message).toMatchObject({
      isError: true,
      content: expect.stringContaining('read it again'),
    })
  })

  it('expires: reading does not change it, deciding marks it expired and answers 409', async () => {
    const id = await propose()
    now = new Date(now.getTime() + PROPOSAL_TTL_MS + 1000)
    expect((await testStore.store.forUser(owner.id).actions.get(id))?.status).toBe('pending')
    await expect(actions.decide(local(owner), id, { kind: 'confirm' })).rejects.toMatchObject({
      code: 'conflict',
      details: { status: 'expired' },
    })
    expect((await testStore.store.forUser(owner.id).actions.get(id))?.status).toBe('expired')
    await expect(readFile(path.join(workspace, 'a.txt'))).rejects.toThrow()
    expect(await toolMessages()).toHaveLength(1)
  })

  it("answers 404 for another user's action and leaves it pending", async () => {
    const id = await propose()
    await expect(actions.decide(local(other), id, { kind: 'confirm' })).rejects.toMatchObject({
      code: 'not_found',
    })
    expect((await testStore.store.forUser(owner.id).actions.get(id))?.status).toBe('pending')
  })

  it('supersedes open proposals with a synthetic tool result each', async () => {
    await propose('a.txt', 'call_1')
    await propose('b.txt', 'call_2')
    expect(await actions.supersede(owner.id, conversationId, 'test')).toBe(2)
    expect((await actions.list(owner.id, { status: 'superseded' })).length).toBe(2)
    expect(await toolMessages()).toHaveLength(2)
  })

  it('counts what is left of a run after one of two proposals is decided', async () => {
    const first = await propose('a.txt', 'call_1')
    await propose('b.txt', 'call_2')
    expect((await actions.decide(local(owner), first, { kind: 'confirm' })).remaining).toBe(1)
  })

  it('moves a waiting run on once every proposal is decided, and not before', async () => {
    const runs = testStore.store.forUser(owner.id).runs
    const first = await propose('a.txt', 'call_1')
    const second = await propose('b.txt', 'call_2')
    await runs.update(runId, { status: 'awaiting_confirmation', reason: '2 proposal(s) wait for a decision' })
    await actions.decide(local(owner), first, { kind: 'confirm' })
    expect((await runs.get(runId))?.status).toBe('awaiting_confirmation')
    await actions.decide(local(owner), second, { kind: 'reject', reason: 'no' })
    expect(await runs.get(runId)).toMatchObject({
      status: 'succeeded',
      agentStatus: 'awaiting_confirmation',
      reason: 'every proposal was decided',
    })
    // A replay changes nothing further.
    const replay = await actions.decide(local(owner), second, { kind: 'reject', reason: 'no' })
    expect((await runs.get(runId))?.status).toBe('succeeded')
    // The run that goes on from it is named in its reason.
    const continuation = await queueContinuation(
      {
        store: testStore.store,
        runs: { enqueue: (userId, input) => testStore.store.forUser(userId).runs.create(input) },
        scheduler: { kick: () => {} },
      },
      owner.id,
      { ...replay, replayed: false },
    )
    expect(continuation?.continues).toBe(runId)
    expect((await runs.get(runId))?.reason).toBe(
      `every proposal was decided; continued in ${continuation!.id}`,
    )
  })

  it('moves a waiting run on when a new message supersedes its proposals', async () => {
    const runs = testStore.store.forUser(owner.id).runs
    await propose('a.txt', 'call_1')
    await runs.update(runId, { status: 'awaiting_confirmation' })
    await actions.supersede(owner.id, conversationId, 'test')
    expect(await runs.get(runId)).toMatchObject({ status: 'succeeded', agentStatus: 'awaiting_confirmation' })
  })
})
