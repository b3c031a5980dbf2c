// The proxy's request log is written behind (src/runs/request-log-writer.ts): a clean stop of the runtime
// stores every row still queued, on both engines. The flush interval is stretched past the test, so only
// the stop can have written them.
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/core/config.js'
import { createRuntime } from '../../src/main.js'
import { openStore } from '../../src/store/store.js'
import { type MockModelServer, reply, startMockModelServer } from '../fixtures/mock-model-server.js'
import { freshPostgresUrl } from '../helpers/store-engines.js'

const REQUESTS = 12

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe.each(['sqlite', 'postgres'] as const)('proxy request log on a clean stop (%s)', (engine) => {
  let mock: MockModelServer
  let root: string

  beforeAll(async () => {
    mock = await startMockModelServer()
    root = await mkdtemp(path.join(os.tmpdir(), 'hangar-write-behind-'))
    await mkdir(path.join(root, 'project'))
  })
  afterAll(async () => {
    await mock?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('stores every queued row when the runtime stops', async () => {
    const databaseUrl = engine === 'postgres' ? await freshPostgresUrl({ migrated: true }) : undefined
    const dataDir = path.join(root, 'data')
    const runtime = await createRuntime({
      dataDir,
      databaseUrl,
      config: parseConfig('agents:\n  reviewer: { adapter: claude-code }\n')!,
      projectDir: path.join(root, 'project'),
      env: { ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: 'sk-ant-test-key' },
      logLevel: 'silent',
      requestLogFlushMs: 3_600_000,
    })
    const proxy = await runtime.serveProxy()
    const ownerId = runtime.owner.id
    // A run's own proxy token, so its rows can be listed by run.
    const run = await runtime.store
      .forUser(ownerId)
      .runs.create({ agent: 'reviewer', adapter: 'claude-code', prompt: 'p', cwd: root })
    const route = await runtime.modelProxy.routeBuiltin(ownerId, run.id, 'reviewer', null)
    for (let i = 0; i < REQUESTS; i++)
      mock.enqueue(reply().text(`answer ${i}`).usage({ input: 10, output: 5 }))
    const responses = await Promise.all(
      Array.from({ length: REQUESTS }, () =>
        fetch(`${route!.baseUrlFor('anthropic')}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': route!.apiKey },
          body: JSON.stringify({
            model: 'claude-sonnet-4-6',
            max_tokens: 10,
            messages: [{ role: 'user', content: 'hi' }],
          }),
        }).then(async (response) => ({ status: response.status, body: await response.text() })),
      ),
    )
    expect(responses.map((response) => response.status)).toEqual(Array(REQUESTS).fill(200))
    await waitFor(() => runtime.modelProxy.queuedRequests === REQUESTS, 'every request to be metered')
    await proxy.close()
    await runtime.close()

    const store = await openStore({ dataDir, url: databaseUrl })
    try {
      const rows = await store.forUser(ownerId).proxyRequests.listForRun(run.id)
      expect(rows.map((row) => row.status)).toEqual(Array(REQUESTS).fill(200))
    } finally {
      await store.close()
    }
  })
})
