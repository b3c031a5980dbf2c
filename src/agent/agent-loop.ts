// The built-in agent's tool loop. It is a function of stored state: every step starts from the
// conversation's messages, so a continuation run (after a person decided proposals) or a restarted
// daemon resumes exactly where the conversation stands. Read tools run at once; write tools become
// proposals (or, when the profile auto-approves their classification, are applied through the desk);
// a turn with open proposals ends the run `awaiting_confirmation`.
import type { FileChangeEvent, UsageTotals, WriteClassification } from '../core/events.js'
import { AppError } from '../core/errors.js'
import { repairHistory } from '../core/history.js'
import type { AssistantMessage, Message, ToolCall } from '../core/messages.js'
import type { LlmClient } from '../providers/types.js'
import type { ConversationMemory, EmitEvent, ProposalDesk } from './ports.js'
import type { ToolRegistry } from './tools/tool-registry.js'
import type { Proposal, ToolContext } from './tools/types.js'

export const DEFAULT_MAX_STEPS = 40

export interface AgentLoopOptions {
  llm: LlmClient
  model: string
  system: string
  tools: ToolRegistry
  memory: ConversationMemory
  desk: ProposalDesk
  context: ToolContext
  emit: EmitEvent
  autoApprove: readonly WriteClassification[]
  maxSteps?: number
  maxTokens?: number
  signal?: AbortSignal
  /**
   * Cuts secrets out of tool output before it reaches the history, the stored message, the event and
   * the next model request (the runtime's redactor). A tool reads whatever the workspace holds.
   */
  redact?: (text: string) => string
}

export type LoopOutcome =
  | { status: 'succeeded' }
  | { status: 'awaiting_confirmation'; actionIds: string[] }
  | { status: 'failed'; reason: string }
  | { status: 'cancelled' }

export interface LoopResult {
  outcome: LoopOutcome
  usage: UsageTotals
}

/** The file-change a proposal implies, for proposals that target a file. */
export function fileChangeOf(proposal: Proposal): FileChangeEvent | undefined {
  if (!proposal.precondition) return undefined
  const kind =
    proposal.classification === 'destructive_delete'
      ? 'delete'
      : proposal.precondition.sha256 === null
        ? 'create'
        : 'modify'
  return {
    type: 'file-change',
    path: proposal.precondition.path,
    kind,
    ...(proposal.diff && { diff: proposal.diff }),
  }
}

function isProposal(value: Proposal | { content: string }): value is Proposal {
  return 'classification' in value
}

/** Tool calls of the last assistant message that no tool message answers yet. */
function unansweredCalls(messages: readonly Message[]): ToolCall[] {
  const lastAssistant = messages.findLastIndex((message) => message.role === 'assistant')
  if (lastAssistant === -1) return []
  const assistant = messages[lastAssistant] as AssistantMessage
  const answered = new Set(
    messages
      .slice(lastAssistant + 1)
      .filter((message) => message.role === 'tool')
      .map((message) => (message.role === 'tool' ? message.toolCallId : '')),
  )
  return (assistant.toolCalls ?? []).filter((call) => !answered.has(call.id))
}

