// Issue 20 item 2: what a conversation's runs hand to the next agent, read from the store on both engines:
// each run's final text (not its earlier words, not a sub-agent's), the files it changed with a diff stat,
// the proposals decided on it; a CLI agent's new session gets every ended turn, a resumed one the turns
// after its own run; the built-in agent gets the other agents' turns.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createRedactor } from '../core/redact.js'
import type { User } from '../store/repositories/users-repository.js'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import { builtinHandoff, cliHandoff, endedRunsBefore, loadHandoffTurns } from './handoff-source.js'
import { createRunService, type RunService } from './run-service.js'

describe.each(STORE_ENGINES)('handoff-source ($name)', (engine) => {
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

  /** A conversation with: Claude Code writes a file, the built-in agent proposes an edit, Codex runs. */
  async function conversationWithThreeAgents() {
    const conversation = await scope().conversations.create({
      title: 't',
      profile: 'claude-code',
      project: 'p',
    })
    const base = { cwd: '/w', conversationId: conversation.id }
    const claude = await runs.start(owner.id, {
      ...base,
      agent: 'claude-code',
      adapter: 'claude-code',
      prompt: 'Write notes.txt',
    })
    claude.emit({ type: 'text-delta', text: 'Let me write it.' })
    claude.emit({ type: 'tool-call', toolCallId: 't1', name: 'Write', input: { file_path: 'notes.txt' } })
    claude.emit({ type: 'text-delta', text: 'sub-agent chatter', parentId: 't1' })
    claude.emit({ type: 'tool-result', toolCallId: 't1', output: 'ok', isError: false })
    claude.emit({
      type: 'file-change',
      path: 'notes.txt',
      kind: 'create',
      diff: '--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n',
    })
    claude.emit({ type: 'file-change', path: 'notes.txt', kind: 'modify', diff: '--- a\n+++ b\n-two\n+2\n' })
    claude.emit({ type: 'text-delta', text: 'I wrote ' })
    claude.emit({ type: 'text-delta', text: 'notes.txt.' })
    await claude.end({ status: 'succeeded', sessionId: 'claude-session' })

    const builtin = await runs.start(owner.id, {
      ...base,
      agent: 'helper',
      adapter: 'builtin',
      prompt: 'Edit it',
    })
    builtin.emit({ type: 'text-delta', text: 'I propose an edit.' })
    const action = await scope().actions.create({
      runId: builtin.run.id,
      conversationId: conversation.id,
      tool: 'edit_file',
      toolCallId: 'c1',
      input: {},
      inputHash: 'h',
      summary: 'Edit notes.txt',
      classification: 'safe_update',
      origin: 'chat',
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    })
    // Confirmed and applied after the run ended: no event of the run says what it changed.
    const applied = await scope().actions.create({
      runId: builtin.run.id,
      conversationId: conversation.id,
      tool: 'edit_file',
      toolCallId: 'c0',
      input: {},
      inputHash: 'h0',
      summary: 'Edit README.md',
      diff: '--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-old\n+new\n',
      precondition: { path: 'README.md', sha256: 'abc' },
      classification: 'safe_update',
      origin: 'chat',
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    })
    await builtin.end({ status: 'awaiting_confirmation', reason: '2 proposal(s) wait for a decision' })
    await scope().actions.claim(applied.id, { status: 'applied' })
    await scope().actions.claim(action.id, { status: 'rejected', reason: 'no' })
    // Still pending: not a decided proposal.
    await scope().actions.create({
      runId: builtin.run.id,
      conversationId: conversation.id,
      tool: 'write_file',
      toolCallId: 'c2',
      input: {},
      inputHash: 'h2',
      summary: 'Create other.txt',
      classification: 'safe_create',
      origin: 'chat',
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    })

    const codex = await runs.start(owner.id, { ...base, agent: 'codex', adapter: 'codex', prompt: 'Review' })
    await codex.end({ status: 'failed', reason: 'codex exited with code 1' })
    return { conversation, claude: claude.run, builtin: builtin.run, codex: codex.run }
  }

  it("reads each run's final text, its files with a diff stat, and the proposals decided on it", async () => {
    const { conversation, claude, builtin, codex } = await conversationWithThreeAgents()
    const next = await runs.enqueue(owner.id, {
      agent: 'claude-code',
      adapter: 'claude-code',
      prompt: 'next',
      cwd: '/w',
      conversationId: conversation.id,
    })
    const ended = await endedRunsBefore(scope(), conversation.id, next)
    expect(ended.map((run) => run.id)).toEqual([claude.id, builtin.id, codex.id])
    const turns = await loadHandoffTurns(scope(), conversation.id, ended)
    expect(turns[0]).toMatchObject({
      agent: 'claude-code',
      prompt: 'Write notes.txt',
      finalText: 'I wrote notes.txt.',
      files: [{ path: 'notes.txt', kind: 'create', added: 3, removed: 1 }],
      proposals: [],
    })
    expect(turns[1]).toMatchObject({
      adapter: 'builtin',
      finalText: 'I propose an edit.',
      status: 'awaiting_confirmation',
      files: [{ path: 'README.md', kind: 'modify', added: 1, removed: 1 }],
      proposals: [
        { summary: 'Edit notes.txt', status: 'rejected' },
        { summary: 'Edit README.md', status: 'applied' },
      ],
    })
    expect(turns[2]).toMatchObject({ finalText: '', status: 'failed', reason: 'codex exited with code 1' })
  })

  it('hands a new CLI session every turn, and a resumed one what came after its own run', async () => {
    const { conversation, claude, builtin, codex } = await conversationWithThreeAgents()
    const next = await runs.enqueue(owner.id, {
      agent: 'claude-code',
      adapter: 'claude-code',
      prompt: 'next',
      cwd: '/w',
      conversationId: conversation.id,
    })
    const fresh = await cliHandoff(scope(), next, undefined, 200_000)
    expect(fresh?.event).toMatchObject({ mode: 'new-session', runs: [claude.id, builtin.id, codex.id] })
    expect(fresh?.text).toContain('User: Write notes.txt')

    const resumed = await cliHandoff(scope(), next, claude, 200_000)
    expect(resumed?.event).toMatchObject({ mode: 'since-last', runs: [builtin.id, codex.id] })
    expect(resumed?.text).toContain('Since you last spoke')
    expect(resumed?.text).not.toContain('User: Write notes.txt')
    expect(resumed?.text).toContain('- Edit notes.txt: rejected')

    // Resuming the newest run: nothing it has not seen.
    expect(await cliHandoff(scope(), next, codex, 200_000)).toBeUndefined()
  })

  it("gives the built-in agent the other agents' turns, reporting those after its own last run", async () => {
    const { conversation, claude, codex } = await conversationWithThreeAgents()
    const next = await runs.enqueue(owner.id, {
      agent: 'helper',
      adapter: 'builtin',
      prompt: 'next',
      cwd: '/w',
      conversationId: conversation.id,
    })
    const handoff = await builtinHandoff(scope(), conversation.id, next)
    expect([...handoff.replies.keys()]).toEqual([claude.id, codex.id])
    expect(handoff.replies.get(claude.id)).toContain('- notes.txt (create, +3 -1)')
    expect(handoff.event).toMatchObject({ mode: 'history', runs: [codex.id] })
  })
})
