// Issue 23: `sandbox: workspace` is the default for profiles made after sandboxes landed; existing ones keep
// theirs. A profile saved through the API (as the UI does) without a sandbox gets `workspace`; one stored
// before keeps no key (its project's default, else off), also through a full replace; a sandboxed profile
// that could not reach its model (proxy: false, no allowed hosts) is refused when saved. GET /api/profiles
// and GET /api/agents say whether each profile's runs are sandboxed and whether bubblewrap works here.
// In-process daemons (SQLite, the real bubblewrap probe) on loopback.
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { gitRepo, type InProcessDaemon, startInProcessDaemon } from '../helpers/in-process-daemon.js'
import { STORE_ENGINES } from '../helpers/store-engines.js'

interface ProfileBody {
  name: string
  definition: { sandbox?: string; sandboxHosts?: string[]; proxy?: boolean }
  sandboxMode?: string
}
interface ErrorBody {
  error: { code: string; message: string; details: { fields?: { path: string; message: string }[] } | null }
}
interface AgentsBody {
  profiles: { name: string; sandboxMode?: string }[]
  sandbox?: { available: boolean; by?: string; reason?: string }
}

const CONFIG = [
  'agents:',
  '  yaml-open: { adapter: codex }',
  '  yaml-boxed: { adapter: codex, sandbox: workspace }',
].join('\n')

describe('the sandbox of new and existing profiles (issue 23)', { timeout: 120_000 }, () => {
  let daemon: InProcessDaemon
  const api = <T>(method: string, route: string, body?: unknown) => daemon.api<T>(method, route, body)

  beforeAll(async () => {
    daemon = await startInProcessDaemon(STORE_ENGINES[0]!, 'hangar-profile-sandbox-', { configText: CONFIG })
  })
  afterAll(() => daemon?.close())

  it('gives a new profile sandbox: workspace unless it says otherwise', async () => {
    const created = await api<ProfileBody>('POST', '/api/profiles', {
      name: 'fresh',
      definition: { adapter: 'claude-code' },
    })
    expect(created.status, JSON.stringify(created.json)).toBe(201)
    expect(created.json.definition.sandbox).toBe('workspace')
    const chosen = await api<ProfileBody>('POST', '/api/profiles', {
      name: 'open',
      definition: { adapter: 'claude-code', sandbox: 'off' },
    })
    expect(chosen.json.definition.sandbox).toBe('off')
    // PUT of a name not stored yet is a creation too.
    const put = await api<ProfileBody>('PUT', '/api/profiles/put-new', { adapter: 'codex' })
    expect(put.status).toBe(200)
    expect(put.json.definition.sandbox).toBe('workspace')
    // A full replace that leaves the key out keeps it (never loosened by omission).
    const replaced = await api<ProfileBody>('PUT', '/api/profiles/fresh', {
      adapter: 'claude-code',
      model: 'x',
    })
    expect(replaced.json.definition.sandbox).toBe('workspace')
    const listed = await api<ProfileBody[]>('GET', '/api/profiles')
    const modes = Object.fromEntries(listed.json.map((profile) => [profile.name, profile.sandboxMode]))
    expect(modes).toMatchObject({
      fresh: 'workspace',
      open: 'off',
      'put-new': 'workspace',
      'yaml-open': 'off',
      'yaml-boxed': 'workspace',
    })
  })

  it('lets a profile stored before sandboxes keep no setting, through a full replace too', async () => {
    const { runtime } = daemon
    await runtime.store.forUser(runtime.owner.id).profiles.put('legacy', { adapter: 'codex', proxy: true })
    const replaced = await api<ProfileBody>('PUT', '/api/profiles/legacy', { adapter: 'codex', model: 'm' })
    expect(replaced.status, JSON.stringify(replaced.json)).toBe(200)
    expect(replaced.json.definition.sandbox).toBeUndefined()
    const listed = await api<ProfileBody[]>('GET', '/api/profiles')
    expect(listed.json.find((profile) => profile.name === 'legacy')?.sandboxMode).toBe('off')
  })

  it('refuses a sandboxed profile that could not reach its model, and saves nothing', async () => {
    const refused = await api<ErrorBody>('POST', '/api/profiles', {
      name: 'stranded',
      definition: { adapter: 'codex', proxy: false },
    })
    expect(refused.status, JSON.stringify(refused.json)).toBe(400)
    const field = refused.json.error.details?.fields?.find((entry) => entry.path === 'definition.sandbox')
    expect(field?.message).toMatch(/proxy: false: a sandboxed agent reaches only Hangar's proxy/)
    expect(refused.json.error.message).toMatch(/set sandbox: off/)
    expect((await api('GET', '/api/profiles/stranded')).status).toBe(404)
    const hosts = await api<ProfileBody>('POST', '/api/profiles', {
      name: 'stranded',
      definition: { adapter: 'codex', proxy: false, sandboxHosts: ['api.openai.com'] },
    })
    expect(hosts.status, JSON.stringify(hosts.json)).toBe(201)
  })

  it('says on GET /api/agents whether bubblewrap confines runs here, and each profile’s mode', async () => {
    const agents = await api<AgentsBody>('GET', '/api/agents')
    expect(agents.json.sandbox).toMatchObject({ available: true, by: expect.stringContaining('bubblewrap') })
    expect(agents.json.profiles).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'yaml-open', sandboxMode: 'off' }),
        expect.objectContaining({ name: 'yaml-boxed', sandboxMode: 'workspace' }),
      ]),
    )
  })

  it('says why not, with the fix, where bubblewrap is missing', async () => {
    const without = await startInProcessDaemon(STORE_ENGINES[0]!, 'hangar-profile-nobwrap-', {
      env: { HANGAR_BWRAP: path.join(daemon.root, 'no-bwrap') },
    })
    try {
      const agents = await without.api<AgentsBody>('GET', '/api/agents')
      expect(agents.json.sandbox?.available).toBe(false)
      expect(agents.json.sandbox?.reason).toMatch(/bubblewrap was not found.*apt-get install bubblewrap/)
    } finally {
      await without.close()
    }
  })
})

