// The proxy's request log is written behind (src/runs/request-log-writer.ts): a clean stop of the runtime
// stores every row still queued, on both engines. The flush interval is stretched past the test, so only
// the stop can have written them. A run ended, or a runtime stopped, the moment its answers arrive still
// counts them: the proxy must have queued an answer's row before anything can act on the answer.
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/core/config.js'
import { createRuntime } from '../../src/main.js'
import { openStore } from '../../src/store/store.js'
import { type MockModelServer, reply, startMockModelServer } from '../fixtures/mock-model-server.js'
import { askThrough } from '../helpers/proxy-ask.js'
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

  /**
   * A runtime on a store of its own (`name`: its data dir under root; on PostgreSQL a fresh database), serving
   * its proxy, whose request log is written only when it stops (or a run's totals are read); `stop()` stops
   * both and returns the statuses of the run's rows as a new store connection reads them.
   */
  async function startRuntime(
    name: string,
    { budget = '', proxyBookkeepingDelayMs }: { budget?: string; proxyBookkeepingDelayMs?: number } = {},
  ) {
    const databaseUrl = engine === 'postgres' ? await freshPostgresUrl({ migrated: true }) : undefined
    const dataDir = path.join(root, name)
    const runtime = await createRuntime({
      dataDir,
      databaseUrl,
      config: parseConfig(`agents:\n  reviewer: { adapter: claude-code${budget} }\n`)!,
      projectDir: path.join(root, 'project'),
      env: { ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: 'sk-ant-test-key' },
      logLevel: 'silent',
      requestLogFlushMs: 3_600_000,
      ...(proxyBookkeepingDelayMs !== undefined && { proxyBookkeepingDelayMs }),
    })
    const proxy = await runtime.serveProxy()
    const ownerId = runtime.owner.id
    return {
      runtime,
      ownerId,
      async stop(runId: string) {
        await proxy.close()
        await runtime.close()
        return storedStatuses(dataDir, databaseUrl, ownerId, runId)
      },
    }
  }

  /** A run of the runtime's owner, with its own proxy route, and what asks its model through it. */
  async function runWithRoute(runtime: Awaited<ReturnType<typeof createRuntime>>) {
    const ownerId = runtime.owner.id
    // A run's own proxy token, so its rows can be listed by run.
    const run = await runtime.store
      .forUser(ownerId)
      .runs.create({ agent: 'reviewer', adapter: 'claude-code', prompt: 'p', cwd: root })
    const route = await runtime.modelProxy.routeBuiltin(ownerId, run.id, 'reviewer', null)
    return { run, ask: askThrough(route!) }
  }

  /** A run of the runtime's owner, with its own proxy route, and `count` answers of it sent through it. */
  async function runWithAnswers(runtime: Awaited<ReturnType<typeof createRuntime>>, count: number) {
    const { run, ask } = await runWithRoute(runtime)
    for (let i = 0; i < count; i++) mock.enqueue(reply().text(`answer ${i}`).usage({ input: 10, output: 5 }))
    const responses = await Promise.all(Array.from({ length: count }, ask))
    expect(responses.map((response) => response.status)).toEqual(Array(count).fill(200))
    return run
  }

  /** The statuses of the run's rows in the store, read anew once the runtime has stopped. */
  async function storedStatuses(
    dataDir: string,
    databaseUrl: string | undefined,
    userId: string,
    runId: string,
  ) {
    const store = await openStore({ dataDir, url: databaseUrl })
    try {
      return (await store.forUser(userId).proxyRequests.listForRun(runId)).map((row) => row.status)
    } finally {
      await store.close()
    }
  }

  it('stores every queued row when the runtime stops', async () => {
    const { runtime, stop } = await startRuntime('data')
    const run = await runWithAnswers(runtime, REQUESTS)
    await waitFor(() => runtime.modelProxy.queuedRequests === REQUESTS, 'every request to be metered')

    expect(await stop(run.id)).toEqual(Array(REQUESTS).fill(200))
  })

  it("counts a run's answers when the run ends, or the runtime stops, the moment they arrive", async () => {
    const { runtime, ownerId, stop } = await startRuntime('data-at-once')
    const ended = await runWithAnswers(runtime, 3)
    // No wait for the rows to be queued: as the built-in agent's run ends on its last answer.
    expect(await runtime.modelProxy.closeRun(ownerId, ended.id)).toMatchObject({
      inputTokens: 30,
      outputTokens: 15,
    })
    const stopped = await runWithAnswers(runtime, 2)

    expect(await stop(stopped.id)).toEqual([200, 200])
  })

  it('refuses the request after the one that spent the budget while that one is still to be written', async () => {
    // The bookkeeping of an answer waits an hour: only the budget check itself can have counted its cost.
    const { runtime, stop } = await startRuntime('data-budget', {
      budget: ', budget: { usd: 0.01, window: 1d }',
      proxyBookkeepingDelayMs: 3_600_000,
    })
    const { run, ask } = await runWithRoute(runtime)
    const asked = mock.requests.length
    // $0.60 at claude-sonnet-4's prices.
    mock.enqueue(reply().text('costly').usage({ input: 100_000, output: 20_000 }))
    expect((await ask()).status).toBe(200)
    const refused = await ask()
    expect(refused.status).toBe(403)
    // In the Anthropic error shape.
    expect(JSON.parse(refused.body).error.message).toMatch(
      /budget of agent "reviewer" is used up: \$0\.60 of \$0\.01/,
    )
    expect(mock.requests.length - asked).toBe(1)
    // The stop does the held bookkeeping: both requests are in the log.
    expect((await stop(run.id)).sort()).toEqual([200, 403])
  })
})
