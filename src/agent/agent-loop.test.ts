import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { AgentEvent } from '../core/events.js'
import { createRedactor } from '../core/redact.js'
import type { AssistantMessage, Message } from '../core/messages.js'
import type { LlmClient, LlmRequest, LlmStreamEvent } from '../providers/types.js'
import { runAgentLoop } from './agent-loop.js'
import type { ConversationMemory, ProposalDesk } from './ports.js'
import { createToolRegistry } from './tools/tool-registry.js'
import { createWorkspaceTools } from './tools/workspace-tools.js'

function scriptedClient(turns: AssistantMessage[]): LlmClient & { requests: LlmRequest[] } {
  const requests: LlmRequest[] = []
  return {
    provider: 'fake',
    family: 'anthropic',
    requests,
    async *stream(request): AsyncIterable<LlmStreamEvent> {
      requests.push(structuredClone({ ...request, signal: undefined }))
      const turn = turns.shift()
      if (!turn) throw new Error('no scripted turn left')
      for (const part of turn.content) if (part.type === 'text') yield { type: 'text-delta', text: part.text }
      yield { type: 'finish', message: turn }
    },
    async generate() {
      throw new Error('not used')
    },
  }
}

const say = (text: string): AssistantMessage => ({
  role: 'assistant',
  content: [{ type: 'text', text }],
  stopReason: 'end_turn',
})
const call = (id: string, name: string, input: unknown): AssistantMessage => ({
  role: 'assistant',
  content: [],
  toolCalls: [{ id, name, input }],
  stopReason: 'tool_use',
})

async function setup(initial: Message[] = []) {
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'hangar-loop-'))
  await writeFile(path.join(workspace, 'notes.txt'), 'remember the milk\n')
  const messages: Message[] = [...initial]
  const memory: ConversationMemory = {
    load: async () => [...messages],
    append: async (message) => void messages.push(message),
  }
  const parked: string[] = []
  const tools = createToolRegistry(createWorkspaceTools())
  const desk: ProposalDesk = {
    park: async (target) => {
      parked.push(target.tool)
      return { actionId: `act_${parked.length}`, expiresAt: '2999-01-01T00:00:00.000Z' }
    },
    applyNow: async (target, proposal) => {
      const tool = tools.get(target.tool)!
      if (tool.kind !== 'write') throw new Error('not a write tool')
      const output = await tool.apply(target.input, { workspace }, proposal)
      messages.push({
        role: 'tool',
        toolCallId: target.toolCallId,
        toolName: target.tool,
        content: output.content,
      })
      return { content: output.content, isError: false }
    },
  }
  const events: AgentEvent[] = []
  return {
    workspace,
    messages,
    memory,
    desk,
    tools,
    events,
    parked,
    emit: (event: AgentEvent) => events.push(event),
  }
}

type LoopContext = Awaited<ReturnType<typeof setup>>

/** Runs the loop over a test context; `options` overrides the defaults (no auto-approval). */
function loop(
  context: LoopContext,
  llm: LlmClient,
  options: Partial<Parameters<typeof runAgentLoop>[0]> = {},
) {
  return runAgentLoop({
    llm,
    model: 'm',
    system: 's',
    autoApprove: [],
    context: { workspace: context.workspace },
    ...context,
    ...options,
  })
}

