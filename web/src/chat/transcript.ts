// A conversation's transcript, folded from its event stream: per run, what the agent said, thought, ran
// and changed, in order. Pure, so it can be replayed from any point: an event at or below a run's last seq
// (a replay after a reconnect) changes nothing.
import type { EventEnvelope, RunEndEvent, RunStartEvent, UsageTotals } from '../../../src/core/events'

export type TranscriptItem =
  | { kind: 'text'; text: string }
  | { kind: 'reasoning'; text: string }
  | { kind: 'tool'; toolCallId: string; name: string; input: unknown; output?: unknown; isError?: boolean }
  | { kind: 'file'; path: string; change: 'create' | 'modify' | 'delete'; diff?: string }
  | { kind: 'approval'; actionId: string; summary: string; classification: string }
  | { kind: 'error'; code: string; message: string }
  | { kind: 'raw'; lines: string[] }

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

function foldEvent(run: RunTranscript, envelope: EventEnvelope): RunTranscript {
  const next = { ...run, lastSeq: envelope.seq }
  switch (envelope.type) {
    case 'run-start':
      return { ...next, start: envelope }
    case 'text-delta':
    case 'reasoning-delta':
      return {
        ...next,
        items: appendDelta(run.items, envelope.type === 'text-delta' ? 'text' : 'reasoning', envelope.text),
      }
    case 'tool-call':
      return {
        ...next,
        items: [
          ...run.items,
          { kind: 'tool', toolCallId: envelope.toolCallId, name: envelope.name, input: envelope.input },
        ],
      }
    case 'tool-result': {
      const index = run.items.findLastIndex(
        (item) => item.kind === 'tool' && item.toolCallId === envelope.toolCallId,
      )
      const call = run.items[index]
      if (index < 0 || call?.kind !== 'tool') {
        const orphan: TranscriptItem = {
          kind: 'tool',
          toolCallId: envelope.toolCallId,
          name: 'tool',
          input: undefined,
        }
        return {
          ...next,
          items: [...run.items, { ...orphan, output: envelope.output, isError: envelope.isError }],
        }
      }
      const items = run.items.slice()
      items[index] = { ...call, output: envelope.output, isError: envelope.isError }
      return { ...next, items }
    }
    case 'file-change':
      return {
        ...next,
        items: [
          ...run.items,
          {
            kind: 'file',
            path: envelope.path,
            change: envelope.kind,
            ...(envelope.diff !== undefined && { diff: envelope.diff }),
          },
        ],
      }
    case 'approval-required':
      return {
        ...next,
        items: [
          ...run.items,
          {
            kind: 'approval',
            actionId: envelope.actionId,
            summary: envelope.summary,
            classification: envelope.classification,
          },
        ],
      }
    case 'usage': {
      // Proxy metering wins: once a run has proxy usage, the agent's own numbers would count twice.
      if (run.usageSource === 'proxy' && envelope.source === 'agent') return next
      const base = run.usageSource === 'agent' && envelope.source === 'proxy' ? null : run.usage
      return { ...next, usage: addUsage(base, envelope), usageSource: envelope.source }
    }
    case 'error':
      return {
        ...next,
        items: [...run.items, { kind: 'error', code: envelope.code, message: envelope.message }],
      }
    case 'raw': {
      const last = run.items.at(-1)
      if (last?.kind === 'raw')
        return {
          ...next,
          items: [...run.items.slice(0, -1), { kind: 'raw', lines: [...last.lines, envelope.value] }],
        }
      return { ...next, items: [...run.items, { kind: 'raw', lines: [envelope.value] }] }
    }
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
  }
}

export function applyEvent(transcript: Transcript, envelope: EventEnvelope): Transcript {
  const run = transcript[envelope.runId] ?? emptyRun(envelope.runId)
  if (envelope.seq <= run.lastSeq) return transcript
  return { ...transcript, [envelope.runId]: foldEvent(run, envelope) }
}
