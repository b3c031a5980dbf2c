import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { AgentEvent } from '../../core/events.js'
import { CLAUDE_IGNORED_LINE } from './claude-line-shapes.js'
import { createClaudeStreamParser } from './claude-stream.js'

const CWD = '/work/repo'
const SESSION = 'session-1'

function feed(lines: Array<string | object>) {
  const parser = createClaudeStreamParser({ cwd: CWD })
  const events: AgentEvent[] = lines.flatMap((line) =>
    parser.line(typeof line === 'string' ? line : JSON.stringify(line)),
  )
  const finished = parser.finish()
  return { events: [...events, ...finished.events], outcome: finished.outcome }
}

const init = {
  type: 'system',
  subtype: 'init',
  cwd: CWD,
  session_id: SESSION,
  tools: ['Write'],
  model: 'claude-opus-5-5',
}
const assistant = (id: string, block: object) => ({
  type: 'assistant',
  message: { id, role: 'assistant', model: 'claude-opus-5-5', content: [block] },
  parent_tool_use_id: null,
  session_id: SESSION,
})
const streamEvent = (event: object) => ({
  type: 'stream_event',
  event,
  session_id: SESSION,
  parent_tool_use_id: null,
})
const textDelta = (text: string) =>
  streamEvent({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })
const success = {
  type: 'result',
  subtype: 'success',
  is_error: false,
  result: 'done',
  session_id: SESSION,
  total_cost_usd: 0.25,
  usage: {
    input_tokens: 10,
    cache_creation_input_tokens: 20,
    cache_read_input_tokens: 30,
    output_tokens: 40,
  },
  modelUsage: { 'claude-opus-5-5': {} },
}

