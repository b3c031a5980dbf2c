// A proxied request of a profile made in the UI or API checks its budget, resolves its feeds and its
// upstream, and each needs the profile. Failure mode fixed here: each read it from the store on its own, up
// to three reads of the same row per request. Now one read per request — and still one per request, so a
// change to the profile applies to the next request.
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/core/config.js'
import { createRuntime } from '../../src/main.js'
import type { UserScope } from '../../src/store/store.js'
import { type MockModelServer, reply, startMockModelServer } from '../fixtures/mock-model-server.js'
import { askThrough } from '../helpers/proxy-ask.js'
import { freshPostgresUrl } from '../helpers/store-engines.js'

const REQUESTS = 4

describe.each(['sqlite', 'postgres'] as const)('proxy profile lookups (%s)', (engine) => {
  let mock: MockModelServer
  let root: string

  beforeAll(async () => {
    mock = await startMockModelServer()
    root = await mkdtemp(path.join(os.tmpdir(), 'hangar-profile-lookups-'))
    await mkdir(path.join(root, 'project'))
  })
  afterAll(async () => {
    await mock?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('reads a UI-made profile once per proxied request, and a change applies to the next request', async () => {
    const runtime = await createRuntime({
      dataDir: path.join(root, 'data'),
      databaseUrl: engine === 'postgres' ? await freshPostgresUrl({ migrated: true }) : undefined,
      config: parseConfig('proxy: { feedTimeoutMs: 3000 }\n')!,
      projectDir: path.join(root, 'project'),
      env: { ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: 'sk-ant-test-key' },
      logLevel: 'silent',
    })
    const proxy = await runtime.serveProxy()
    try {
      const ownerId = runtime.owner.id
      const profiles = runtime.store.forUser(ownerId).profiles
      await profiles.put('mine', { adapter: 'claude-code', budget: { usd: 5, window: '1d' } })
      const run = await runtime.store
        .forUser(ownerId)
        .runs.create({ agent: 'mine', adapter: 'claude-code', prompt: 'p', cwd: root })
      const route = await runtime.modelProxy.routeBuiltin(ownerId, run.id, 'mine', null)

      // Every read of a stored profile, whoever asks.
      let reads = 0
      const forUser = runtime.store.forUser
      runtime.store.forUser = (userId: string): UserScope => {
        const scope = forUser(userId)
        const get = scope.profiles.get.bind(scope.profiles)
        return {
          ...scope,
          profiles: { ...scope.profiles, get: (name: string) => (reads++, get(name)) },
        }
      }
      const ask = askThrough(route!)

      for (let index = 0; index < REQUESTS; index++) {
        mock.enqueue(reply().text(`answer ${index}`).usage({ input: 10, output: 5 }))
        expect((await ask()).status).toBe(200)
        expect(reads).toBe(index + 1)
      }

      // The budget, made smaller than what was spent: the next request sees it.
      await profiles.put('mine', { adapter: 'claude-code', budget: { usd: 0.000001, window: '1d' } })
      const refused = await ask()
      expect(refused.status).not.toBe(200)
      expect(refused.body).toContain('budget')
      expect(reads).toBe(REQUESTS + 1)
    } finally {
      await proxy.close()
      await runtime.close()
    }
  })
})
