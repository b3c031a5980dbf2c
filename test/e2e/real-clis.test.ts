// The six real agent CLIs (pinned, from test/clis) run through the whole run path — adapter definition,
// process supervisor, stream parser, event writer, store — against the mock model server: a file
// written through the CLI's own tool, a resumed session that carries its history, a 401 that fails the
// run with a readable reason, and a cancel that leaves no process of the group behind. Each CLI gets an
// isolated HOME and only loopback. With RECORD=1 each run's raw stdout is saved as
// test/fixtures/recordings/<cli>-<scenario>.jsonl (the parser goldens are made from those).
import { execFileSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSupervisor, groupAlive } from '../../src/adapters/supervisor.js'
import type { AdapterDef, ResolvedExecutable } from '../../src/adapters/types.js'
import type { EventEnvelope } from '../../src/core/events.js'
import { createRedactor } from '../../src/core/redact.js'
import { executeCliRun } from '../../src/runs/execute-cli-run.js'
import { createRunService } from '../../src/runs/run-service.js'
import type { Run } from '../../src/store/repositories/runs-repository.js'
import type { User } from '../../src/store/repositories/users-repository.js'
import { openStore, type Store } from '../../src/store/store.js'
import {
  DEFAULT_FILE_CONTENT,
  type MockModelServer,
  startMockModelServer,
} from '../fixtures/mock-model-server.js'
import {
  endpointUrl,
  loopbackOnlyEnv,
  privateScratchRoot,
  REAL_CLI_CASES,
  startRefusingProxy,
  TEST_API_KEY,
  waitFor,
} from '../helpers/real-cli-cases.js'

const RECORDINGS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/recordings')
const RECORD = process.env.RECORD === '1'

/**
 * The adapter with its parser teed: every raw stdout line is also kept, for recordings, and every session
 * id the parser reported while the run went.
 */
function teed(adapter: AdapterDef, lines: string[], sessions: Set<string>): AdapterDef {
  return {
    ...adapter,
    createParser: (context) => {
      const parser = adapter.createParser(context)
      return {
        line: (text) => {
          lines.push(text)
          return parser.line(text)
        },
        sessionId: () => {
          const sessionId = parser.sessionId()
          if (sessionId) sessions.add(sessionId)
          return sessionId
        },
        finish: () => parser.finish(),
      }
    },
  }
}

