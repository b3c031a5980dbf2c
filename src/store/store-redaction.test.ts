// Issue 17 item 1: the owner's session and keys reached stored messages, audit details and action results
// in plaintext (a member's agent read them from a file). Everything written goes through the store's one
// redactor; data stored before that existed is redacted when it is read back.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createRedactor, type Redactor } from '../core/redact.js'
import { dumpStore } from '../../test/helpers/store-dump.js'
import { STORE_ENGINES, type TestStore } from '../../test/helpers/store-engines.js'
import type { User } from './repositories/users-repository.js'
import { openStore, type Store } from './store.js'

const SESSION = `hgs_abcdefghijkl_${'Mn4'.repeat(12)}Rr`
const KEY = 'vaulted-or-env-key-0x5eed'

describe.each(STORE_ENGINES)('store redaction ($name)', (engine) => {
  let testStore: TestStore
  let store: Store
  let redactor: Redactor
  let owner: User

  beforeEach(async () => {
    redactor = createRedactor()
    redactor.add(KEY)
    testStore = await engine.open({ redactor })
    store = testStore.store
    owner = await store.users.create({ name: 'owner', role: 'owner' })
  })
  afterEach(async () => {
    await testStore.dispose()
  })

  const leak = `session ${SESSION} key ${KEY}`
  const expectNoSecret = (text: string) => {
    expect(text).not.toContain(SESSION.slice(17))
    expect(text).not.toContain(KEY)
  }

  it('stores messages, audit details and action results redacted', async () => {
    const scope = store.forUser(owner.id)
    const conversation = await scope.conversations.create({ title: 't', profile: 'builtin', project: 'p' })
    await scope.conversations.appendMessage(conversation.id, {
      role: 'user',
      content: [{ type: 'text', text: leak }],
    })
    await scope.audit.append({ actor: 'system', action: 'test', details: { note: leak } })
    const action = await scope.actions.create({
      tool: 'run_command',
      input: { command: 'cat leak.txt' },
      inputHash: 'h',
      summary: 'Run cat leak.txt',
      classification: 'destructive_update',
      origin: 'chat',
      expiresAt: '2999-01-01T00:00:00.000Z',
    })
    await scope.actions.claim(action.id, { status: 'applying' })
    await scope.actions.settle(action.id, {
      status: 'applied',
      result: { content: leak, isError: false },
      from: 'applying',
    })
    const claimed = await scope.actions.create({
      tool: 'run_command',
      input: { command: 'true' },
      inputHash: 'h2',
      summary: 'Run true',
      classification: 'destructive_update',
      origin: 'chat',
      expiresAt: '2999-01-01T00:00:00.000Z',
    })
    await scope.actions.claim(claimed.id, { status: 'rejected', result: { content: leak, isError: true } })

    const dump = await dumpStore(testStore.databaseUrl, testStore.dataDir)
    expect(dump).toContain('Run cat leak.txt')
    expectNoSecret(dump)
    const [message] = await scope.conversations.listMessages(conversation.id)
    expect(message?.message).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'session [redacted] key [redacted]' }],
    })
    expect((await scope.audit.list())[0]?.details).toEqual({ note: 'session [redacted] key [redacted]' })
  })

  it('redacts messages and events stored before redaction when they are read', async () => {
    // A store whose redactor does not know the key stands for data written before this change.
    const unaware = await openStore({
      dataDir: testStore.dataDir,
      ...(testStore.databaseUrl && { url: testStore.databaseUrl }),
    })
    try {
      const scope = unaware.forUser(owner.id)
      const conversation = await scope.conversations.create({ title: 't', profile: 'builtin', project: 'p' })
      await scope.conversations.appendMessage(conversation.id, {
        role: 'tool',
        toolCallId: 'c1',
        toolName: 'read_file',
        content: `key ${KEY}`,
      })
      const run = await scope.runs.create({ agent: 'builtin', adapter: 'builtin', prompt: 'p', cwd: '/tmp' })
      await scope.runs.appendEvents([
        {
          v: 1,
          runId: run.id,
          seq: 1,
          ts: '2026-01-01T00:00:00.000Z',
          type: 'tool-result',
          toolCallId: 'c1',
          output: `key ${KEY}`,
          isError: false,
        },
      ])
      expect(await dumpStore(testStore.databaseUrl, testStore.dataDir)).toContain(KEY)

      const reader = store.forUser(owner.id)
      expectNoSecret(JSON.stringify(await reader.conversations.listMessages(conversation.id)))
      const events = await reader.runs.listEvents(run.id)
      expect(events[0]).toMatchObject({ type: 'tool-result', output: 'key [redacted]' })
    } finally {
      await unaware.close()
    }
  })
})
