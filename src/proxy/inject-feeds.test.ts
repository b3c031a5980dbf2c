// Feeds are spliced into raw request bodies: every byte the client sent must survive, in order, and the
// block must sit late (next to the last user turn) so the prefix up to the previous exchange stays cacheable.
import { describe, expect, it } from 'vitest'
import type { ProxyFamily } from './families.js'
import { feedsEdit, type InjectFeedsOptions } from './inject-feeds.js'
import { applyEdits } from './json-spans.js'

/** The body as it goes upstream: `raw` with the feed edit applied, or `raw` itself when there is none. */
function injectFeeds(
  family: ProxyFamily,
  raw: string,
  parsed: unknown,
  block: string,
  options: InjectFeedsOptions,
): string {
  const edit = feedsEdit(family, raw, parsed, block, options)
  return edit ? applyEdits(raw, [edit]) : raw
}

const BLOCK_1 = [
  '--- BEGIN FEED: market-summary (from market, refreshed 2026-01-01T10:00:00Z) ---',
  '```json',
  '{"price": "42 \\u20ac", "note": "caf\u00e9 \u{1F680} </script> \t tab"}',
  '```',
  '--- END FEED: market-summary ---',
].join('\n')
const BLOCK_2 = BLOCK_1.replace('10:00:00Z', '10:05:00Z').replace('42', '43')
const SYSTEM = { openaiPlacement: 'system' } as const
const USER = { openaiPlacement: 'user' } as const
const BIG_INTEGER = '12345678901234567890'

/**
 * Asserts that `injected` is `raw` with one insertion at `at` (so everything before it is an unchanged
 * prefix and everything after it is unchanged too) and returns the inserted text.
 */
function insertionAt(raw: string, injected: string, at: number): string {
  expect(at).toBeGreaterThan(0)
  expect(injected.length).toBeGreaterThan(raw.length)
  const inserted = injected.slice(at, at + injected.length - raw.length)
  expect(injected.slice(0, at)).toBe(raw.slice(0, at))
  expect(injected).toBe(raw.slice(0, at) + inserted + raw.slice(at))
  expect(injected).toContain(BIG_INTEGER)
  return inserted
}

const endOf = (raw: string, part: string) => raw.indexOf(part) + part.length

/** Turn 2 = turn 1's messages + an assistant reply + a new user turn, injected with a changed feed. */
function expectTurnTwoKeepsPrefix(
  family: ProxyFamily,
  body: (turns: string[]) => string,
  turnOne: string[],
  followUp: [assistant: string, user: string],
  lastUserOfTurnOne: string,
) {
  const rawOne = body(turnOne)
  const rawTwo = body([...turnOne, ...followUp])
  const injectedTwo = injectFeeds(family, rawTwo, JSON.parse(rawTwo), BLOCK_2, SYSTEM)
  expect(injectedTwo).toContain(JSON.stringify(BLOCK_2).slice(1, -1))
  expect(injectedTwo.startsWith(rawOne.slice(0, endOf(rawOne, lastUserOfTurnOne)))).toBe(true)
  // The turn-two block comes after the whole first exchange, assistant reply included.
  expect(injectedTwo.indexOf('BEGIN FEED')).toBeGreaterThan(endOf(injectedTwo, followUp[0]))
}

