// Issue 17 item 11: profiles made in the UI or API behaved unlike hangar.yaml ones after a confirm. The run
// that continues a built-in agent's turn once its last proposal is decided (`hangar actions confirm`) read
// the profile from hangar.yaml only, so a stored profile's continuation ran with default settings: the
// default provider's endpoint instead of the profile's, without its autoApprove. Now every continuation
// resolves the profile as its first run did — here, a continuation must reach the profile's provider (a
// second mock model server) and never the default one.
// A real runtime in this process (SQLite, loopback listener, scheduler) in front of two mock model servers.
import { execFileSync } from 'node:child_process'
import { mkdir, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/core/config.js'
import { createRuntime, type Runtime } from '../../src/main.js'
import type { RunningServer } from '../../src/server/listen.js'
import type { Run } from '../../src/store/repositories/runs-repository.js'
import {
  DEFAULT_FILE_CONTENT,
  type MockModelServer,
  startMockModelServer,
} from '../fixtures/mock-model-server.js'
import { makeTempDir } from '../helpers/store-engines.js'

const GATEWAY_KEY = 'sk-gateway-operator-key-00000000001'
const ENDED = ['succeeded', 'failed', 'cancelled', 'interrupted', 'awaiting_confirmation']

describe(
  'a UI-made built-in profile continues on its own provider (issue 17 item 11)',
  { timeout: 120_000 },
  () => {
    /** Where the default provider (ANTHROPIC_BASE_URL) points: a continuation must never come here. */
    let fallback: MockModelServer
    /** The profile's provider `gw` (hangar.yaml `providers.gw.baseUrl`). */
    let gateway: MockModelServer
    let root: string
    let project: string
    let runtime: Runtime
    let server: RunningServer
    let ownerPat: string

    beforeAll(async () => {
      ;[fallback, gateway] = await Promise.all([startMockModelServer(), startMockModelServer()])
      root = await makeTempDir('hangar-user-continuation-')
      project = path.join(root, 'project')
      await mkdir(project)
      execFileSync('git', ['init', '-q'], { cwd: project })
      runtime = await createRuntime({
        dataDir: path.join(root, 'data'),
        config: parseConfig(
          ['providers:', '  gw:', `    baseUrl: ${gateway.url}/v1`, '    apiKeyEnv: GW_API_KEY'].join('\n'),
        ),
        projectDir: project,
        env: {
          ANTHROPIC_BASE_URL: fallback.url,
          ANTHROPIC_API_KEY: 'sk-ant-fallback-key-000000000000002',
          GW_API_KEY: GATEWAY_KEY,
        },
        logLevel: 'silent',
      })
      server = await runtime.listen({ host: '127.0.0.1', port: 0 })
      ownerPat = (
        await runtime.auth.createToken('system', runtime.owner.id, { name: 'decider', scopes: ['approve'] })
      ).token
      // What POST /api/profiles stores for the owner.
      await runtime.store
        .forUser(runtime.owner.id)
        .profiles.put('gwbot', { adapter: 'builtin', provider: 'gw', model: 'gw-1' })
      runtime.scheduler.start(100)
    })

    afterAll(async () => {
      await runtime?.scheduler.stop()
      await server?.close()
      await runtime?.close()
      await Promise.all([fallback?.close(), gateway?.close()])
      if (root) await rm(root, { recursive: true, force: true })
    })

    beforeEach(() => {
      fallback.reset()
      gateway.reset()
    })

    async function waitForEnd(runId: string): Promise<Run> {
      const deadline = Date.now() + 60_000
      for (;;) {
        const run = await runtime.store.forUser(runtime.owner.id).runs.get(runId)
        if (run && ENDED.includes(run.status)) return run
        if (Date.now() > deadline) throw new Error(`run ${runId} is still ${run?.status}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }

    /** A first run of the stored profile that proposes writing `file` and waits for a decision. */
    async function proposeWrite(file: string): Promise<{ actionId: string; runId: string }> {
      const run = await runtime.submitRun(runtime.owner.id, {
        agent: 'gwbot',
        prompt: `Please create a file. FILE=${file}`,
        cwd: project,
      })
      const waiting = await waitForEnd(run.id)
      expect(waiting.status, waiting.reason ?? '').toBe('awaiting_confirmation')
      const [action] = await runtime.actions.list(runtime.owner.id, { status: 'pending' })
      expect(action).toMatchObject({ runId: run.id, tool: 'write_file' })
      // The first run already used the profile's provider.
      expect(gateway.requests.length).toBeGreaterThan(0)
      gateway.reset()
      return { actionId: action!.id, runId: run.id }
    }

    function expectOnTheProfilesProvider(continuation: Run) {
      expect(continuation.status, continuation.reason ?? '').toBe('succeeded')
      expect(continuation.agent).toBe('gwbot')
      const generations = gateway.requests.filter((request) => request.family === 'openai-chat')
      expect(generations.length).toBeGreaterThan(0)
      expect(generations.every((request) => request.headers.authorization === `Bearer ${GATEWAY_KEY}`)).toBe(
        true,
      )
      expect(fallback.requests).toHaveLength(0)
    }

    it('after a confirm over REST', async () => {
      const { actionId, runId } = await proposeWrite('rest.txt')
      const response = await fetch(`${server.url}/api/actions/${actionId}/confirm`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ownerPat}`, 'content-type': 'application/json' },
        body: '{}',
      })
      const body = (await response.json()) as { continuation: Run | null }
      expect(response.status, JSON.stringify(body)).toBe(200)
      expect(body.continuation?.continues).toBe(runId)
      expectOnTheProfilesProvider(await waitForEnd(body.continuation!.id))
      expect(await readFile(path.join(project, 'rest.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
    })

    it('after `hangar actions confirm` (the CLI continues the run in its own process)', async () => {
      const { actionId, runId } = await proposeWrite('cli.txt')
      // What the CLI's `actions confirm` does: decide, then run the continuation itself.
      const decided = await runtime.actions.decide({ via: 'local', user: runtime.owner }, actionId, {
        kind: 'confirm',
      })
      expect(decided.action.status).toBe('applied')
      const continuation = await runtime.builtin.continueAfter(runtime.owner.id, runId)
      expect(continuation.continues).toBe(runId)
      expectOnTheProfilesProvider(continuation)
      expect(await readFile(path.join(project, 'cli.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
    })
  },
)