describe('agent-loop', () => {
  it('runs read tools at once and finishes when the model answers', async () => {
    const context = await setup([{ role: 'user', content: [{ type: 'text', text: 'what is in notes?' }] }])
    const llm = scriptedClient([call('c1', 'read_file', { path: 'notes.txt' }), say('It says to buy milk.')])
    const result = await loop(context, llm)
    expect(result.outcome).toEqual({ status: 'succeeded' })
    expect(context.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
    ])
    expect(JSON.stringify(llm.requests[1]?.messages)).toContain('remember the milk')
    expect(context.events.map((event) => event.type)).toEqual(['tool-call', 'tool-result', 'text-delta'])
  })

  it('parks a write as a proposal, changes nothing, and ends awaiting confirmation', async () => {
    const context = await setup([{ role: 'user', content: [{ type: 'text', text: 'write' }] }])
    const llm = scriptedClient([call('c1', 'write_file', { path: 'new.txt', content: 'x\n' })])
    const result = await loop(context, llm)
    expect(result.outcome).toEqual({ status: 'awaiting_confirmation', actionIds: ['act_1'] })
    await expect(readFile(path.join(context.workspace, 'new.txt'))).rejects.toThrow()
    expect(context.events.at(-1)).toMatchObject({
      type: 'approval-required',
      actionId: 'act_1',
      classification: 'safe_create',
    })
  })

  it('applies an auto-approved classification through the desk and reports the file change', async () => {
    const context = await setup([{ role: 'user', content: [{ type: 'text', text: 'write' }] }])
    const llm = scriptedClient([call('c1', 'write_file', { path: 'new.txt', content: 'x\n' }), say('done')])
    const result = await loop(context, llm, { autoApprove: ['safe_create'] })
    expect(result.outcome).toEqual({ status: 'succeeded' })
    expect(await readFile(path.join(context.workspace, 'new.txt'), 'utf8')).toBe('x\n')
    expect(context.events).toContainEqual(
      expect.objectContaining({ type: 'file-change', path: 'new.txt', kind: 'create' }),
    )
  })

  it('answers an unknown tool and invalid input with a message the model can act on', async () => {
    const context = await setup([{ role: 'user', content: [{ type: 'text', text: 'x' }] }])
    const llm = scriptedClient([
      call('c1', 'teleport', {}),
      call('c2', 'read_file', { file: 'notes.txt' }),
      say('ok'),
    ])
    await loop(context, llm)
    const results = context.messages.filter((message) => message.role === 'tool')
    expect(results[0]).toMatchObject({
      isError: true,
      content: expect.stringContaining('There is no tool named "teleport"'),
    })
    expect(results[1]).toMatchObject({
      isError: true,
      content: expect.stringContaining('Call read_file again'),
    })
  })

  it('never passes a max_tokens or refusal stop off as an answer, and continues after a pause', async () => {
    for (const stopReason of ['max_tokens', 'refusal'] as const) {
      const context = await setup([{ role: 'user', content: [{ type: 'text', text: 'x' }] }])
      const llm = scriptedClient([{ ...say('half an ans'), stopReason }])
      const result = await loop(context, llm)
      expect(result.outcome.status).toBe('failed')
    }
    const context = await setup([{ role: 'user', content: [{ type: 'text', text: 'x' }] }])
    const llm = scriptedClient([{ ...say('thinking…'), stopReason: 'pause' }, say('answer')])
    const result = await loop(context, llm)
    expect(result.outcome.status).toBe('succeeded')
    expect(llm.requests).toHaveLength(2)
  })

  it('resumes a turn a crash left half done: reads run again, writes are proposed again, none applied', async () => {
    const context = await setup([
      { role: 'user', content: [{ type: 'text', text: 'x' }] },
      {
        role: 'assistant',
        content: [],
        toolCalls: [
          { id: 'c1', name: 'read_file', input: { path: 'notes.txt' } },
          { id: 'c2', name: 'delete_file', input: { path: 'notes.txt' } },
        ],
        stopReason: 'tool_use',
      },
    ])
    const llm = scriptedClient([])
    const result = await loop(context, llm)
    expect(result.outcome).toEqual({ status: 'awaiting_confirmation', actionIds: ['act_1'] })
    expect(context.parked).toEqual(['delete_file'])
    expect(llm.requests).toHaveLength(0)
    expect(await readFile(path.join(context.workspace, 'notes.txt'), 'utf8')).toBe('remember the milk\n')
  })

  // Issue 17 item 1: a member's read tool met the owner's session and a key in the workspace, and both
  // went into the history, the event and the next model request in plaintext.
  it('redacts tool output before the history, the event and the next model request see it', async () => {
    const context = await setup([{ role: 'user', content: [{ type: 'text', text: 'read it' }] }])
    const session = `hgs_abcdefghijkl_${'Xy7'.repeat(12)}Qq`
    const redactor = createRedactor()
    redactor.add('registered-provider-key-42')
    await writeFile(
      path.join(context.workspace, 'leak.txt'),
      `session=${session}\nkey=registered-provider-key-42\nvisible line\n`,
    )
    const llm = scriptedClient([
      call('c1', 'read_file', { path: 'leak.txt' }),
      call('c2', 'grep', { pattern: 'session|key' }),
      say('done'),
    ])
    const result = await loop(context, llm, { redact: redactor.text })
    expect(result.outcome).toEqual({ status: 'succeeded' })
    const seen = JSON.stringify([context.messages, context.events, llm.requests])
    expect(seen).toContain('visible line')
    expect(seen).toContain('[redacted]')
    expect(seen).not.toContain(session.slice(17))
    expect(seen).not.toContain('registered-provider-key-42')
  })

  it('stops at the step limit', async () => {
    const context = await setup([{ role: 'user', content: [{ type: 'text', text: 'x' }] }])
    const llm = scriptedClient(Array.from({ length: 5 }, (_, index) => call(`c${index}`, 'list_files', {})))
    const result = await loop(context, llm, { maxSteps: 3 })
    expect(result.outcome).toMatchObject({
      status: 'failed',
      reason: expect.stringContaining('3 model turns'),
    })
  })
})