describe('injectFeeds: anthropic', () => {
  const user1 =
    '{"role": "user", "content": [{"type": "text", "text": "Fix the failing test in caf\\u00e9.ts"}]}'
  const assistant1 = `{"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Read it first.", "signature": "EqQBCkgIARABGAIiQLm1+/0Qx=="},
        {"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"file_path": "caf\\u00e9.ts"}}]}`
  const user2 = `{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01",
        "content": "export const x = 1", "cache_control": {"type": "ephemeral"}}]}`
  const body = (messages: string[]) => `{
  "model": "claude-sonnet-4-5-20250929",
  "max_tokens": 32000,
  "system": [
    {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
    {"type": "text", "text": "Project rules: use pnpm.", "cache_control": {"type": "ephemeral"}}
  ],
  "tools": [{"name": "Read", "description": "Reads a file",
    "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}}],
  "messages": [
    ${messages.join(',\n    ')}
  ],
  "thinking": {"type": "enabled", "budget_tokens": 31999},
  "x_unknown_field": {"trace": ${BIG_INTEGER}},
  "stream": true
}`
  const raw = body([user1, assistant1, user2])

  it('adds a user message right after the last user message, every original byte kept', () => {
    const injected = injectFeeds('anthropic', raw, JSON.parse(raw), BLOCK_1, SYSTEM)
    const inserted = insertionAt(raw, injected, endOf(raw, user2))
    expect(inserted.startsWith(',')).toBe(true)
    expect(JSON.parse(inserted.slice(1))).toEqual({
      role: 'user',
      content: [{ type: 'text', text: BLOCK_1 }],
    })
    const messages = JSON.parse(injected).messages as { role: string }[]
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'user'])
  })

  it('keeps the prefix up to the previous exchange when the feed changes', () => {
    const assistant2 = '{"role": "assistant", "content": [{"type": "text", "text": "Fixed."}]}'
    const user3 = '{"role": "user", "content": "Now run the tests"}'
    expectTurnTwoKeepsPrefix('anthropic', body, [user1, assistant1, user2], [assistant2, user3], user2)
  })

  it('returns the body unchanged for an empty block or a request without a user turn', () => {
    expect(injectFeeds('anthropic', raw, JSON.parse(raw), '', SYSTEM)).toBe(raw)
    const noUser = body([assistant1])
    expect(injectFeeds('anthropic', noUser, JSON.parse(noUser), BLOCK_1, SYSTEM)).toBe(noUser)
    const noMessages = '{"model": "claude-haiku-4-5", "max_tokens": 5}'
    expect(injectFeeds('anthropic', noMessages, JSON.parse(noMessages), BLOCK_1, SYSTEM)).toBe(noMessages)
  })
})

describe('injectFeeds: openai-chat', () => {
  const system = `{"role": "system", "content": [{"type": "text", "text": "You are a coding agent.",
        "cache_control": {"type": "ephemeral"}}]}`
  const user1 = '{"role": "user", "content": "List the files"}'
  const assistant1 = `{"role": "assistant", "content": null, "reasoning_content": "Call ls.",
        "reasoning_details": [{"type": "reasoning.text", "text": "Call ls.", "signature": "sig_abc123=="}],
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{\\"path\\":\\".\\"}"}}]}`
  const tool1 = '{"role": "tool", "tool_call_id": "call_1", "content": "a.ts\\nb.ts"}'
  const user2 = '{"role": "user", "content": "Now read caf\\u00e9.ts"}'
  const body = (messages: string[]) => `{
  "model": "gpt-4.1",
  "messages": [
    ${messages.join(',\n    ')}
  ],
  "tools": [{"type": "function", "function": {"name": "ls", "parameters": {"type": "object", "properties": {}}}}],
  "stream": true,
  "seed": ${BIG_INTEGER},
  "x_unknown_field": {"keep": [1, 2.50, "three"]}
}`
  const raw = body([system, user1, assistant1, tool1, user2])

  it('adds a system message right before the last user message by default', () => {
    const injected = injectFeeds('openai-chat', raw, JSON.parse(raw), BLOCK_1, SYSTEM)
    const inserted = insertionAt(raw, injected, raw.indexOf(user2))
    expect(inserted.endsWith(',')).toBe(true)
    expect(JSON.parse(inserted.slice(0, -1))).toEqual({ role: 'system', content: BLOCK_1 })
    const messages = JSON.parse(injected).messages as { role: string }[]
    expect(messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'system',
      'user',
    ])
  })

  it('keeps the prefix up to the previous exchange when the feed changes', () => {
    const assistant2 = '{"role": "assistant", "content": "Done."}'
    const user3 = '{"role": "user", "content": [{"type": "text", "text": "Thanks, next?"}]}'
    const turnOne = [system, user1, assistant1, tool1, user2]
    expectTurnTwoKeepsPrefix('openai-chat', body, turnOne, [assistant2, user3], user2)
  })

  it('merges into string content in user placement, keeping the old text and its escapes', () => {
    const injected = injectFeeds('openai-chat', raw, JSON.parse(raw), BLOCK_1, USER)
    const inserted = insertionAt(raw, injected, raw.indexOf(user2) + user2.indexOf('"Now') + 1)
    expect(JSON.parse(`"${inserted}"`)).toBe(`${BLOCK_1}\n\n`)
    const messages = JSON.parse(injected).messages as { role: string; content: unknown }[]
    expect(messages).toHaveLength(5)
    expect(messages[4]).toEqual({ role: 'user', content: `${BLOCK_1}\n\nNow read caf\u00e9.ts` })
  })

  it('puts the block first among array content parts in user placement', () => {
    const user3 =
      '{"role": "user", "content": [{"type": "text", "text": "Thanks", "cache_control": {"type": "ephemeral"}}]}'
    const arrayRaw = body([system, user1, assistant1, tool1, user3])
    const injected = injectFeeds('openai-chat', arrayRaw, JSON.parse(arrayRaw), BLOCK_1, USER)
    const inserted = insertionAt(arrayRaw, injected, arrayRaw.indexOf(user3) + user3.indexOf('[') + 1)
    expect(JSON.parse(inserted.slice(0, -1))).toEqual({ type: 'text', text: BLOCK_1 })
    const messages = JSON.parse(injected).messages as { content: unknown }[]
    expect(messages[4]!.content).toEqual([
      { type: 'text', text: BLOCK_1 },
      { type: 'text', text: 'Thanks', cache_control: { type: 'ephemeral' } },
    ])

    const emptyRaw = body([user1, '{"role": "user", "content": []}'])
    const emptyInjected = injectFeeds('openai-chat', emptyRaw, JSON.parse(emptyRaw), BLOCK_1, USER)
    expect(JSON.parse(emptyInjected).messages[1].content).toEqual([{ type: 'text', text: BLOCK_1 }])
  })

  it('returns the body unchanged for an empty block or a request without a user turn', () => {
    expect(injectFeeds('openai-chat', raw, JSON.parse(raw), '', SYSTEM)).toBe(raw)
    expect(injectFeeds('openai-chat', raw, JSON.parse(raw), '', USER)).toBe(raw)
    const noUser = body([system])
    expect(injectFeeds('openai-chat', noUser, JSON.parse(noUser), BLOCK_1, SYSTEM)).toBe(noUser)
  })
})