describe.each(REAL_CLI_CASES)('real CLI: $name', (cliCase) => {
  let mock: MockModelServer
  let proxy: Awaited<ReturnType<typeof startRefusingProxy>>
  let root: string
  let home: string
  let store: Store
  let owner: User
  let executable: ResolvedExecutable
  const supervisor = createSupervisor()

  beforeAll(async () => {
    executable = await cliCase.resolve()
    mock = await startMockModelServer()
    proxy = await startRefusingProxy()
    root = await privateScratchRoot(cliCase.name)
    home = path.join(root, 'home')
    await mkdir(path.join(home, 'tmp'), { recursive: true })
    store = await openStore({ dataDir: path.join(root, 'data') })
    owner = await store.users.create({ name: 'owner', role: 'owner' })
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

  interface Outcome {
    run: Run
    events: EventEnvelope[]
    lines: string[]
    /** The session ids the parser reported while the run went (stored as they appeared). */
    sessions: Set<string>
  }

  async function run(
    cwd: string,
    prompt: string,
    options: { resumeSessionId?: string | null; signal?: AbortSignal } = {},
  ): Promise<Outcome> {
    const lines: string[] = []
    const sessions = new Set<string>()
    const runs = createRunService({
      store,
      redactor: createRedactor(),
      owner: { node: 'test', pid: process.pid, bootId: 'boot' },
    })
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
        adapter: teed(cliCase.adapter, lines, sessions),
        executable,
        prompt,
        cwd,
        model: cliCase.model,
        endpoint: {
          family: cliCase.family,
          baseUrl: endpointUrl(cliCase.family, mock.url),
          apiKey: TEST_API_KEY,
        },
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
    const events = await store.forUser(owner.id).runs.listEvents(finished.id)
    return { run: finished, events, lines, sessions }
  }

  async function record(scenario: string, cwd: string, outcome: Outcome): Promise<void> {
    if (!RECORD) return
    await mkdir(RECORDINGS, { recursive: true })
    const body = [JSON.stringify({ recordingCwd: cwd }), ...outcome.lines].join('\n')
    await writeFile(path.join(RECORDINGS, `${cliCase.name}-${scenario}.jsonl`), `${body}\n`)
  }

  const explain = (outcome: Outcome) =>
    `run ${JSON.stringify({ status: outcome.run.status, reason: outcome.run.reason })}\nlast lines:\n${outcome.lines.slice(-6).join('\n')}`
  const timeout = (cliCase.runTimeout * 2 + 30) * 1000

  it(
    'writes a file through its own tool and the run succeeds',
    async () => {
      const cwd = await workspace()
      const outcome = await run(cwd, 'Please create a file. FILE=hello.txt')
      await record('write', cwd, outcome)
      expect(outcome.run.status, explain(outcome)).toBe('succeeded')
      expect(await readFile(path.join(cwd, 'hello.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
      const types = outcome.events.map((event) => event.type)
      expect(types[0]).toBe('run-start')
      expect(types.at(-1)).toBe('run-end')
      expect(outcome.events.map((event) => event.seq)).toEqual(outcome.events.map((_, index) => index + 1))
      if (cliCase.adapter.capabilities.streaming) expect(types).toContain('tool-call')
      // Reported by the stream, or (OpenClaw, which reports none) synthesised from the workspace's diff.
      expect(outcome.events).toContainEqual(
        expect.objectContaining({ type: 'file-change', path: 'hello.txt' }),
      )
      expect(types).toContain('text-delta')
      expect(outcome.run.sessionId).toBeTruthy()
      // The session id reported while the run went (a chosen one, or the first the CLI printed) is the
      // one it ended with: what an interrupted run stored can be resumed.
      expect([...outcome.sessions]).toEqual([outcome.run.sessionId])
      // The key went to the model in a header, never into the stored events.
      expect(
        mock.requests.some((request) =>
          Object.values(request.headers).some((value) => value.includes(TEST_API_KEY)),
        ),
      ).toBe(true)
      expect(JSON.stringify(outcome.events)).not.toContain(TEST_API_KEY)
      expect(proxy.attempts).toEqual([])
    },
    timeout,
  )

  it(
    'resumes its own session, carrying the earlier history',
    async () => {
      const cwd = await workspace()
      const first = await run(cwd, 'Please create a file. FILE=hello.txt')
      expect(first.run.status, explain(first)).toBe('succeeded')
      const before = mock.requests.length
      const second = await run(cwd, 'Now another one. FILE=second.txt', {
        resumeSessionId: first.run.sessionId,
      })
      await record('resume', cwd, second)
      expect(second.run.status, explain(second)).toBe('succeeded')
      expect(await readFile(path.join(cwd, 'second.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
      const later = mock.requests.slice(before).filter((request) => request.method === 'POST')
      expect(later.some((request) => request.rawBody.includes('FILE=hello.txt'))).toBe(true)
      expect(proxy.attempts).toEqual([])
    },
    timeout * 2,
  )

  it(
    'fails the run with a readable reason when the model answers 401',
    async () => {
      const cwd = await workspace()
      const outcome = await run(cwd, 'Please answer. FAIL=401')
      await record('error401', cwd, outcome)
      expect(outcome.run.status, explain(outcome)).toBe('failed')
      expect(outcome.run.reason ?? '', explain(outcome)).toMatch(/401|authenticat|unauthori[sz]ed|api key/i)
      expect(outcome.events.some((event) => event.type === 'error')).toBe(true)
      expect(outcome.events.at(-1)).toMatchObject({ type: 'run-end', status: 'failed' })
    },
    timeout,
  )

  it(
    'is cancelled mid-run and leaves no process of its group behind',
    async () => {
      const cwd = await workspace()
      const controller = new AbortController()
      const target = path.join(cwd, 'x.txt')
      const running = run(cwd, 'Please create a file. FILE=x.txt HANG', { signal: controller.signal })
      expect(await waitFor(() => existsSync(target), cliCase.runTimeout * 1000)).toBe(true)
      // The follow-up model request (the one that hangs) shows the tool result reached the model.
      const writtenAt = statSync(target).mtimeMs
      const followUp = () =>
        mock.requests.some(
          (request) => request.method === 'POST' && request.receivedAt.getTime() >= writtenAt - 5,
        )
      expect(await waitFor(followUp, 15_000)).toBe(true)
      await new Promise((resolve) => setTimeout(resolve, 300))
      controller.abort()
      const outcome = await running
      await record('cancel', cwd, outcome)
      expect(outcome.run.status, explain(outcome)).toBe('cancelled')
      expect(outcome.events.at(-1)).toMatchObject({ type: 'run-end', status: 'cancelled' })
      expect(outcome.run.agentPgid).toBeGreaterThan(0)
      // Named before the cancel (issue 18 item 4): the cancelled run can be resumed.
      expect(outcome.run.sessionId, explain(outcome)).toBeTruthy()
      expect(groupAlive(outcome.run.agentPgid!)).toBe(false)
    },
    timeout,
  )
})
