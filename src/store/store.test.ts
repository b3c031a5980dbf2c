// The store suite: the same tests on SQLite and on a real PostgreSQL, in the same run.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import type { User } from './repositories/users-repository.js'
import type { Store } from './store.js'

describe.each(STORE_ENGINES)('store ($name)', (engine) => {
  let testStore: TestStore
  let store: Store
  let alice: User
  let bob: User

  beforeEach(async () => {
    testStore = await engine.open()
    store = testStore.store
    alice = await store.users.create({ name: 'alice', role: 'owner' })
    bob = await store.users.create({ name: 'bob', role: 'member' })
  })
  afterEach(async () => {
    await testStore.dispose()
  })

  it('reports its engine and passes an integrity check', async () => {
    expect(store.engine).toBe(engine.name)
    expect(await store.integrityCheck()).toBe('ok')
  })

  it('finds users by id, name and role, and refuses a duplicate name', async () => {
    expect((await store.users.findOwner())?.id).toBe(alice.id)
    expect((await store.users.findByName('bob'))?.id).toBe(bob.id)
    expect(await store.users.count()).toBe(2)
    await expect(store.users.create({ name: 'alice', role: 'member' })).rejects.toThrow()
    expect(await store.users.count()).toBe(2)
  })

  it('scopes tokens to their owner: another user sees none and cannot revoke', async () => {
    const tokens = store.forUser(alice.id).tokens
    await tokens.create({
      id: 'lookup1',
      name: 'ci',
      kind: 'user',
      scopes: ['api'],
      secretHash: 'h',
      expiresAt: '2999-01-01T00:00:00.000Z',
    })
    expect(await tokens.list()).toHaveLength(1)
    expect(await store.forUser(bob.id).tokens.list()).toHaveLength(0)
    expect(await store.forUser(bob.id).tokens.revoke('lookup1')).toBeUndefined()
    expect((await tokens.get('lookup1'))?.revokedAt).toBeNull()
    const revoked = await tokens.revoke('lookup1')
    expect(revoked?.revokedAt).not.toBeNull()
    expect(await tokens.list()).toHaveLength(0)
    expect(await tokens.list({ includeRevoked: true })).toHaveLength(1)
  })

  it('consumes a login link once, and only with the right secret hash', async () => {
    const sessions = store.forUser(alice.id).sessions
    await sessions.createLoginLink({
      id: 'link1',
      purpose: 'login',
      secretHash: 'right',
      expiresAt: '2999-01-01T00:00:00.000Z',
    })
    expect(await store.authLookups.consumeLoginLink('link1', 'wrong')).toBeUndefined()
    const results = await Promise.all([
      store.authLookups.consumeLoginLink('link1', 'right'),
      store.authLookups.consumeLoginLink('link1', 'right'),
    ])
    expect(results.filter(Boolean)).toHaveLength(1)
    expect(results.find(Boolean)?.user_id).toBe(alice.id)
  })

  it('refuses an expired login link', async () => {
    await store.forUser(alice.id).sessions.createLoginLink({
      id: 'old',
      purpose: 'login',
      secretHash: 'h',
      expiresAt: '2000-01-01T00:00:00.000Z',
    })
    expect(await store.authLookups.consumeLoginLink('old', 'h')).toBeUndefined()
  })

  it('upserts provider credentials per user and lists envelopes for rewrap', async () => {
    const credentials = store.forUser(alice.id).credentials
    await credentials.upsert('anthropic', {
      keyEnvelope: 'env1',
      keyLast4: '1234',
      model: 'claude-sonnet-4-6',
    })
    await credentials.upsert('anthropic', { model: 'claude-opus-4-1' })
    const stored = await credentials.get('anthropic')
    expect(stored).toMatchObject({ keyEnvelope: 'env1', keyLast4: '1234', model: 'claude-opus-4-1' })
    expect(await store.forUser(bob.id).credentials.get('anthropic')).toBeUndefined()
    expect(await store.credentialEnvelopes.list()).toEqual([
      { id: stored!.id, userId: alice.id, provider: 'anthropic', keyEnvelope: 'env1' },
    ])
    expect(await store.credentialEnvelopes.replace(stored!.id, 'stale', 'env2')).toBe(false)
    expect(await store.credentialEnvelopes.replace(stored!.id, 'env1', 'env2')).toBe(true)
    expect((await credentials.get('anthropic'))?.keyEnvelope).toBe('env2')
    expect(await credentials.delete('anthropic')).toBe(true)
    expect(await credentials.list()).toEqual([])
  })

  it('keeps message seq dense and enforces the tool-message invariant', async () => {
    const scope = store.forUser(alice.id)
    const conversation = await scope.conversations.create({
      title: 'Fix tests',
      profile: 'builtin',
      project: 'p',
    })
    await scope.conversations.appendMessage(conversation.id, {
      role: 'user',
      content: [{ type: 'text', text: 'hi' }],
    })
    await scope.conversations.appendMessage(conversation.id, {
      role: 'assistant',
      content: [],
      toolCalls: [{ id: 'call_1', name: 'read_file', input: { path: 'a' } }],
      stopReason: 'tool_use',
    })
    await scope.conversations.appendMessage(conversation.id, {
      role: 'tool',
      toolCallId: 'call_1',
      toolName: 'read_file',
      content: 'text',
    })
    const messages = await scope.conversations.listMessages(conversation.id)
    expect(messages.map((message) => message.seq)).toEqual([1, 2, 3])
    expect(messages[2]?.message).toMatchObject({ role: 'tool', toolCallId: 'call_1' })
    expect(await store.forUser(bob.id).conversations.listMessages(conversation.id)).toEqual([])
    await expect(
      store.forUser(bob.id).conversations.appendMessage(conversation.id, { role: 'user', content: [] }),
    ).rejects.toThrow()
  })

  it('rejects a duplicate message seq at the database level', async () => {
    const scope = store.forUser(alice.id)
    const conversation = await scope.conversations.create({ title: 't', profile: 'builtin', project: 'p' })
    const first = scope.conversations.appendMessage(conversation.id, { role: 'user', content: [] })
    await first
    // Two writers that read the same max(seq) must not both succeed.
    const racing = await Promise.allSettled([
      store.transaction((repositories) =>
        repositories
          .forUser(alice.id)
          .conversations.appendMessage(conversation.id, { role: 'user', content: [] }),
      ),
      store.transaction((repositories) =>
        repositories
          .forUser(alice.id)
          .conversations.appendMessage(conversation.id, { role: 'user', content: [] }),
      ),
    ])
    const seqs = (await scope.conversations.listMessages(conversation.id)).map((message) => message.seq)
    expect(new Set(seqs).size).toBe(seqs.length)
    expect(racing.some((result) => result.status === 'fulfilled')).toBe(true)
  })

  it('stores run events in seq order, replays after a seq, and refuses a duplicate seq', async () => {
    const runs = store.forUser(alice.id).runs
    const run = await runs.create({ agent: 'builtin', adapter: 'builtin', prompt: 'p', cwd: '/tmp' })
    const ts = '2026-01-01T00:00:00.000Z'
    await runs.appendEvents([
      {
        v: 1,
        runId: run.id,
        seq: 1,
        ts,
        type: 'run-start',
        agent: 'builtin',
        adapter: 'builtin',
        cwd: '/tmp',
        proxied: false,
      },
      { v: 1, runId: run.id, seq: 2, ts, type: 'text-delta', text: 'héllo ✓' },
      { v: 1, runId: run.id, seq: 3, ts, type: 'run-end', status: 'succeeded' },
    ])
    expect(await runs.lastEventSeq(run.id)).toBe(3)
    const replay = await runs.listEvents(run.id, { afterSeq: 1 })
    expect(replay.map((event) => event.type)).toEqual(['text-delta', 'run-end'])
    expect(replay[0]).toEqual({ v: 1, runId: run.id, seq: 2, ts, type: 'text-delta', text: 'héllo ✓' })
    await expect(
      runs.appendEvents([{ v: 1, runId: run.id, seq: 2, ts, type: 'text-delta', text: 'x' }]),
    ).rejects.toThrow()
    expect(await store.forUser(bob.id).runs.listEvents(run.id)).toEqual([])
    expect(await store.forUser(bob.id).runs.get(run.id)).toBeUndefined()
  })

  it('adds up usage per agent and day from proxied requests and unproxied runs, each counted once', async () => {
    const scope = store.forUser(alice.id)
    const proxiedRun = await scope.runs.create({
      agent: 'reviewer',
      adapter: 'claude-code',
      prompt: 'p',
      cwd: '/w',
    })
    const unproxiedRun = await scope.runs.create({ agent: 'codex', adapter: 'codex', prompt: 'p', cwd: '/w' })
    const usage = { inputTokens: 100, outputTokens: 20, cacheReadTokens: 3, cacheWriteTokens: 1 }
    // The proxied run's own totals must not count again next to its requests.
    await scope.runs.update(proxiedRun.id, { usage: { ...usage, costUsd: 9 }, costUsd: 9 })
    await scope.runs.update(unproxiedRun.id, { usage: { ...usage, costUsd: 0.5 }, costUsd: 0.5 })
    const request = (
      id: string,
      runId: string | null,
      status: number,
      startedAt: string,
      costUsd: number | null,
    ) => ({
      id,
      runId,
      tokenId: 'tok',
      profile: 'reviewer',
      family: 'anthropic',
      method: 'POST',
      path: '/v1/messages',
      model: 'm',
      stream: false,
      status,
      feeds: [],
      usage,
      costUsd,
      error: null,
      startedAt,
      durationMs: 1,
    })
    await scope.proxyRequests.record(request('preq_a', proxiedRun.id, 200, '2026-03-01T10:00:00.000Z', 0.25))
    await scope.proxyRequests.record(request('preq_b', proxiedRun.id, 200, '2026-03-02T10:00:00.000Z', null))
    await scope.proxyRequests.record(request('preq_c', null, 200, '2026-03-02T11:00:00.000Z', 0.5))
    await scope.proxyRequests.record(request('preq_d', proxiedRun.id, 502, '2026-03-02T12:00:00.000Z', 7))
    await scope.proxyRequests.record(request('preq_e', proxiedRun.id, 200, '2026-04-01T00:00:00.000Z', 3))
    // A millisecond before the range: left out.
    await scope.proxyRequests.record(request('preq_f', proxiedRun.id, 200, '2026-02-28T23:59:59.999Z', 5))
    // Bob's request, same profile and day: his alone.
    await store
      .forUser(bob.id)
      .proxyRequests.record(request('preq_g', null, 200, '2026-03-01T11:00:00.000Z', 4))

    const range = { from: '2026-03-01T00:00:00.000Z', to: '2999-01-01T00:00:00.000Z' }
    const cells = (await scope.usage.cells(range)).filter(
      (cell) => cell.day < '2026-04-01' || cell.agent === 'codex',
    )
    const byKey = Object.fromEntries(
      cells.map((cell) => [`${cell.agent} ${cell.agent === 'codex' ? 'today' : cell.day}`, cell]),
    )
    expect(Object.keys(byKey).sort()).toEqual(['codex today', 'reviewer 2026-03-01', 'reviewer 2026-03-02'])
    expect(byKey['reviewer 2026-03-01']).toMatchObject({
      ...usage,
      costUsd: 0.25,
      requests: 1,
      runIds: [proxiedRun.id],
    })
    // The 502 is left out; the unpriced request counts its tokens and no cost; the token request has no run.
    expect(byKey['reviewer 2026-03-02']).toMatchObject({
      inputTokens: 200,
      outputTokens: 40,
      costUsd: 0.5,
      unpriced: 1,
      requests: 2,
      runIds: [proxiedRun.id],
    })
    expect(byKey['codex today']).toMatchObject({
      ...usage,
      costUsd: 0.5,
      requests: 0,
      runIds: [unproxiedRun.id],
    })
    const march = await scope.usage.cells({ from: range.from, to: '2026-03-01T23:59:59.999Z' })
    expect(march.map((cell) => cell.day)).toEqual(['2026-03-01'])
    expect(await store.forUser(bob.id).usage.cells(range)).toEqual([
      expect.objectContaining({ agent: 'reviewer', day: '2026-03-01', costUsd: 4, requests: 1, runIds: [] }),
    ])
  })

  it('keeps the proxy request log per user: totals of a run, a profile budget window, run tokens apart', async () => {
    const scope = store.forUser(alice.id)
    const run = await scope.runs.create({
      agent: 'reviewer',
      adapter: 'claude-code',
      prompt: 'p',
      cwd: '/tmp',
    })
    await scope.tokens.create({
      id: 'runtok',
      name: 'run',
      kind: 'proxy',
      scopes: ['api'],
      profile: 'reviewer',
      runId: run.id,
      secretHash: 'h',
      expiresAt: '2999-01-01T00:00:00.000Z',
    })
    const request = (id: string, status: number, startedAt: string, costUsd: number | null) => ({
      id,
      runId: run.id,
      tokenId: 'runtok',
      profile: 'reviewer',
      family: 'anthropic',
      method: 'POST',
      path: '/v1/messages',
      model: 'claude-sonnet-4-6',
      stream: true,
      status,
      feeds: [{ name: 'status', source: 'ops', status: 'fresh', bytes: 42, truncated: false }],
      usage: { inputTokens: 1_000, outputTokens: 200, cacheReadTokens: 300, cacheWriteTokens: 5 },
      costUsd,
      error: status >= 400 ? 'upstream answered 500' : null,
      startedAt,
      durationMs: 12,
    })
    await scope.proxyRequests.record(request('preq_1', 200, '2026-01-01T00:00:00.000Z', 0.25))
    await scope.proxyRequests.record(request('preq_2', 200, '2026-01-02T00:00:00.000Z', 0.5))
    await scope.proxyRequests.record(request('preq_3', 500, '2026-01-02T00:00:01.000Z', null))

    const log = await scope.proxyRequests.listForRun(run.id)
    expect(log.map((entry) => entry.id)).toEqual(['preq_1', 'preq_2', 'preq_3'])
    expect(log[0]!.feeds).toEqual([
      { name: 'status', source: 'ops', status: 'fresh', bytes: 42, truncated: false },
    ])
    expect(log[0]!.stream).toBe(true)
    // Failed requests are logged but not counted; every counted request was priced, so there is a cost.
    expect(await scope.proxyRequests.totalsForRun(run.id)).toEqual({
      requests: 2,
      usage: {
        inputTokens: 2_000,
        outputTokens: 400,
        cacheReadTokens: 600,
        cacheWriteTokens: 10,
        costUsd: 0.75,
      },
    })
    expect(await scope.proxyRequests.spentSince('reviewer', '2026-01-02T00:00:00.000Z')).toBe(0.5)
    expect(await scope.proxyRequests.spentSince('coder', '2026-01-01T00:00:00.000Z')).toBe(0)
    expect(await store.forUser(bob.id).proxyRequests.listForRun(run.id)).toEqual([])
    expect((await store.forUser(bob.id).proxyRequests.totalsForRun(run.id)).requests).toBe(0)

    // A run's own token is not one of the user's tokens, and it dies with the run.
    expect(await scope.tokens.list()).toEqual([])
    await scope.tokens.revokeForRun(run.id)
    expect((await scope.tokens.get('runtok'))?.revokedAt).not.toBeNull()
  })

  it('refuses an unknown run status through its CHECK constraint', async () => {
    const runs = store.forUser(alice.id).runs
    const run = await runs.create({ agent: 'a', adapter: 'builtin', prompt: 'p', cwd: '/' })
    await expect(runs.update(run.id, { status: 'exploded' as 'failed' })).rejects.toThrow()
    expect((await runs.get(run.id))?.status).toBe('queued')
    const updated = await runs.update(run.id, {
      status: 'succeeded',
      usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.0125 },
      costUsd: 0.0125,
    })
    expect(updated).toMatchObject({ status: 'succeeded', costUsd: 0.0125, usage: { inputTokens: 10 } })
  })

  it('lets exactly one of two racing decisions claim a pending action', async () => {
    const actions = store.forUser(alice.id).actions
    const action = await actions.create({
      tool: 'write_file',
      input: { path: 'a.txt', content: 'x' },
      inputHash: 'sha',
      summary: 'Create a.txt',
      classification: 'safe_create',
      origin: 'chat',
      expiresAt: '2999-01-01T00:00:00.000Z',
    })
    const [first, second] = await Promise.all([
      actions.claim(action.id, { status: 'applied' }),
      actions.claim(action.id, { status: 'rejected', reason: 'no' }),
    ])
    expect([first, second].filter(Boolean)).toHaveLength(1)
    expect(await store.forUser(bob.id).actions.claim(action.id, { status: 'rejected' })).toBeUndefined()
    expect(await store.forUser(bob.id).actions.get(action.id)).toBeUndefined()
  })

  it('does not let an expired action be claimed, and reading it does not change it', async () => {
    const actions = store.forUser(alice.id).actions
    const action = await actions.create({
      tool: 'delete_file',
      input: {},
      inputHash: 'sha',
      summary: 'Delete',
      classification: 'destructive_delete',
      origin: 'mcp',
      expiresAt: '2000-01-01T00:00:00.000Z',
    })
    expect(await actions.claim(action.id, { status: 'applied' })).toBeUndefined()
    expect((await actions.get(action.id))?.status).toBe('pending')
  })

  it('rolls back every write of a failed transaction', async () => {
    await expect(
      store.transaction(async (repositories) => {
        await repositories.forUser(alice.id).audit.append({ actor: 'system', action: 'test.write' })
        await repositories.users.create({ name: 'carol', role: 'member' })
        throw new Error('boom')
      }),
    ).rejects.toThrow('boom')
    expect(await store.forUser(alice.id).audit.list()).toEqual([])
    expect(await store.users.findByName('carol')).toBeUndefined()
  })

  it('keeps audit events, profiles and workspaces per user', async () => {
    const scope = store.forUser(alice.id)
    await scope.audit.append({
      actor: `user:${alice.id}`,
      action: 'token.create',
      targetType: 'token',
      targetId: 't1',
    })
    expect((await scope.audit.list())[0]).toMatchObject({ action: 'token.create', targetId: 't1' })
    expect(await store.forUser(bob.id).audit.list()).toEqual([])

    await scope.profiles.put('reviewer', { adapter: 'claude-code' })
    await scope.profiles.put('reviewer', { adapter: 'codex' })
    expect((await scope.profiles.get('reviewer'))?.definition).toEqual({ adapter: 'codex' })
    expect(await store.forUser(bob.id).profiles.list()).toEqual([])

    const workspace = await scope.workspaces.create({
      kind: 'worktree',
      path: '/w',
      projectPath: '/p',
      createdBranch: true,
    })
    expect((await scope.workspaces.get(workspace.id))?.createdBranch).toBe(true)
    expect(await store.forUser(bob.id).workspaces.markRemoved(workspace.id)).toBe(false)
    expect(await scope.workspaces.markRemoved(workspace.id)).toBe(true)
    expect(await scope.workspaces.list()).toEqual([])
  })

  it('searches conversations by title, newest first', async () => {
    const scope = store.forUser(alice.id)
    await scope.conversations.create({ title: 'Fix the Parser', profile: 'builtin', project: 'p' })
    await scope.conversations.create({ title: 'Write docs', profile: 'builtin', project: 'p' })
    expect((await scope.conversations.list({ search: 'parser' })).map((c) => c.title)).toEqual([
      'Fix the Parser',
    ])
    expect(await store.forUser(bob.id).conversations.list()).toEqual([])
  })
})