describe("a run takes its registered project's sandbox default", { timeout: 120_000 }, () => {
  let mock: MockModelServer
  let daemon: InProcessDaemon

  beforeAll(async () => {
    mock = await startMockModelServer()
    // The default is set for `shop`, a registered project: not for the daemon's own directory.
    daemon = await startInProcessDaemon(STORE_ENGINES[0]!, 'hangar-project-sandbox-', {
      configText: 'projects:\n  shop: { sandbox: workspace }\n',
      env: { ANTHROPIC_API_KEY: 'sk-ant-test-project-sandbox-0123', ANTHROPIC_BASE_URL: mock.url },
    })
    daemon.runtime.scheduler.start()
  })
  afterAll(async () => {
    await daemon?.runtime.scheduler.stop()
    await daemon?.close()
    await mock?.close()
  })

  async function runStartOf(
    body: Record<string, unknown>,
    as: { token?: string; userId?: string } = {},
  ): Promise<{ sandbox?: { mode: string } }> {
    const submitted = await daemon.api<{ id: string }>('POST', '/api/runs', body, as.token)
    expect(submitted.status, JSON.stringify(submitted.json)).toBe(201)
    let start: { type: string; sandbox?: { mode: string } } | undefined
    await expect
      .poll(
        async () => {
          const { runtime } = daemon
          const stored = await runtime.store
            .forUser(as.userId ?? runtime.owner.id)
            .runs.listEvents(submitted.json.id, { afterSeq: 0, limit: 5 })
          start = stored.find((event) => event.type === 'run-start') as typeof start
          return start !== undefined
        },
        { timeout: 60_000, interval: 200 },
      )
      .toBe(true)
    return start!
  }

  it('sandboxes a bare agent in shop, and not in the daemon’s own directory', async () => {
    const shop = path.join(daemon.root, 'shop')
    await mkdir(shop)
    gitRepo(shop)
    const added = await daemon.api<{ id: string; name: string }>('POST', '/api/projects', { path: shop })
    expect(added.json.name).toBe('shop')
    const inShop = await runStartOf({ agent: 'builtin', prompt: 'Hello. NOTOOL', projectId: added.json.id })
    expect(inShop.sandbox).toMatchObject({ mode: 'workspace' })
    const atHome = await runStartOf({ agent: 'builtin', prompt: 'Hello. NOTOOL', cwd: daemon.daemonDir })
    expect(atHome.sandbox).toMatchObject({ mode: 'off' })
  })

  it('binds a member to the project’s sandbox: their own sandbox: off profile runs sandboxed there', async () => {
    const { runtime } = daemon
    const shop = (await runtime.store.projects.findByName('shop'))!
    const member = await runtime.store.users.create({ name: 'member', role: 'member' })
    const memberToken = await daemon.tokenFor(member)
    expect((await daemon.api('PUT', `/api/projects/${shop.id}/members/${member.id}`)).status).toBeLessThan(
      300,
    )
    const loose = { name: 'loose', definition: { adapter: 'builtin', sandbox: 'off' } }
    for (const token of [memberToken, undefined])
      expect((await daemon.api('POST', '/api/profiles', loose, token)).status).toBe(201)
    const body = { agent: 'loose', prompt: 'Hello. NOTOOL', projectId: shop.id }
    const asMember = await runStartOf(body, { token: memberToken, userId: member.id })
    expect(asMember.sandbox).toMatchObject({ mode: 'workspace' })
    // The owner set the default, and may choose otherwise.
    expect((await runStartOf(body)).sandbox).toMatchObject({ mode: 'off' })
  })
})
