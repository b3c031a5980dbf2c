// A conversation's transcript, folded from its event stream: per run, what the agent said, thought, ran
// and changed, in order. Pure, so it can be replayed from any point: an event at or below a run's last seq
// (a replay after a reconnect) changes nothing.
import type {
  AgentEvent,
  EventEnvelope,
  RunEndEvent,
  RunStartEvent,
  UsageTotals,
} from '../../../src/core/events'

export type TranscriptItem =
  | { kind: 'text'; text: string }
  | { kind: 'reasoning'; text: string }
  | {
      kind: 'tool'
      toolCallId: string
      name: string
      input: unknown
      output?: unknown
      isError?: boolean
      /** What a sub-agent started by this call (Claude Code's Task/Agent tool) said and did. */
      children?: TranscriptItem[]
    }
  | { kind: 'file'; path: string; change: 'create' | 'modify' | 'delete'; diff?: string }
  | { kind: 'approval'; actionId: string; summary: string; classification: string }
  | { kind: 'error'; code: string; message: string }
  | { kind: 'raw'; stream: 'stdout' | 'stderr'; lines: string[] }

export interface RunTranscript {
  runId: string
  lastSeq: number
  start?: RunStartEvent
  end?: RunEndEvent
  items: TranscriptItem[]
  /** Usage as the proxy metered it when it did, else as the agent reported it. */
  usage: UsageTotals | null
  usageSource: 'proxy' | 'agent' | null
}

export type Transcript = Record<string, RunTranscript>

const emptyRun = (runId: string): RunTranscript => ({
  runId,
  lastSeq: 0,
  items: [],
  usage: null,
  usageSource: null,
})

function addUsage(total: UsageTotals | null, usage: UsageTotals): UsageTotals {
  const base = total ?? { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }
  const cost =
    base.costUsd === undefined && usage.costUsd === undefined
      ? undefined
      : (base.costUsd ?? 0) + (usage.costUsd ?? 0)
  return {
    inputTokens: base.inputTokens + usage.inputTokens,
    outputTokens: base.outputTokens + usage.outputTokens,
    cacheReadTokens: base.cacheReadTokens + usage.cacheReadTokens,
    cacheWriteTokens: base.cacheWriteTokens + usage.cacheWriteTokens,
    ...(cost !== undefined && { costUsd: cost }),
  }
}

/** Adjacent deltas of one kind grow the last item instead of adding one per chunk. */
function appendDelta(items: TranscriptItem[], kind: 'text' | 'reasoning', text: string): TranscriptItem[] {
  const last = items.at(-1)
  if (last?.kind === kind) return [...items.slice(0, -1), { kind, text: last.text + text }]
  return [...items, { kind, text }]
}

type ItemEvent = Extract<
  AgentEvent,
  {
    type:
      | 'text-delta'
      | 'reasoning-delta'
      | 'tool-call'
      | 'tool-result'
      | 'file-change'
      | 'approval-required'
      | 'error'
      | 'raw'
  }
>

/** One event's effect on a list of items (the run's, or a sub-task's under its parent call). */
function foldItem(items: TranscriptItem[], event: ItemEvent): TranscriptItem[] {
  switch (event.type) {
    case 'text-delta':
    case 'reasoning-delta':
      return appendDelta(items, event.type === 'text-delta' ? 'text' : 'reasoning', event.text)
    case 'tool-call':
      return [...items, { kind: 'tool', toolCallId: event.toolCallId, name: event.name, input: event.input }]
    case 'tool-result': {
      const index = items.findLastIndex(
        (item) => item.kind === 'tool' && item.toolCallId === event.toolCallId,
      )
      const call = items[index]
      if (index < 0 || call?.kind !== 'tool') {
        const orphan: TranscriptItem = {
          kind: 'tool',
          toolCallId: event.toolCallId,
          name: 'tool',
          input: undefined,
        }
        return [...items, { ...orphan, output: event.output, isError: event.isError }]
      }
      const next = items.slice()
      next[index] = { ...call, output: event.output, isError: event.isError }
      return next
    }
    case 'file-change':
      return [
        ...items,
        {
          kind: 'file',
          path: event.path,
          change: event.kind,
          ...(event.diff !== undefined && { diff: event.diff }),
        },
      ]
    case 'approval-required':
      return [
        ...items,
        {
          kind: 'approval',
          actionId: event.actionId,
          summary: event.summary,
          classification: event.classification,
        },
      ]
    case 'error':
      return [...items, { kind: 'error', code: event.code, message: event.message }]
    case 'raw': {
      const last = items.at(-1)
      if (last?.kind === 'raw' && last.stream === event.stream)
        return [...items.slice(0, -1), { ...last, lines: [...last.lines, event.value] }]
      return [...items, { kind: 'raw', stream: event.stream, lines: [event.value] }]
    }
  }
}

