// Issue 18 item 5: one validator for every profile. hangar.yaml's profiles got cross-reference checks;
// profiles made in the UI or API got the schema only, so a feed with an unknown source and an unknown
// target were saved (201) and the feed then vanished from the manifest without a word. Now POST/PUT
// /api/profiles run the same checks (400 invalid_request, details.fields naming key paths), and a stored
// profile that a later hangar.yaml no longer supports is reported by GET /api/profiles/:name, by its feed
// manifest, by a run submitted with it and by an `error` event when a run queued before the change starts.
// Real runtimes (SQLite) on loopback; the second one opens the first one's data dir with a smaller config.
import { execFileSync } from 'node:child_process'
import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/core/config.js'
import { createRuntime, type Runtime } from '../../src/main.js'
import type { RunningServer } from '../../src/server/listen.js'
import { writeDaemonFile } from '../../src/cli/daemon-file.js'
import { createApiClient } from '../helpers/api-client.js'
import { cleanEnv, runHangar } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

interface Field {
  path: string
  message: string
}
interface ErrorBody {
  error: { code: string; message: string; details: { fields?: Field[] } | null }
}
interface ProfileBody {
  name: string
  issues?: Field[]
}

const FULL_CONFIG = [
  'services:',
  '  market: { url: "http://127.0.0.1:9", userFeedPaths: [/api] }',
  'targets:',
  '  box: { ssh: "dev@box.example", dir: /srv/work }',
].join('\n')