describe('claude-stream', () => {
  it('reports a tool call, its result, the file change and the final text when Claude writes a file', () => {
    const { events, outcome } = feed([
      init,
      assistant('msg_1', {
        type: 'tool_use',
        id: 'toolu_1',
        name: 'Write',
        input: { file_path: `${CWD}/a.txt`, content: 'x\n' },
      }),
      {
        type: 'user',
        message: {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'File created' }],
        },
        tool_use_result: {
          type: 'create',
          filePath: `${CWD}/a.txt`,
          content: 'x\n',
          structuredPatch: [],
          originalFile: null,
        },
        session_id: SESSION,
      },
      assistant('msg_2', { type: 'text', text: 'done' }),
      success,
    ])
    expect(events.slice(0, 4)).toEqual([
      {
        type: 'tool-call',
        toolCallId: 'toolu_1',
        name: 'Write',
        input: { file_path: `${CWD}/a.txt`, content: 'x\n' },
      },
      { type: 'tool-result', toolCallId: 'toolu_1', output: 'File created', isError: false },
      {
        type: 'file-change',
        path: 'a.txt',
        kind: 'create',
        diff: '--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,1 @@\n+x\n',
      },
      { type: 'text-delta', text: 'done' },
    ])
    expect(outcome.completed).toBe(true)
  })

  it('turns an Edit structuredPatch into a unified diff of a modified file', () => {
    const { events } = feed([
      assistant('msg_1', {
        type: 'tool_use',
        id: 'toolu_1',
        name: 'Edit',
        input: { file_path: `${CWD}/b.txt` },
      }),
      {
        type: 'user',
        message: {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'ok' }] }],
        },
        tool_use_result: {
          filePath: `${CWD}/b.txt`,
          originalFile: 'old\n',
          structuredPatch: [{ oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, lines: ['-old', '+new'] }],
        },
      },
    ])
    expect(events).toContainEqual({
      type: 'file-change',
      path: 'b.txt',
      kind: 'modify',
      diff: '--- a/b.txt\n+++ b/b.txt\n@@ -1,1 +1,1 @@\n-old\n+new\n',
    })
  })

  it('reports no file change when the write was denied', () => {
    const { events } = feed([
      assistant('msg_1', {
        type: 'tool_use',
        id: 'toolu_1',
        name: 'Write',
        input: { file_path: `${CWD}/a.txt` },
      }),
      {
        type: 'user',
        message: {
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'permission denied', is_error: true },
          ],
        },
        tool_use_result: 'Error: permission denied',
      },
    ])
    expect(events).toEqual([
      expect.objectContaining({ type: 'tool-call' }),
      { type: 'tool-result', toolCallId: 'toolu_1', output: 'permission denied', isError: true },
    ])
  })

  it('emits thinking as reasoning and streamed deltas only once when partial messages repeat them whole', () => {
    const { events } = feed([
      streamEvent({ type: 'message_start', message: { id: 'msg_1', content: [] } }),
      streamEvent({
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'thinking_delta', thinking: 'hm' },
      }),
      streamEvent({
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'signature_delta', signature: 'sig' },
      }),
      assistant('msg_1', { type: 'thinking', thinking: 'hm', signature: 'sig' }),
      textDelta('he'),
      textDelta('llo'),
      assistant('msg_1', { type: 'text', text: 'hello' }),
      streamEvent({ type: 'message_stop' }),
      assistant('msg_2', { type: 'thinking', thinking: 'not streamed' }),
    ])
    expect(events).toEqual([
      { type: 'reasoning-delta', text: 'hm' },
      { type: 'text-delta', text: 'he' },
      { type: 'text-delta', text: 'llo' },
      { type: 'reasoning-delta', text: 'not streamed' },
    ])
  })

  it('reports disjoint usage with cost, the model and the session id from the result', () => {
    const { events, outcome } = feed([init, success])
    const usage = {
      inputTokens: 10,
      outputTokens: 40,
      cacheReadTokens: 30,
      cacheWriteTokens: 20,
      costUsd: 0.25,
    }
    expect(events).toEqual([{ type: 'usage', source: 'agent', model: 'claude-opus-5-5', ...usage }])
    expect(outcome).toEqual({ completed: true, sessionId: SESSION, usage })
  })

  it('reports the cost of this run only when a resumed session reports cumulative totals', () => {
    const resumed = {
      ...success,
      total_cost_usd: 0.3,
      modelUsage: { 'claude-opus-5-5': { costUSD: 0.3 } },
      model_usage_since_last_result: { 'claude-opus-5-5': { costUSD: 0.1 } },
    }
    const { outcome } = feed([resumed])
    expect(outcome.usage?.costUsd).toBe(0.1)
  })

  it('reports a retryable error for api_retry and a failure for an authentication error', () => {
    const message = 'Failed to authenticate. API Error: 401 {"type":"error"}'
    const { events, outcome } = feed([
      init,
      {
        type: 'system',
        subtype: 'api_retry',
        attempt: 1,
        max_retries: 1,
        retry_delay_ms: 500,
        error_status: 401,
        error: 'authentication_failed',
      },
      {
        type: 'assistant',
        message: {
          id: 'x',
          model: '<synthetic>',
          role: 'assistant',
          content: [{ type: 'text', text: message }],
        },
      },
      {
        type: 'result',
        subtype: 'success',
        is_error: true,
        api_error_status: 401,
        result: message,
        session_id: SESSION,
      },
    ])
    expect(events).toEqual([
      {
        type: 'error',
        code: 'unauthorized',
        message: 'API request failed with status 401 (authentication_failed); retry 1/1 in 500 ms',
        retryable: true,
      },
      { type: 'error', code: 'unauthorized', message, retryable: false },
    ])
    expect(outcome).toEqual({
      completed: true,
      sessionId: SESSION,
      failure: { code: 'unauthorized', message },
    })
  })

  it('is not completed when the stream stops before the result (a cancel)', () => {
    const { outcome } = feed([init, assistant('msg_1', { type: 'text', text: 'working' })])
    expect(outcome).toEqual({ completed: false, sessionId: SESSION })
  })

  it('drops known noise, ignores blank lines and keeps unknown or cut-off lines as raw', () => {
    const cut = JSON.stringify(success).slice(0, 40)
    const { events } = feed([
      { type: 'system', subtype: 'status', status: 'requesting' },
      '   ',
      { type: 'something_new', session_id: SESSION },
      cut,
      'plain text',
    ])
    expect(events).toEqual([
      { type: 'raw', stream: 'stdout', value: '{"type":"something_new","session_id":"session-1"}' },
      { type: 'raw', stream: 'stdout', value: cut },
      { type: 'raw', stream: 'stdout', value: 'plain text' },
    ])
  })

  it('skips unparsed only lines that the full parse drops, in the exact shapes Claude Code prints', () => {
    const recordings = path.resolve(import.meta.dirname, '../../../test/fixtures/recordings')
    const lines = readdirSync(recordings)
      .filter((file) => file.startsWith('claude-'))
      .flatMap((file) => readFileSync(path.join(recordings, file), 'utf8').split('\n'))
    const skipped = lines.filter((line) => CLAUDE_IGNORED_LINE.test(line))
    // Pings, stream events repeated whole later, tool-input deltas: most lines of a streamed turn.
    expect(skipped.length).toBeGreaterThan(20)
    // A fresh parser knows no session yet, so it parses each in full: nothing comes of any.
    for (const line of skipped) expect(createClaudeStreamParser({ cwd: CWD }).line(line)).toEqual([])
    const tail = ',"session_id":"s","parent_tool_use_id":null,"uuid":"u"}'
    const stop = `{"type":"stream_event","event":{"type":"content_block_stop","index":0}${tail}`
    expect(CLAUDE_IGNORED_LINE.test(stop)).toBe(true)
    // Anything else, or not quite JSON, goes through the full parse (which keeps a broken line as raw).
    for (const near of [
      stop.replace('"index":0', '"index":01'),
      `${stop} `,
      stop.replace('"uuid":"u"', '"uuid":"u","type":"assistant"'),
      stop.replace('"uuid":"u"', '"uuid":"u\\"'),
      stop.replace('content_block_stop', 'message_start'),
      `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}${tail}`,
      `{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1,}}${tail}`,
    ]) {
      expect(CLAUDE_IGNORED_LINE.test(near), near).toBe(false)
    }
    const { events } = feed([init, stop.replace('"index":0', '"index":01')])
    expect(events).toEqual([
      { type: 'raw', stream: 'stdout', value: stop.replace('"index":0', '"index":01') },
    ])
  })

  it('reads streamed deltas, message starts and whole text messages without JSON.parse, to the events the full parse gives', () => {
    // `{ ` instead of `{` starts no shape claude-line-shapes.ts knows, and parses to the same object: every
    // line then goes through the full parse. A raw event shows the line as it came, so its pad is taken off.
    const padded = (line: string) => line.replace(/^\{/, '{ ')
    const unpadded = (events: AgentEvent[]) =>
      events.map((event) =>
        event.type === 'raw' ? { ...event, value: event.value.replace(/^\{ /, '{') } : event,
      )
    const bothWays = (lines: string[]) => {
      const fast = feed(lines)
      const full = feed(lines.map(padded))
      expect(fast.outcome).toEqual(full.outcome)
      expect(fast.events).toEqual(unpadded(full.events))
      return fast.events
    }
    const recordings = path.resolve(import.meta.dirname, '../../../test/fixtures/recordings')
    for (const file of readdirSync(recordings).filter((name) => name.startsWith('claude-'))) {
      const lines = readFileSync(path.join(recordings, file), 'utf8').trim().split('\n').slice(1)
      bothWays(lines)
    }

    const tail = `"session_id":"${SESSION}","parent_tool_use_id":null,"uuid":"u"`
    const start = (id: string, extra = '') =>
      `{"type":"stream_event","event":{"type":"message_start","message":{"id":"${id}","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":1,"service_tier":"standard"}${extra}}},${tail},"ttft_ms":12,"api_message_id":"${id}"}`
    const delta = (kind: string, key: string, piece: string, ids = tail) =>
      `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"${kind}","${key}":${piece}}},${ids}}`
    const whole = JSON.stringify(assistant('msg_1', { type: 'text', text: 'a"b\n\u00e9' }))
    const textMessage = (id: string, text: string, { model = 'm', parent = 'null', extra = '' } = {}) =>
      `{"type":"assistant","message":{"id":"${id}","type":"message","role":"assistant","model":"${model}","content":[{"type":"text","text":${text}}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1},"context_management":null${extra}},"parent_tool_use_id":${parent},"session_id":"${SESSION}","uuid":"u","timestamp":"t"}`
    const events = bothWays([
      JSON.stringify(init),
      start('msg_1'),
      delta('thinking_delta', 'thinking', '"hmm"'),
      delta('text_delta', 'text', '"a\\"b\\n\\u00e9"'),
      delta('text_delta', 'text', '""'),
      // Whole again at the end of the message: not repeated.
      whole,
      textMessage('msg_1', '"a\\"b\\n\\u00e9"'),
      // A whole message never streamed is shown, unless empty or Claude's own stand-in for an error.
      textMessage('msg_4', '"plain \\u00e9"'),
      textMessage('msg_5', '""'),
      textMessage('msg_6', '"api error"', { model: '<synthetic>' }),
      textMessage('msg_7', '"in sub"', { parent: '"toolu_task"' }),
      textMessage('msg_8', '"more"', { extra: ',"container":null' }),
      // A sub-agent's piece carries its Task call's id; one with the API's message id only.
      delta('text_delta', 'text', '"sub"', tail.replace('null', '"toolu_task"')),
      delta('text_delta', 'text', '"own"', `${tail},"api_message_id":"msg_2"`),
      // Near misses go through the full parse: a key that is not the delta's, a key twice, a field more.
      delta('text_delta', 'thinking', '"x"'),
      delta('text_delta', 'text', '"y"', `${tail},"type":"assistant"`),
      start('msg_3', ',"container":null'),
      delta('text_delta', 'text', '"z"'),
      JSON.stringify(assistant('msg_3', { type: 'text', text: 'z' })),
    ])
    expect(events.filter((event) => event.type !== 'raw')).toEqual([
      { type: 'reasoning-delta', text: 'hmm' },
      { type: 'text-delta', text: 'a"b\n\u00e9' },
      { type: 'text-delta', text: 'plain \u00e9' },
      { type: 'text-delta', text: 'in sub', parentId: 'toolu_task' },
      { type: 'text-delta', text: 'more' },
      { type: 'text-delta', text: 'sub', parentId: 'toolu_task' },
      { type: 'text-delta', text: 'own' },
      { type: 'text-delta', text: 'z' },
    ])
  })

  it('drops a later init line unread, and shows one cut off on its way raw', () => {
    const again = JSON.stringify({
      ...init,
      tools: ['Bash', 'Write'],
      mcp_servers: [{ name: 'm', status: 'ok' }],
    })
    const cut = again.slice(0, 60)
    // A line that starts as an init and ends with `}` is taken as one, without reading it.
    const brokenInside = again.replace('"tools":[', '"tools":[,')
    const { events, outcome } = feed([init, again, cut, brokenInside])
    expect(events).toEqual([{ type: 'raw', stream: 'stdout', value: cut }])
    expect(outcome.sessionId).toBe(SESSION)
  })

  it('marks what a sub-agent did with the id of the Task/Agent call that started it (issue 18 item 10)', () => {
    const inSub = (line: object) => ({ ...line, parent_tool_use_id: 'toolu_task' })
    const task = { type: 'system', subtype: 'task_started', tool_use_id: 'toolu_task', session_id: SESSION }
    const { events } = feed([
      init,
      assistant('msg_1', { type: 'tool_use', id: 'toolu_task', name: 'Agent', input: { prompt: 'p' } }),
      task,
      inSub({ type: 'user', message: { role: 'user', content: [{ type: 'text', text: 'p' }] } }),
      inSub(assistant('msg_2', { type: 'text', text: 'looking' })),
      inSub(
        assistant('msg_3', {
          type: 'tool_use',
          id: 'toolu_write',
          name: 'Write',
          input: { file_path: `${CWD}/sub.txt`, content: 'x\n' },
        }),
      ),
      inSub({
        type: 'user',
        message: {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_write', content: 'ok' }],
        },
      }),
      { type: 'system', subtype: 'task_notification', tool_use_id: 'toolu_task', status: 'completed' },
      {
        type: 'user',
        parent_tool_use_id: null,
        message: {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_task', content: 'report' }],
        },
      },
      assistant('msg_4', { type: 'text', text: 'done' }),
    ])
    expect(events).toEqual([
      { type: 'tool-call', toolCallId: 'toolu_task', name: 'Agent', input: { prompt: 'p' } },
      { type: 'text-delta', text: 'looking', parentId: 'toolu_task' },
      {
        type: 'tool-call',
        toolCallId: 'toolu_write',
        name: 'Write',
        input: { file_path: `${CWD}/sub.txt`, content: 'x\n' },
        parentId: 'toolu_task',
      },
      {
        type: 'tool-result',
        toolCallId: 'toolu_write',
        output: 'ok',
        isError: false,
        parentId: 'toolu_task',
      },
      { type: 'file-change', path: 'sub.txt', kind: 'modify', parentId: 'toolu_task' },
      { type: 'tool-result', toolCallId: 'toolu_task', output: 'report', isError: false },
      { type: 'text-delta', text: 'done' },
    ])
  })
})
