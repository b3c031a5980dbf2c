// One real CLI driven through the whole run path — adapter definition, process supervisor, stream parser,
// event writer, store — against the mock model, with an isolated HOME and only loopback: what the real-CLI
// suites (real-clis, real-cli-permissions) share. Call it inside a `describe`: it registers the suite's
// beforeAll/afterAll (a mock model, a refusing proxy, a scratch store) and returns what the tests use.
import { execFileSync } from 'node:child_process'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { createSupervisor } from '../../src/adapters/supervisor.js'
import type { AdapterDef, ResolvedExecutable } from '../../src/adapters/types.js'
import type { EventEnvelope } from '../../src/core/events.js'
import type { PermissionsConfig } from '../../src/core/permissions.js'
import { createRedactor } from '../../src/core/redact.js'
import { executeCliRun } from '../../src/runs/execute-cli-run.js'
import { createRunService } from '../../src/runs/run-service.js'
import type { Run } from '../../src/store/repositories/runs-repository.js'
import type { User } from '../../src/store/repositories/users-repository.js'
import { openStore, type Store } from '../../src/store/store.js'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import {
  endpointUrl,
  loopbackOnlyEnv,
  privateScratchRoot,
  type RealCliCase,
  startRefusingProxy,
  TEST_API_KEY,
} from './real-cli-cases.js'

export interface RealCliOutcome {
  run: Run
  events: EventEnvelope[]
}

export interface RealCliRunOptions {
  /** The profile's `permissions` (absent: the default mode). */
  permissions?: PermissionsConfig
  resumeSessionId?: string | null
  signal?: AbortSignal
  /** The adapter to run with, when a test wraps the case's own (to tee its parser, say). */
  adapter?: AdapterDef
}

export interface RealCliHarness {
  readonly mock: MockModelServer
  /** Every attempt to leave loopback (an entry is a failure). */
  readonly proxyAttempts: string[]
  /** A fresh git repository with a README, for one test's runs. */
  workspace(): Promise<string>
  run(cwd: string, prompt: string, options?: RealCliRunOptions): Promise<RealCliOutcome>
}

export function useRealCli(cliCase: RealCliCase, scratchName: string): RealCliHarness {
  let mock: MockModelServer
  let proxy: Awaited<ReturnType<typeof startRefusingProxy>>
  let root: string
  let home: string
  let store: Store
  let owner: User
  let executable: ResolvedExecutable
  let runs: ReturnType<typeof createRunService>
  const supervisor = createSupervisor()

  beforeAll(async () => {
    executable = await cliCase.resolve()
    mock = await startMockModelServer()
    proxy = await startRefusingProxy()
    root = await privateScratchRoot(scratchName)
    home = path.join(root, 'home')
    await mkdir(path.join(home, 'tmp'), { recursive: true })
    store = await openStore({ dataDir: path.join(root, 'data') })
    owner = await store.users.create({ name: 'owner', role: 'owner' })
    // One run service for the suite's runs, as the daemon has one for all of its.
    runs = createRunService({
      store,
      redactor: createRedactor(),
      owner: { node: 'test', pid: process.pid, bootId: 'boot' },
    })
  }, 180_000)

  afterAll(async () => {
    await mock?.close()
    await proxy?.close()
    await store?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  async function workspace(): Promise<string> {
    const directory = path.join(root, `workspace-${Math.random().toString(36).slice(2, 8)}`)
    await mkdir(directory)
    execFileSync('git', ['init', '-q'], { cwd: directory })
    await writeFile(path.join(directory, 'README.md'), '# scratch\n')
    return directory
  }

  async function run(cwd: string, prompt: string, options: RealCliRunOptions = {}): Promise<RealCliOutcome> {
    const active = await runs.start(owner.id, {
      agent: cliCase.adapter.id,
      adapter: cliCase.adapter.id,
      prompt,
      cwd,
    })
    const timeout = AbortSignal.timeout(cliCase.runTimeout * 1000)
    const end = await executeCliRun(
      active,
      {
        agent: cliCase.adapter.id,
        adapter: options.adapter ?? cliCase.adapter,
        executable,
        prompt,
        cwd,
        model: cliCase.model,
        endpoint: {
          family: cliCase.family,
          baseUrl: endpointUrl(cliCase.family, mock.url),
          apiKey: TEST_API_KEY,
        },
        permissions: options.permissions,
        resumeSessionId: options.resumeSessionId ?? undefined,
        env: {
          PATH: [path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
          LANG: 'C.UTF-8',
          HOME: home,
          TMPDIR: path.join(home, 'tmp'),
          ...loopbackOnlyEnv(proxy.url),
          ...cliCase.env,
        },
        timeoutSeconds: cliCase.runTimeout,
      },
      {
        supervisor,
        signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
        runFilesRoot: path.join(root, 'data', 'runs'),
      },
    )
    const finished = await active.end(end)
    return { run: finished, events: await store.forUser(owner.id).runs.listEvents(finished.id) }
  }

  return {
    get mock() {
      return mock
    },
    get proxyAttempts() {
      return proxy.attempts
    },
    workspace,
    run,
  }
}