describe('one validator for every profile (issue 18 item 5)', { timeout: 120_000 }, () => {
  let root: string
  let project: string
  let runtime: Runtime
  let server: RunningServer
  let token: string
  const { api } = createApiClient(() => ({ url: server.url, token }))

  async function open(configText: string): Promise<void> {
    runtime = await createRuntime({
      dataDir: path.join(root, 'data'),
      projectDir: project,
      config: parseConfig(configText),
      env: {},
      logLevel: 'silent',
    })
    server = await runtime.listen({ host: '127.0.0.1', port: 0 })
    token = (await runtime.auth.createToken('system', runtime.owner.id, { name: 'api' })).token
  }

  async function close(): Promise<void> {
    await runtime?.scheduler.stop()
    await server?.close()
    await runtime?.close()
  }

  beforeAll(async () => {
    root = await makeTempDir('hangar-profile-validation-')
    project = path.join(root, 'project')
    await mkdir(project)
    execFileSync('git', ['init', '-q'], { cwd: project })
    await open(FULL_CONFIG)
  })

  afterAll(async () => {
    await close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  const fieldsOf = (body: ErrorBody) => (body.error.details?.fields ?? []).map((field) => field.path)

  it.each([
    [
      'an unknown feed source',
      { adapter: 'claude-code', feeds: [{ source: 'nowhere', path: '/api/x', ttl: 60 }] },
      'definition.feeds[0].source',
      /unknown source "nowhere"/,
    ],
    [
      'an unknown target',
      { adapter: 'claude-code', target: 'mars' },
      'definition.target',
      /unknown target "mars"/,
    ],
    [
      'an unknown provider',
      { adapter: 'builtin', provider: 'acme' },
      'definition.provider',
      /unknown provider "acme"/,
    ],
    [
      'a duplicate feed name',
      {
        adapter: 'claude-code',
        feeds: [
          { name: 'news', source: 'market', path: '/api/a', ttl: 60 },
          { name: 'news', source: 'market', path: '/api/b', ttl: 60 },
        ],
      },
      'definition.feeds[1].name',
      /the name "news" is already used by feed #1/,
    ],
    [
      'the built-in agent with a target',
      { adapter: 'builtin', target: 'box' },
      'definition.target',
      /cannot use target "box"/,
    ],
  ])(
    'refuses %s at creation (400 with its key path) and saves nothing',
    async (_, definition, field, message) => {
      const created = await api<ErrorBody>('POST', '/api/profiles', { name: 'bad', definition })
      expect(created.status, JSON.stringify(created.json)).toBe(400)
      expect(created.json.error.code).toBe('invalid_request')
      expect(fieldsOf(created.json)).toContain(field)
      expect(created.json.error.details?.fields?.find((entry) => entry.path === field)?.message).toMatch(
        message,
      )
      expect(created.json.error.message).not.toContain('\n')
      expect((await api('GET', '/api/profiles/bad')).status).toBe(404)
    },
  )

  it('refuses the same on update, with key paths of the body sent (the definition itself)', async () => {
    const updated = await api<ErrorBody>('PUT', '/api/profiles/bad', {
      adapter: 'claude-code',
      target: 'mars',
      feeds: [{ source: 'nowhere', path: '/api/x', ttl: 60 }],
    })
    expect(updated.status).toBe(400)
    expect(fieldsOf(updated.json)).toEqual(expect.arrayContaining(['target', 'feeds[0].source']))
    // A feed path outside the service's userFeedPaths (issue 17) is part of the same answer.
    const outside = await api<ErrorBody>('PUT', '/api/profiles/bad', {
      adapter: 'claude-code',
      target: 'mars',
      feeds: [{ source: 'market', path: '/admin', ttl: 60 }],
    })
    expect(outside.status).toBe(400)
    expect(fieldsOf(outside.json)).toEqual(expect.arrayContaining(['target', 'feeds[0].path']))
    expect((await api('GET', '/api/profiles/bad')).status).toBe(404)
  })

  it('reports a stored profile that a later hangar.yaml no longer supports: on GET, in its feeds, at run start', async () => {
    const definition = {
      adapter: 'claude-code',
      target: 'box',
      feeds: [{ name: 'news', source: 'market', path: '/api/news', ttl: 60 }],
    }
    const created = await api<ProfileBody>('POST', '/api/profiles', { name: 'watcher', definition })
    expect(created.status, JSON.stringify(created.json)).toBe(201)
    const valid = await api<ProfileBody>('GET', '/api/profiles/watcher')
    expect(valid.json.issues).toEqual([])

    // The operator removes the service and the target.
    await close()
    await open('services: {}\n')

    const shown = await api<ProfileBody>('GET', '/api/profiles/watcher')
    expect(shown.status).toBe(200)
    expect(shown.json.issues?.map((issue) => issue.path)).toEqual(
      expect.arrayContaining(['target', 'feeds[0].source']),
    )
    const listed = await api<ProfileBody[]>('GET', '/api/profiles')
    expect(listed.json.find((profile) => profile.name === 'watcher')?.issues?.length).toBeGreaterThan(0)

    // `hangar feeds watcher` asks this route: the feed is listed with why it is not fetched.
    const feeds = await api<{ feeds: { name: string; refused?: string }[]; issues: Field[] }>(
      'GET',
      '/api/profiles/watcher/feeds',
    )
    expect(feeds.json.feeds.map((feed) => feed.name)).toEqual(['news'])
    expect(feeds.json.feeds[0]!.refused).toMatch(/unknown service "market"/)
    expect(feeds.json.issues.map((issue) => issue.path)).toContain('feeds[0].source')
    // The CLI itself, pointed at this daemon as `hangar up` would (its daemon file).
    await writeDaemonFile(path.join(root, 'data'), {
      url: server.url,
      pid: process.pid,
      bootId: runtime.info.bootId,
      nodeId: runtime.info.nodeId,
      version: runtime.info.version,
      startedAt: runtime.info.startedAt.toISOString(),
      token,
    })
    const cli = await runHangar(['--data-dir', path.join(root, 'data'), 'feeds', 'watcher'], {
      env: cleanEnv(),
      cwd: project,
    })
    expect(cli.code, cli.stderr).toBe(0)
    expect(cli.stderr).toMatch(/error: feeds\[0\]\.source: .*unknown source "market"/)
    expect(cli.stderr).toMatch(/error: target: unknown target "box"/)
    expect(cli.stdout).toMatch(/news .*refused: unknown service "market"/)

    // A new run is refused, naming the problem.
    const submitted = await api<ErrorBody>('POST', '/api/runs', {
      agent: 'watcher',
      prompt: 'hi',
      cwd: project,
    })
    expect(submitted.status).toBe(400)
    expect(submitted.json.error.message).toMatch(/profile "watcher".*unknown target "box"/)

    // A run queued before the change ends failed with a visible error event naming the problem.
    const queued = await runtime.runs.enqueue(runtime.owner.id, {
      agent: 'watcher',
      adapter: 'claude-code',
      model: null,
      prompt: 'hi',
      cwd: project,
      conversationId: null,
      dependsOn: [],
    })
    runtime.scheduler.kick()
    const deadline = Date.now() + 60_000
    let status = queued.status
    while (!['failed', 'succeeded', 'cancelled'].includes(status)) {
      if (Date.now() > deadline) throw new Error(`run ${queued.id} is still ${status}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
      status = (await runtime.store.forUser(runtime.owner.id).runs.get(queued.id))!.status
    }
    expect(status).toBe('failed')
    const events = await runtime.store
      .forUser(runtime.owner.id)
      .runs.listEvents(queued.id, { afterSeq: 0, limit: 100 })
    const error = events.find((event) => event.type === 'error')
    expect(error?.message).toMatch(/profile "watcher".*unknown target "box"/)
  })
})
