// Issue 18 item 4: the agent's session id was written only by run-end, so an interrupted run had none and
// its conversation's next message resumed an older session (or none). The session is now stored as soon
// as it is known and kept to the end; the session a run continues is the run it resumes, else the
// conversation's latest; and the same rules say which runs may be resumed (CLI, API, UI).
import { spawnSync } from 'node:child_process'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createRedactor } from '../core/redact.js'
import type { Run } from '../store/repositories/runs-repository.js'
import type { User } from '../store/repositories/users-repository.js'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import { assertResumable, releaseIfOwnerGone, sessionToResume } from './resume-run.js'
import { createRunService, type RunService } from './run-service.js'

describe.each(STORE_ENGINES)('resuming runs ($name)', (engine) => {
  let testStore: TestStore
  let owner: User
  let runs: RunService

  beforeEach(async () => {
    testStore = await engine.open()
    owner = await testStore.store.users.create({ name: 'owner', role: 'owner' })
    runs = createRunService({
      store: testStore.store,
      redactor: createRedactor(),
      owner: { node: 'test-node', pid: process.pid, bootId: 'boot-1' },
    })
  })
  afterEach(() => testStore.dispose())

  const scope = () => testStore.store.forUser(owner.id)
  const newRun = (input: Partial<Parameters<RunService['start']>[1]> = {}) =>
    runs.start(owner.id, { agent: 'claude-code', adapter: 'claude-code', prompt: 'p', cwd: '/w', ...input })

  it('stores the session when it is set, keeps it at run-end, and names it when the run is interrupted', async () => {
    const ended = await newRun()
    await ended.setSession('session-early')
    expect((await scope().runs.get(ended.run.id))?.sessionId).toBe('session-early')
    // The agent's last word named no session (it was cancelled before its final event).
    const finished = await ended.end({ status: 'cancelled', reason: 'cancelled by the user' })
    expect(finished.sessionId).toBe('session-early')
    expect((await scope().runs.listEvents(ended.run.id)).at(-1)).toMatchObject({
      type: 'run-end',
      sessionId: 'session-early',
    })

    const crashed = await newRun()
    await crashed.setSession('session-crashed')
    await runs.interrupt(owner.id, crashed.run.id, 'the process that ran it stopped')
    expect(await scope().runs.get(crashed.run.id)).toMatchObject({
      status: 'interrupted',
      sessionId: 'session-crashed',
    })
    expect((await scope().runs.listEvents(crashed.run.id)).at(-1)).toMatchObject({
      type: 'run-end',
      status: 'interrupted',
      sessionId: 'session-crashed',
    })
  })

  it("continues a conversation's latest session, an interrupted run's included, else the run it resumes", async () => {
    const conversation = await scope().conversations.create({
      title: 't',
      profile: 'claude-code',
      project: 'p',
    })
    const inConversation = { conversationId: conversation.id }
    const older = await newRun(inConversation)
    await older.end({ status: 'succeeded', sessionId: 'session-older' })
    const codex = await newRun({ ...inConversation, agent: 'codex', adapter: 'codex' })
    await codex.end({ status: 'succeeded', sessionId: 'thread-codex' })
    const latest = await newRun(inConversation)
    await latest.setSession('session-latest')
    await runs.interrupt(owner.id, latest.run.id, 'crash')
    const noSession = await newRun(inConversation)
    await noSession.end({ status: 'failed', reason: 'died before it started' })

    const next = await runs.enqueue(owner.id, {
      agent: 'claude-code',
      adapter: 'claude-code',
      prompt: 'next',
      cwd: '/w',
      ...inConversation,
    })
    expect(await sessionToResume(scope().runs, next)).toBe('session-latest')
    // A resume names its run: that run's session, even when a newer one exists.
    const explicit = await runs.enqueue(owner.id, {
      agent: 'claude-code',
      adapter: 'claude-code',
      prompt: 'again',
      cwd: '/w',
      continues: older.run.id,
      ...inConversation,
    })
    expect(await sessionToResume(scope().runs, explicit)).toBe('session-older')
    const alone = await runs.enqueue(owner.id, {
      agent: 'claude-code',
      adapter: 'claude-code',
      prompt: 'x',
      cwd: '/w',
    })
    expect(await sessionToResume(scope().runs, alone)).toBeUndefined()
  })

  it('marks a run whose owner process is gone as interrupted, and leaves a live one alone', async () => {
    const orphan = await newRun()
    await orphan.setSession('session-orphan')
    await orphan.setStatus('running')
    const deadPid = spawnSync('true').pid
    await scope().runs.update(orphan.run.id, { owner: { node: 'test-node', pid: deadPid, bootId: 'old' } })
    const released = await releaseIfOwnerGone(
      runs,
      scope().runs,
      owner.id,
      (await scope().runs.get(orphan.run.id))!,
    )
    expect(released).toMatchObject({ status: 'interrupted', sessionId: 'session-orphan' })

    const live = await newRun()
    await live.setStatus('running')
    const running = (await scope().runs.get(live.run.id))!
    expect((await releaseIfOwnerGone(runs, scope().runs, owner.id, running)).status).toBe('running')
  })
})

describe('assertResumable', () => {
  const run = (changes: Partial<Run>): Run =>
    ({ id: 'run_1', adapter: 'claude-code', status: 'interrupted', sessionId: 's', ...changes }) as Run
  const resumable = { resume: true }

  it('accepts an ended run with a session, by its own adapter', () => {
    expect(() => assertResumable(run({}), 'claude-code', resumable)).not.toThrow()
    expect(() => assertResumable(run({ status: 'failed' }), 'claude-code', resumable)).not.toThrow()
    // The built-in agent's session is its conversation.
    expect(() =>
      assertResumable(run({ adapter: 'builtin', sessionId: null }), 'builtin', undefined),
    ).not.toThrow()
  })

  it('refuses a run still going, one without a session, another adapter, and an adapter that cannot resume', () => {
    expect(() => assertResumable(run({ status: 'running' }), 'claude-code', resumable)).toThrow(
      expect.objectContaining({ code: 'conflict', message: 'run run_1 is running: it has not ended yet' }),
    )
    expect(() => assertResumable(run({ sessionId: null }), 'claude-code', resumable)).toThrow(
      expect.objectContaining({ code: 'conflict', message: 'run run_1 has no agent session to resume' }),
    )
    expect(() => assertResumable(run({}), 'codex', resumable)).toThrow(
      expect.objectContaining({ code: 'invalid_request' }),
    )
    expect(() => assertResumable(run({}), 'claude-code', { resume: false })).toThrow(
      expect.objectContaining({ code: 'invalid_request', message: 'claude-code cannot resume a session' }),
    )
  })
})
