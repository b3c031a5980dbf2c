// "Run any agent" through the proxy: the CLIs beyond Claude Code and Codex (proxy-real-clis.test.ts), each
// through `hangar run` with a feed declared in hangar.yaml and only its own family's endpoint in the
// environment. The mock model must see the feed block and the held key, and the run its request log.
import { readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_FILE_CONTENT } from '../fixtures/mock-model/directives.js'
import { type MockModelServer, startMockModelServer } from '../fixtures/mock-model-server.js'
import { type FeedProject, startFeedProject } from '../helpers/feed-project.js'
import { cleanEnv, runHangar } from '../helpers/hangar-cli.js'
import {
  loopbackOnlyEnv,
  REAL_CLI_CASES,
  startRefusingProxy,
  TEST_API_KEY,
  realCliPath,
} from '../helpers/real-cli-cases.js'
import { node24Binary } from '../helpers/test-clis.js'

interface Envelope {
  runId: string
  type: string
  [field: string]: unknown
}

const FEED_TEXT = 'Release train leaves at 16:00 UTC.'

/** The only endpoint each CLI is given, so the family it uses through the proxy is the one named. */
function endpointEnv(family: string, mockUrl: string): Record<string, string> {
  if (family === 'gemini') return { GOOGLE_GEMINI_BASE_URL: mockUrl, GEMINI_API_KEY: TEST_API_KEY }
  if (family === 'anthropic') return { ANTHROPIC_BASE_URL: mockUrl, ANTHROPIC_API_KEY: TEST_API_KEY }
  return { OPENAI_BASE_URL: `${mockUrl}/v1`, OPENAI_API_KEY: TEST_API_KEY }
}

const OTHER_CLIS = REAL_CLI_CASES.filter((cliCase) => !['claude', 'codex'].includes(cliCase.name))

describe('every CLI with a model endpoint goes through the proxy', () => {
  let mock: MockModelServer
  let refusing: Awaited<ReturnType<typeof startRefusingProxy>>
  let shop: FeedProject
  let project: string

  beforeAll(async () => {
    mock = await startMockModelServer()
    refusing = await startRefusingProxy()
    shop = await startFeedProject('proxy-every-cli', FEED_TEXT)
    project = shop.project
    const profiles = OTHER_CLIS.flatMap((cliCase) => [
      `  ${cliCase.name}-ops:`,
      `    adapter: ${cliCase.adapter.id}`,
      ...(cliCase.model ? [`    model: ${cliCase.model}`] : []),
      '    feeds: [{ source: ops, path: "/trains/{agent}", ttl: 60 }]',
    ])
    await writeFile(
      path.join(project, 'hangar.yaml'),
      ['services:', `  ops: { url: "${shop.feedUrl}" }`, 'agents:', ...profiles].join('\n'),
    )
  }, 60_000)

  afterAll(async () => {
    await mock?.close()
    await refusing?.close()
    await shop?.close()
  })

  it.each(OTHER_CLIS.map((cliCase) => [cliCase.name, cliCase] as const))(
    '%s: the model sees the feed and the held key, and the run lists the request',
    async (name, cliCase) => {
      mock.reset()
      const env = cleanEnv({
        PATH: realCliPath(),
        HOME: shop.home,
        HANGAR_DATA_DIR: path.join(shop.root, 'data'),
        HANGAR_NODE24: node24Binary(),
        ...endpointEnv(cliCase.family, mock.url),
        ...loopbackOnlyEnv(refusing.url),
        ...cliCase.env,
      })
      const result = await runHangar(
        ['run', '--agent', `${name}-ops`, '--json', 'Please create a file. FILE=notes.txt'],
        {
          env,
          cwd: project,
          timeoutMs: cliCase.runTimeout * 1000,
        },
      )
      expect(result.code, `${result.stderr}\n${result.stdout.slice(-1500)}`).toBe(0)
      expect(result.stdout).not.toContain(TEST_API_KEY)
      const envelopes = result.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Envelope)
      expect(envelopes[0]).toMatchObject({ type: 'run-start', adapter: cliCase.adapter.id, proxied: true })
      expect(envelopes.at(-1)).toMatchObject({ type: 'run-end', status: 'succeeded' })
      // In the project, where the run was started — not where the test runner stands ($PWD).
      expect(await readFile(path.join(project, 'notes.txt'), 'utf8')).toBe(DEFAULT_FILE_CONTENT)
      await rm(path.join(project, 'notes.txt'))

      const withFeed = mock.requests.filter((request) =>
        request.rawBody.includes('--- BEGIN FEED: trains (from ops, refreshed '),
      )
      expect(
        withFeed.length,
        `families seen: ${mock.requests.map((r) => r.family).join(', ')}`,
      ).toBeGreaterThan(0)
      expect(withFeed[0]!.rawBody).toContain(`${FEED_TEXT} (/trains/${name}-ops)`)
      expect(withFeed.every((request) => request.family === cliCase.family)).toBe(true)
      expect(Object.values(withFeed[0]!.headers).some((value) => value.includes(TEST_API_KEY))).toBe(true)
      expect(refusing.attempts).toEqual([])

      const runId = envelopes[0]!.runId
      const shown = JSON.parse(
        (await runHangar(['runs', 'show', runId, '--json'], { env, cwd: project })).stdout,
      ) as { requests: { status: number; feeds: { name: string; status: string }[] }[] }
      expect(shown.requests.length).toBeGreaterThan(0)
      expect(shown.requests.some((request) => request.feeds.some((feed) => feed.name === 'trains'))).toBe(
        true,
      )
    },
    // OpenClaw's turn alone may take minutes on a loaded machine (its runTimeout is 150 s).
    200_000,
  )
})
