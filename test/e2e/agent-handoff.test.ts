// Issue 20 item 2 — switching agent mid-conversation lost the context: the built-in agent got both user
// messages merged into one turn and none of Claude Code's reply, so it redid the first task; Claude Code,
// resumed afterwards, never saw the built-in agent's turn. Real Claude Code and the built-in agent on the
// mock model, through a real daemon: Claude writes a file; the built-in agent's model request has Claude's
// turn (its reply and the file) as an assistant turn between the two user messages; Claude, resuming its
// own session, gets the built-in agent's turn in a "since you last spoke" block.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  FINAL_TEXT,
  type MockModelServer,
  type RecordedRequest,
  startMockModelServer,
} from '../fixtures/mock-model-server.js'
import { type ApiRun, createApiClient } from '../helpers/api-client.js'
import { type FeedProject, startFeedProject } from '../helpers/feed-project.js'
import { cleanEnv, type RunningDaemon, runHangar, startDaemon } from '../helpers/hangar-cli.js'
import { loopbackOnlyEnv, realCliPath, startRefusingProxy, TEST_API_KEY } from '../helpers/real-cli-cases.js'

interface StoredRun extends ApiRun {
  adapter: string
  cwd: string
  sessionId: string | null
}

interface AnthropicMessage {
  role: string
  content: string | { type: string; text?: string }[]
}

interface Envelope {
  type: string
  [field: string]: unknown
}

/** The text of a request message (Claude Code sends blocks; its reminders are blocks too). */
function textOf(message: AnthropicMessage): string {
  if (typeof message.content === 'string') return message.content
  return message.content.map((block) => (block.type === 'text' ? (block.text ?? '') : '')).join('\n')
}

const messagesOf = (request: RecordedRequest) =>
  ((request.body as { messages?: AnthropicMessage[] }).messages ?? []).map((message) => ({
    role: message.role,
    text: textOf(message),
  }))