describe('injectFeeds: openai-responses', () => {
  const developer = `{"type": "message", "role": "developer", "content": [{"type": "input_text",
        "text": "<permissions>workspace-write</permissions>", "cache_control": {"type": "ephemeral"}}]}`
  const user1 =
    '{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix the build"}]}'
  const reasoning = `{"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Looking"}],
        "encrypted_content": "gAAAAABo+signature/=="}`
  const call =
    '{"type": "function_call", "name": "shell", "arguments": "{\\"command\\":[\\"ls\\"]}", "call_id": "call_1"}'
  const output = '{"type": "function_call_output", "call_id": "call_1", "output": "ok"}'
  const user2 = '{"role": "user", "content": "Now commit"}'
  const body = (input: string[]) => `{
  "model": "gpt-5-codex",
  "instructions": "You are Codex, based on GPT-5.",
  "input": [
    ${input.join(',\n    ')}
  ],
  "tools": [{"type": "function", "name": "shell", "parameters": {"type": "object", "properties": {}}}],
  "prompt_cache_key": "conversation-1",
  "include": ["reasoning.encrypted_content"],
  "store": false,
  "stream": true,
  "x_unknown_field": ${BIG_INTEGER}
}`
  const turnOne = [developer, user1, reasoning, call, output, user2]
  const raw = body(turnOne)
  const message = (role: string, text: string) => ({
    type: 'message',
    role,
    content: [{ type: 'input_text', text }],
  })

  it('adds a system message right before the last user item', () => {
    const injected = injectFeeds('openai-responses', raw, JSON.parse(raw), BLOCK_1, SYSTEM)
    const inserted = insertionAt(raw, injected, raw.indexOf(user2))
    expect(JSON.parse(inserted.slice(0, -1))).toEqual(message('system', BLOCK_1))
    const input = JSON.parse(injected).input as { type?: string; role?: string }[]
    expect(input.map((item) => item.role ?? item.type)).toEqual([
      'developer',
      'user',
      'reasoning',
      'function_call',
      'function_call_output',
      'system',
      'user',
    ])
  })

  it('uses the user role in user placement', () => {
    const injected = injectFeeds('openai-responses', raw, JSON.parse(raw), BLOCK_1, USER)
    const inserted = insertionAt(raw, injected, raw.indexOf(user2))
    expect(JSON.parse(inserted.slice(0, -1))).toEqual(message('user', BLOCK_1))
  })

  it('keeps the prefix up to the previous exchange when the feed changes', () => {
    const assistant2 =
      '{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Committed."}]}'
    const user3 = '{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Push?"}]}'
    expectTurnTwoKeepsPrefix('openai-responses', body, turnOne, [assistant2, user3], user2)
  })

  it('turns a string input into the block message followed by the original text', () => {
    const stringRaw = `{"model": "gpt-5", "input": "Say h\\u00e9llo \\"there\\"", "seed": ${BIG_INTEGER}}`
    const injected = injectFeeds('openai-responses', stringRaw, JSON.parse(stringRaw), BLOCK_1, SYSTEM)
    expect(injected).toContain('{"role":"user","content":"Say h\\u00e9llo \\"there\\""}]')
    expect(injected.startsWith('{"model": "gpt-5", "input": [')).toBe(true)
    expect(injected.endsWith(`, "seed": ${BIG_INTEGER}}`)).toBe(true)
    expect(JSON.parse(injected).input).toEqual([
      message('system', BLOCK_1),
      { role: 'user', content: 'Say h\u00e9llo "there"' },
    ])
  })

  it('returns the body unchanged for an empty block or a request without a user item', () => {
    expect(injectFeeds('openai-responses', raw, JSON.parse(raw), '', SYSTEM)).toBe(raw)
    const toolOutputOnly = body([output])
    expect(injectFeeds('openai-responses', toolOutputOnly, JSON.parse(toolOutputOnly), BLOCK_1, SYSTEM)).toBe(
      toolOutputOnly,
    )
  })
})

