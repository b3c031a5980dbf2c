// Issue 17 item 1 (redaction): a member's built-in agent read a file holding the owner's CLI session
// (daemon.json), a PAT, a sign-in link, a vaulted key, an environment key and the instance key, and got
// them back in plaintext — in the tool result, the stored messages, the events and SSE, GET
// /api/conversations/:id, and the next model request. A CLI agent's tool-result event stored them too.
// Now one redactor cuts them out of all of these, of the audit rows and of the daemon's log.
import { readFile, realpath, rm, mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAuthService } from '../../src/store/auth-service.js'
import { openStore } from '../../src/store/store.js'
import { type MockModelServer, reply, startMockModelServer } from '../fixtures/mock-model-server.js'
import { createApiClient, ENDED_STATUSES } from '../helpers/api-client.js'
import { gitIn, initRepo } from '../helpers/git-fixture.js'
import { cleanEnv, type RunningDaemon, startDaemon } from '../helpers/hangar-cli.js'
import { dumpStore } from '../helpers/store-dump.js'
import { makeTempDir } from '../helpers/store-engines.js'

const FAKE_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/bin')
const CANARY = 'canary-visible-line'
const LEAK_FILE = 'notes/leak.txt'

interface RunJson {
  id: string
  status: string
  reason: string | null
}
interface ConversationJson {
  id: string
  runs: RunJson[]
}
interface ActionJson {
  id: string
  status: string
  summary: string
}

/** Reads an SSE response as raw text until `done` holds for it. */
async function readSse(response: Response, done: (text: string) => boolean): Promise<string> {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  while (!done(text)) {
    const { value, done: ended } = await reader.read()
    if (ended) break
    text += decoder.decode(value, { stream: true })
  }
  await reader.cancel().catch(() => {})
  return text
}

