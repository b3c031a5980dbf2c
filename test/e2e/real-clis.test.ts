// The six real agent CLIs (pinned, from test/clis) run through the whole run path — adapter definition,
// process supervisor, stream parser, event writer, store — against the mock model server: a file
// written through the CLI's own tool, a resumed session that carries its history, a 401 that fails the
// run with a readable reason, and a cancel that leaves no process of the group behind. Each CLI gets an
// isolated HOME and only loopback. With RECORD=1 each run's raw stdout is saved as
// test/fixtures/recordings/<cli>-<scenario>.jsonl (the parser goldens are made from those).
import { existsSync, statSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { groupAlive } from '../../src/adapters/supervisor.js'
import type { AdapterDef } from '../../src/adapters/types.js'
import { DEFAULT_FILE_CONTENT } from '../fixtures/mock-model-server.js'
import { REAL_CLI_CASES, TEST_API_KEY, waitFor } from '../helpers/real-cli-cases.js'
import { type RealCliOutcome, type RealCliRunOptions, useRealCli } from '../helpers/real-cli-harness.js'

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
  const cli = useRealCli(cliCase, cliCase.name)

  interface Outcome extends RealCliOutcome {
    lines: string[]
    /** The session ids the parser reported while the run went (stored as they appeared). */
    sessions: Set<string>
  }

  async function run(
    cwd: string,
    prompt: string,
    options: Omit<RealCliRunOptions, 'adapter'> = {},
  ): Promise<Outcome> {
    const lines: string[] = []
    const sessions = new Set<string>()
    const outcome = await cli.run(cwd, prompt, {
      ...options,
      adapter: teed(cliCase.adapter, lines, sessions),
    })
    return { ...outcome, lines, sessions }
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

  // One session: its first run writes a file, and a resume of it writes another with the history carried.
  it(
    'writes a file through its own tool, and resumes its own session carrying the earlier history',
    async () => {
      const cwd = await cli.workspace()
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
        cli.mock.requests.some((request) =>
          Object.values(request.headers).some((value) => value.includes(TEST_API_KEY)),
        ),
      ).toBe(true)
      expect(JSON.stringify(outcome.events)).not.toContain(TEST_API_KEY)

      const before = cli.mock.requests.length
      const second = await run(cwd, 'Now another one. FILE=second.txt', {
        resumeSessionId: outcome.run.sessionId,
      })
      await record('resume', cwd, second)
      expect(second.run.status, explain(second)).toBe('succeeded')
      expect(await readFile(path.join(cwd, 'second.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
      const later = cli.mock.requests.slice(before).filter((request) => request.method === 'POST')
      expect(later.some((request) => request.rawBody.includes('FILE=hello.txt'))).toBe(true)
      expect(cli.proxyAttempts).toEqual([])
    },
    timeout * 2,
  )

  it(
    'fails the run with a readable reason when the model answers 401',
    async () => {
      const cwd = await cli.workspace()
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
      const cwd = await cli.workspace()
      const controller = new AbortController()
      const target = path.join(cwd, 'x.txt')
      const running = run(cwd, 'Please create a file. FILE=x.txt HANG', { signal: controller.signal })
      expect(await waitFor(() => existsSync(target), cliCase.runTimeout * 1000)).toBe(true)
      // The follow-up model request (the one that hangs) shows the tool result reached the model.
      const writtenAt = statSync(target).mtimeMs
      const followUp = () =>
        cli.mock.requests.some(
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