describe('switching agents keeps the conversation (real Claude Code and the built-in agent)', () => {
  let mock: MockModelServer
  let refusing: Awaited<ReturnType<typeof startRefusingProxy>>
  let shop: FeedProject
  let daemon: RunningDaemon
  let env: NodeJS.ProcessEnv
  let token = ''
  const dataDir = () => path.join(shop.root, 'data')
  const { api, waitForStatus } = createApiClient(() => ({ url: daemon.url, token }))

  async function eventsOf(runId: string): Promise<Envelope[]> {
    const shown = await runHangar(['runs', 'show', runId, '--events', '--json', '--data-dir', dataDir()], {
      env,
      cwd: shop.home,
    })
    expect(shown.code, shown.stderr).toBe(0)
    return (JSON.parse(shown.stdout) as { events: Envelope[] }).events
  }

  /** The model requests from index `from` on whose last message carries `text`. */
  const requestsAnswering = (from: number, text: string) =>
    mock.requests
      .slice(from)
      .filter((request) => request.method === 'POST' && messagesOf(request).at(-1)?.text.includes(text))

  beforeAll(async () => {
    mock = await startMockModelServer()
    refusing = await startRefusingProxy()
    shop = await startFeedProject('handoff', 'unused')
    // A commit, so the conversation gets a worktree of its own.
    execFileSync('git', ['commit', '-q', '--allow-empty', '-m', 'start'], {
      cwd: shop.project,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
      },
    })
    env = cleanEnv({
      PATH: realCliPath(),
      HOME: shop.home,
      HANGAR_DATA_DIR: dataDir(),
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_API_KEY: TEST_API_KEY,
      CLAUDE_CODE_MAX_RETRIES: '1',
      ...loopbackOnlyEnv(refusing.url),
    })
    daemon = await startDaemon(['--data-dir', dataDir()], { env, cwd: shop.project, timeoutMs: 60_000 })
    token = (JSON.parse(await readFile(path.join(dataDir(), 'daemon.json'), 'utf8')) as { token: string })
      .token
  }, 90_000)

  afterAll(async () => {
    await daemon?.stop()
    await mock?.close()
    await refusing?.close()
    await shop?.close()
  })

  it("hands Claude's turn and its file to the built-in agent, and the built-in agent's turn back to Claude", async () => {
    const conversation = await api<{ id: string }>('POST', '/api/conversations', { agent: 'claude-code' })
    expect(conversation.status, JSON.stringify(conversation.json)).toBe(201)
    const messages = `/api/conversations/${conversation.json.id}/messages`

    // 1. Claude Code writes a file.
    const first = await api<StoredRun>('POST', messages, { text: 'Create the notes. FILE=notes.txt' })
    expect(first.status, JSON.stringify(first.json)).toBe(202)
    const claudeRun = await waitForStatus<StoredRun>(
      first.json.id,
      ['succeeded', 'failed', 'cancelled'],
      180_000,
    )
    expect(claudeRun.status, claudeRun.reason ?? '').toBe('succeeded')
    expect(existsSync(path.join(claudeRun.cwd, 'notes.txt'))).toBe(true)
    expect(claudeRun.sessionId).toBeTruthy()

    // 2. Switch to the built-in agent: its request has Claude's turn between the two user messages.
    const beforeBuiltin = mock.requests.length
    const second = await api<StoredRun>('POST', messages, {
      text: 'What is in the workspace now? NOTOOL',
      agent: 'builtin',
    })
    expect(second.status, JSON.stringify(second.json)).toBe(202)
    const builtinRun = await waitForStatus<StoredRun>(
      second.json.id,
      ['succeeded', 'failed', 'cancelled'],
      120_000,
    )
    expect(builtinRun.status, builtinRun.reason ?? '').toBe('succeeded')
    const builtinRequest = requestsAnswering(beforeBuiltin, 'What is in the workspace now?')[0]
    expect(builtinRequest, 'the built-in agent sent no model request').toBeDefined()
    const history = messagesOf(builtinRequest!)
    expect(history.map((message) => message.role)).toEqual(['user', 'assistant', 'user'])
    expect(history[0]!.text).toBe('Create the notes. FILE=notes.txt')
    expect(history[1]!.text).toContain('Another agent, claude-code, took this turn')
    expect(history[1]!.text).toContain(
      `claude-code replied: ${FINAL_TEXT}\nFiles it changed:\n- notes.txt (create`,
    )
    expect(history[2]!.text).toBe('What is in the workspace now? NOTOOL')
    // It did not redo the first task.
    expect(requestsAnswering(beforeBuiltin, 'FILE=notes.txt')).toEqual([])
    expect((await eventsOf(builtinRun.id)).find((event) => event.type === 'handoff')).toMatchObject({
      mode: 'history',
      runs: [claudeRun.id],
      omitted: 0,
    })

    // 3. Back to Claude Code: it resumes its session, and hears what the built-in agent did.
    const beforeClaude = mock.requests.length
    const third = await api<StoredRun>('POST', messages, { text: 'Carry on. NOTOOL', agent: 'claude-code' })
    expect(third.status, JSON.stringify(third.json)).toBe(202)
    const resumed = await waitForStatus<StoredRun>(
      third.json.id,
      ['succeeded', 'failed', 'cancelled'],
      180_000,
    )
    expect(resumed.status, resumed.reason ?? '').toBe('succeeded')
    expect(resumed.sessionId).toBe(claudeRun.sessionId)
    const claudeRequest = requestsAnswering(beforeClaude, 'Carry on. NOTOOL').find(
      (request) => (request.body as { tools?: unknown[] }).tools?.length,
    )
    expect(claudeRequest, 'Claude sent no model request with the new message').toBeDefined()
    const claudeHistory = messagesOf(claudeRequest!)
    // Its own session: the first turn is there as it was.
    expect(claudeHistory[0]!.text).toContain('Create the notes. FILE=notes.txt')
    const last = claudeHistory.at(-1)!.text
    expect(last).toContain('Since you last spoke in this conversation')
    expect(last).toContain('User: What is in the workspace now? NOTOOL')
    expect(last).toContain('builtin replied: hello from mock\n')
    expect(last.indexOf('Since you last spoke')).toBeLessThan(last.indexOf('Carry on. NOTOOL'))
    // Only what it had not seen: its own first turn is not handed back to it.
    expect(last).not.toContain('User: Create the notes.')
    const events = await eventsOf(resumed.id)
    expect(events[0]).toMatchObject({ type: 'run-start' })
    expect(events.find((event) => event.type === 'handoff')).toMatchObject({
      mode: 'since-last',
      runs: [builtinRun.id],
      summarised: 0,
      omitted: 0,
    })
  }, 600_000)
})