/**
 * Folds an event into the sub-task of the tool call `parentId` names (at any depth), or returns
 * undefined when no such call is in `items`.
 */
function foldIntoParent(
  items: TranscriptItem[],
  parentId: string,
  event: ItemEvent,
): TranscriptItem[] | undefined {
  for (let index = items.length - 1; index >= 0; index--) {
    const item = items[index]!
    if (item.kind !== 'tool') continue
    const children =
      item.toolCallId === parentId
        ? foldItem(item.children ?? [], event)
        : item.children && foldIntoParent(item.children, parentId, event)
    if (!children) continue
    const next = items.slice()
    next[index] = { ...item, children }
    return next
  }
  return undefined
}

function foldEvent(run: RunTranscript, envelope: EventEnvelope): RunTranscript {
  const next = { ...run, lastSeq: envelope.seq }
  switch (envelope.type) {
    case 'run-start':
      return { ...next, start: envelope }
    case 'usage': {
      // Proxy metering wins: once a run has proxy usage, the agent's own numbers would count twice.
      if (run.usageSource === 'proxy' && envelope.source === 'agent') return next
      const base = run.usageSource === 'agent' && envelope.source === 'proxy' ? null : run.usage
      return { ...next, usage: addUsage(base, envelope), usageSource: envelope.source }
    }
    case 'handoff':
      // What the agent was told of other agents' turns: the chat already shows those turns themselves.
      return next
    case 'run-end':
      return { ...next, end: envelope, usage: envelope.usage ?? run.usage }
    case 'finalize-end': {
      // A finalize retried after the run ended: the run's status is what it says now.
      const end = run.end && { ...run.end, status: envelope.status }
      if (envelope.finalize === 'ok') return { ...next, end }
      const message = `its changes are still on the host: ${envelope.reason ?? 'finalize failed'}`
      return {
        ...next,
        end,
        items: [...run.items, { kind: 'error', code: 'workspace_finalize_failed', message }],
      }
    }
    // The workspace's setup command before the agent: shown as its output lines (a failure also has an
    // `error` event).
    case 'workspace-setup-start': {
      const where = envelope.target === 'local' ? '' : ` on ${envelope.target}`
      const line = `workspace setup${where}: ${envelope.command}`
      return { ...next, items: foldItem(run.items, { type: 'raw', stream: 'stdout', value: line }) }
    }
    case 'workspace-setup-delta': {
      const value = envelope.text.replace(/\n$/, '')
      return { ...next, items: foldItem(run.items, { type: 'raw', stream: envelope.stream, value }) }
    }
    case 'workspace-setup-end':
    case 'workspace-landed':
      return next
    // An attempt's check result: shown in the attempts view, not in the chat.
    case 'attempt-finished':
      return next
    default: {
      // A sub-agent's events go under the call that started it; without that call, at the top.
      const parentId = 'parentId' in envelope ? envelope.parentId : undefined
      const nested = parentId ? foldIntoParent(run.items, parentId, envelope) : undefined
      return { ...next, items: nested ?? foldItem(run.items, envelope) }
    }
  }
}

export function applyEvent(transcript: Transcript, envelope: EventEnvelope): Transcript {
  const run = transcript[envelope.runId] ?? emptyRun(envelope.runId)
  if (envelope.seq <= run.lastSeq) return transcript
  return { ...transcript, [envelope.runId]: foldEvent(run, envelope) }
}