export async function runAgentLoop(options: AgentLoopOptions): Promise<LoopResult> {
  const { llm, tools, memory, emit, signal } = options
  const redact = options.redact ?? ((text: string) => text)
  const usage: UsageTotals = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }

  /** Handles the calls of one assistant turn in order; returns the ids of the proposals left open. */
  async function handleCalls(calls: readonly ToolCall[]): Promise<string[]> {
    const parked: string[] = []
    for (const call of calls) {
      emit({ type: 'tool-call', toolCallId: call.id, name: call.name, input: call.input })
      const answer = async (output: string, isError: boolean) => {
        const content = redact(output)
        await memory.append({ role: 'tool', toolCallId: call.id, toolName: call.name, content, isError })
        emit({ type: 'tool-result', toolCallId: call.id, output: content, isError })
      }
      const tool = tools.get(call.name)
      if (!tool) {
        await answer(
          `There is no tool named "${call.name}". Available tools: ${tools
            .list()
            .map((candidate) => candidate.name)
            .join(', ')}.`,
          true,
        )
        continue
      }
      const validated = tools.validateInput(tool, call.input)
      if (!validated.ok) {
        await answer(validated.message, true)
        continue
      }
      if (tool.kind === 'read') {
        const output = await tool.run(validated.value, options.context).catch((error: unknown) => ({
          content: `The tool failed: ${error instanceof Error ? error.message : String(error)}`,
          isError: true,
        }))
        await answer(output.content, output.isError ?? false)
        continue
      }
      const proposed = await tool.propose(validated.value, options.context)
      if (!isProposal(proposed)) {
        await answer(proposed.content, proposed.isError ?? true)
        continue
      }
      const target = { toolCallId: call.id, tool: call.name, input: validated.value }
      if (options.autoApprove.includes(proposed.classification)) {
        const applied = await options.desk.applyNow(target, proposed)
        const change = fileChangeOf(proposed)
        if (change && !applied.isError) emit(change)
        emit({
          type: 'tool-result',
          toolCallId: call.id,
          output: redact(applied.content),
          isError: applied.isError,
        })
        continue
      }
      const { actionId, expiresAt } = await options.desk.park(target, proposed)
      emit({
        type: 'approval-required',
        actionId,
        tool: call.name,
        summary: proposed.summary,
        classification: proposed.classification,
        ...(proposed.diff && { diff: proposed.diff }),
        expiresAt,
      })
      parked.push(actionId)
    }
    return parked
  }

  try {
    // A turn left half-done by a crash: read calls are run again, writes are proposed again (never applied).
    const leftover = unansweredCalls(await memory.load())
    if (leftover.length > 0) {
      const parked = await handleCalls(leftover)
      if (parked.length > 0) return { outcome: { status: 'awaiting_confirmation', actionIds: parked }, usage }
    }

    for (let step = 0; step < (options.maxSteps ?? DEFAULT_MAX_STEPS); step++) {
      if (signal?.aborted) return { outcome: { status: 'cancelled' }, usage }
      const messages = repairHistory(await memory.load())
      let assistant: AssistantMessage | undefined
      for await (const event of llm.stream({
        model: options.model,
        system: options.system,
        messages,
        tools: tools.toLlmTools(),
        ...(options.maxTokens !== undefined && { maxTokens: options.maxTokens }),
        ...(signal && { signal }),
      })) {
        if (event.type === 'text-delta' || event.type === 'reasoning-delta') emit(event)
        else if (event.type === 'finish') assistant = event.message
      }
      if (!assistant) throw new AppError('upstream_error', 'the model stream ended without a message')
      await memory.append(assistant)
      if (assistant.usage) {
        usage.inputTokens += assistant.usage.inputTokens
        usage.outputTokens += assistant.usage.outputTokens
        usage.cacheReadTokens += assistant.usage.cacheReadTokens
        usage.cacheWriteTokens += assistant.usage.cacheWriteTokens
        emit({ type: 'usage', source: 'agent', model: options.model, ...assistant.usage })
      }
      const calls = assistant.toolCalls ?? []
      if (calls.length > 0) {
        const parked = await handleCalls(calls)
        if (parked.length > 0)
          return { outcome: { status: 'awaiting_confirmation', actionIds: parked }, usage }
        continue
      }
      // Shown, never passed off as an answer.
      if (assistant.stopReason === 'max_tokens') {
        return { outcome: { status: 'failed', reason: 'the model stopped at its output token limit' }, usage }
      }
      if (assistant.stopReason === 'refusal') {
        return { outcome: { status: 'failed', reason: 'the model refused to continue' }, usage }
      }
      if (assistant.stopReason === 'pause') continue
      return { outcome: { status: 'succeeded' }, usage }
    }
    return {
      outcome: {
        status: 'failed',
        reason: `stopped after ${options.maxSteps ?? DEFAULT_MAX_STEPS} model turns without finishing`,
      },
      usage,
    }
  } catch (error) {
    if (signal?.aborted) return { outcome: { status: 'cancelled' }, usage }
    const appError =
      error instanceof AppError ? error : new AppError('internal', 'the agent loop failed', { cause: error })
    emit({ type: 'error', code: appError.code, message: appError.message, retryable: appError.retryable })
    return { outcome: { status: 'failed', reason: appError.message }, usage }
  }
}