describe('injectFeeds: gemini', () => {
  const user1 = '{"role": "user", "parts": [{"text": "Read the README"}]}'
  const model1 = `{"role": "model", "parts": [
        {"text": "Planning the read", "thought": true, "thoughtSignature": "CiQBVKhc7+sig=="},
        {"functionCall": {"name": "read_file", "args": {"path": "README.md"}}, "thoughtSignature": "Cm0BVKhc7x=="}]}`
  const user2 = `{"role": "user", "parts": [{"functionResponse": {"name": "read_file",
        "response": {"output": "# Hangar \\u2014 agents"}}}]}`
  const body = (contents: string[]) => `{
  "systemInstruction": {"role": "user", "parts": [{"text": "You are Gemini CLI."}]},
  "contents": [
    ${contents.join(',\n    ')}
  ],
  "tools": [{"functionDeclarations": [{"name": "read_file", "parameters": {"type": "OBJECT"}}]}],
  "cachedContent": "cachedContents/abc123",
  "generationConfig": {"temperature": 0, "seed": ${BIG_INTEGER},
    "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 8192}},
  "x_unknown_field": {"cache_control": {"type": "ephemeral"}}
}`
  const raw = body([user1, model1, user2])

  it('appends a text part as the last part of the last user content', () => {
    const injected = injectFeeds('gemini', raw, JSON.parse(raw), BLOCK_1, SYSTEM)
    const inserted = insertionAt(raw, injected, endOf(raw, user2) - ']}'.length)
    expect(inserted.startsWith(',')).toBe(true)
    expect(JSON.parse(inserted.slice(1))).toEqual({ text: BLOCK_1 })
    const contents = JSON.parse(injected).contents as { role: string; parts: unknown[] }[]
    expect(contents.map((content) => content.role)).toEqual(['user', 'model', 'user'])
    expect(contents[2]!.parts).toHaveLength(2)
    expect(contents[2]!.parts[1]).toEqual({ text: BLOCK_1 })
  })

  it('keeps the prefix up to the previous exchange when the feed changes', () => {
    const model2 = '{"role": "model", "parts": [{"text": "It describes Hangar."}]}'
    const user3 = '{"role": "user", "parts": [{"text": "Summarise it"}]}'
    expectTurnTwoKeepsPrefix('gemini', body, [user1, model1, user2], [model2, user3], user2)
  })

  it('treats a content without a role as the user turn and fills empty parts', () => {
    const single = `{"contents": [{"parts": []}], "seed": ${BIG_INTEGER}}`
    const injected = injectFeeds('gemini', single, JSON.parse(single), BLOCK_1, SYSTEM)
    expect(insertionAt(single, injected, single.indexOf('[]') + 1)).toBe(JSON.stringify({ text: BLOCK_1 }))
  })

  it('returns the body unchanged for an empty block or a request without a user content', () => {
    expect(injectFeeds('gemini', raw, JSON.parse(raw), '', SYSTEM)).toBe(raw)
    const modelOnly = body([model1])
    expect(injectFeeds('gemini', modelOnly, JSON.parse(modelOnly), BLOCK_1, SYSTEM)).toBe(modelOnly)
  })
})