describe('redaction of secrets an agent meets', () => {
  let mock: MockModelServer
  let root: string
  let dataDir: string
  let project: string
  let daemon: RunningDaemon
  let memberToken: string
  /** Every secret in the leaked file, by what it is. */
  const secrets: Record<string, string> = {}

  const { api } = createApiClient(() => ({ url: daemon.url, token: memberToken }))

  /** Each secret whole and its distinctive tail (a partial copy must not slip through either). */
  function expectNoSecret(where: string, text: string): void {
    for (const [name, secret] of Object.entries(secrets)) {
      expect(text.includes(secret), `${name} in ${where}`).toBe(false)
      expect(text.includes(secret.slice(-24)), `the end of ${name} in ${where}`).toBe(false)
    }
  }

  async function conversation(id: string): Promise<ConversationJson> {
    const { status, json } = await api<ConversationJson>('GET', `/api/conversations/${id}`)
    expect(status).toBe(200)
    return json
  }

  async function waitForRuns(id: string, done: (runs: RunJson[]) => boolean): Promise<RunJson[]> {
    const deadline = Date.now() + 120_000
    for (;;) {
      const { runs } = await conversation(id)
      if (done(runs)) return runs
      if (Date.now() > deadline) throw new Error(`runs of ${id}: ${JSON.stringify(runs)}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  beforeAll(async () => {
    mock = await startMockModelServer()
    root = await realpath(await makeTempDir('hangar-redaction-'))
    dataDir = path.join(root, 'data')
    project = path.join(root, 'project')
    await initRepo(project)
    // Shaped like no known provider key: only its registration can catch it.
    secrets.environmentKey = `env-anthropic-key-${Math.random().toString(36).slice(2)}XYZ`
    const env = cleanEnv({
      PATH: [FAKE_BIN, path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: root,
      HANGAR_LOG_LEVEL: 'debug',
      ANTHROPIC_API_KEY: secrets.environmentKey,
      ANTHROPIC_BASE_URL: mock.url,
    })
    daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: project, timeoutMs: 60_000 })
    secrets.ownerCliSession = (
      JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as { token: string }
    ).token
    const instanceKeyFile = await readFile(path.join(dataDir, 'secret.key'), 'utf8')
    secrets.instanceKey = instanceKeyFile.trim().split(':')[1]!.replace(/=+$/, '')

    // The member and the owner's other secrets, straight in the shared store (SQLite in WAL mode).
    const store = await openStore({ dataDir })
    try {
      const auth = createAuthService({ store })
      const owner = (await store.users.findOwner())!
      const member = await store.users.create({ name: 'mallory', role: 'member' })
      // `hangar up` made the checkout the first project; the owner lets mallory work on it (issue 20).
      for (const project of await store.projects.list()) await store.projects.grant(project.id, member.id)
      memberToken = (
        await auth.createToken('system', member.id, { name: 'mallory', scopes: ['api', 'approve'] })
      ).token
      secrets.ownerPat = (await auth.createToken('system', owner.id, { name: 'ci' })).token
      secrets.ownerLoginLink = await auth.createLoginLink(owner.id)
    } finally {
      await store.close()
    }
    // A key the owner keeps in the vault, stored through the daemon.
    secrets.vaultedKey = `vaulted-openai-key-${Math.random().toString(36).slice(2)}QRS`
    const stored = await api(
      'PUT',
      '/api/settings/providers/openai',
      { apiKey: secrets.vaultedKey },
      secrets.ownerCliSession,
    )
    expect(stored.status).toBe(200)

    await mkdir(path.join(project, 'notes'))
    await writeFile(
      path.join(project, LEAK_FILE),
      [
        CANARY,
        `session=${secrets.ownerCliSession}`,
        `pat=${secrets.ownerPat}`,
        `login=${daemon.url}/login#${secrets.ownerLoginLink}`,
        `vaulted=${secrets.vaultedKey}`,
        `env=${secrets.environmentKey}`,
        instanceKeyFile.trim(),
        '',
      ].join('\n'),
    )
    gitIn(project, 'add', '.')
    gitIn(project, 'commit', '-q', '-m', 'notes')
  }, 120_000)

  afterAll(async () => {
    await daemon?.stop()
    await mock?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it("never shows a member's built-in agent the secrets it reads, nor stores, streams or sends them", async () => {
    const created = await api<{ id: string }>('POST', '/api/conversations', { agent: 'builtin' })
    expect(created.status, JSON.stringify(created.json)).toBe(201)
    const conversationId = created.json.id
    const events = await fetch(`${daemon.url}/api/conversations/${conversationId}/events`, {
      headers: { authorization: `Bearer ${memberToken}` },
    })
    expect(events.status).toBe(200)
    const streamed = readSse(events, (text) => (text.match(/"type":"run-end"/g) ?? []).length >= 2)

    mock.reset()
    mock.enqueue(
      reply().tool('read_file', { path: LEAK_FILE }),
      reply().tool('grep', { pattern: 'session|pat|login|vaulted|env', path: 'notes' }),
      reply()
        .tool('run_command', { command: `cat ${LEAK_FILE}` })
        .tool('run_command', { command: 'rm -rf notes' }),
      reply().text('Done.'),
    )
    const sent = await api<RunJson>('POST', `/api/conversations/${conversationId}/messages`, {
      text: `What is in ${LEAK_FILE}?`,
    })
    expect(sent.status, JSON.stringify(sent.json)).toBe(202)
    const [first] = await waitForRuns(conversationId, (runs) => runs[0]?.status === 'awaiting_confirmation')
    expect(first?.id).toBe(sent.json.id)

    const { json: pending } = await api<ActionJson[]>('GET', '/api/actions?status=pending')
    const cat = pending.find((action) => action.summary.includes('cat'))!
    const remove = pending.find((action) => action.summary.includes('rm -rf'))!
    expect((await api('POST', `/api/actions/${cat.id}/confirm`)).status).toBe(200)
    // A reason pasted with a token in it lands in the audit row and in the model's next request.
    const rejected = await api('POST', `/api/actions/${remove.id}/reject`, {
      reason: `not with ${secrets.ownerPat} around`,
    })
    expect(rejected.status).toBe(200)
    const runs = await waitForRuns(
      conversationId,
      (all) => all.length === 2 && ENDED_STATUSES.includes(all[0]!.status),
    )
    expect(runs[0]?.status, runs[0]?.reason ?? '').toBe('succeeded')

    const sse = await streamed
    const read = JSON.stringify(await conversation(conversationId))
    const actions = JSON.stringify((await api('GET', '/api/actions')).json)
    const upstream = mock.requests.map((request) => request.rawBody).join('\n')
    const stored = await dumpStore('', dataDir)
    // The agent did read the file (and the command printed it): the canary came through, the secrets not.
    expect(mock.requests.filter((request) => request.family === 'anthropic')).toHaveLength(4)
    for (const [where, text] of Object.entries({ sse, read, actions, upstream, stored })) {
      expect(text, where).toContain(CANARY)
      expect(text, where).toContain('[redacted]')
      expectNoSecret(where, text)
    }
    const rejectedRow = JSON.stringify(await auditOf('action.reject'))
    expect(rejectedRow).toContain('not with [redacted] around')
    expectNoSecret('the log', daemon.stdout() + daemon.stderr())
  }, 240_000)

  it("stores a CLI agent's tool-result event redacted", async () => {
    const created = await api<{ id: string }>('POST', '/api/conversations', { agent: 'cursor-agent' })
    expect(created.status, JSON.stringify(created.json)).toBe(201)
    const sent = await api<RunJson>('POST', `/api/conversations/${created.json.id}/messages`, {
      text: `Read it. READ=${LEAK_FILE}`,
    })
    expect(sent.status, JSON.stringify(sent.json)).toBe(202)
    const [run] = await waitForRuns(created.json.id, (runs) => ENDED_STATUSES.includes(runs[0]?.status ?? ''))
    expect(run?.status, run?.reason ?? '').toBe('succeeded')
    const replay = await fetch(`${daemon.url}/api/runs/${run!.id}/events`, {
      headers: { authorization: `Bearer ${memberToken}` },
    })
    const sse = await readSse(replay, (text) => text.includes('"type":"run-end"'))
    expect(sse).toContain('"type":"tool-result"')
    const stored = await dumpStore('', dataDir)
    for (const [where, text] of Object.entries({ sse, stored })) {
      expect(text, where).toContain(CANARY)
      expectNoSecret(where, text)
    }
    expectNoSecret('the log', daemon.stdout() + daemon.stderr())
  }, 240_000)

  async function auditOf(action: string): Promise<unknown[]> {
    const store = await openStore({ dataDir })
    try {
      const member = (await store.users.findByName('mallory'))!
      return await store.forUser(member.id).audit.list({ action })
    } finally {
      await store.close()
    }
  }
})
