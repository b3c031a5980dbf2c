// The built-in agent's history in a conversation other agents took part in. Its stored messages hold
// every user message (each tagged with the run it started) but only its own replies, so another agent's
// turn would leave two user messages in a row — which a provider merges into one, and the agent redoes
// the first task. Here each user message another agent answered is followed by that agent's reply as an
// assistant turn (who took it, its final text, the files it changed, the proposals decided), bounded like
// every handoff (handoff.ts), and two user messages are never left adjacent.
import type { HandoffEvent } from '../core/events.js'
import type { Message } from '../core/messages.js'
import { boundTurns, type HandoffTurn, renderAgentPart, turnAuthor } from './handoff.js'

/** A stored message and the run it belongs to (a user message: the run it started). */
export interface HistoryEntry {
  message: Message
  runId: string | null
  createdAt?: string
}

/** A run of the conversation, as far as finding the user message that started it needs. */
export interface StartedRun {
  id: string
  prompt: string
  createdAt: string
}

const textOf = (message: Message) =>
  message.role === 'user'
    ? message.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
    : ''

/**
 * User messages stored before messages named their run get the run they started: the oldest run not yet
 * taken whose prompt is the message's text, created with it or after it.
 */
export function attachRuns(stored: readonly HistoryEntry[], runs: readonly StartedRun[]): HistoryEntry[] {
  const taken = new Set(stored.flatMap((entry) => (entry.runId ? [entry.runId] : [])))
  return stored.map((entry) => {
    if (entry.runId !== null || entry.message.role !== 'user' || entry.createdAt === undefined) return entry
    const text = textOf(entry.message)
    const run = runs.find(
      (candidate) =>
        !taken.has(candidate.id) && candidate.prompt === text && candidate.createdAt >= entry.createdAt!,
    )
    if (!run) return entry
    taken.add(run.id)
    return { ...entry, runId: run.id }
  })
}

/** Stands between two user messages when nothing answered the first. */
export const NO_REPLY_TEXT = '(No reply was recorded for the message above.)'

/** What the built-in agent is told of other agents' turns: the reply text per run, and the event. */
export interface ForeignReplies {
  /** Run id → the assistant text that stands for that run's reply. */
  replies: ReadonlyMap<string, string>
  /** What was handed over that the agent had not seen before (its turns after its own last run). */
  event: HandoffEvent | undefined
  /** The conversation's ended runs, oldest first: for `attachRuns`. */
  runs: readonly StartedRun[]
}

function replyText(turn: HandoffTurn, detail: 'full' | 'summary' | 'omitted'): string {
  const who = turnAuthor(turn)
  if (detail === 'omitted')
    return `(Another agent, ${who}, answered this message; its reply is left out to fit the context window.)`
  return `(Another agent, ${who}, took this turn in the same workspace.)\n${renderAgentPart(turn, detail)}`
}

/**
 * The replies of other agents' turns (`foreign`, oldest first), bounded by `budgetChars`. `unseenAfter` is
 * the agent's own last run: turns after it are the ones the event reports as handed over.
 */
export function foreignReplies(
  foreign: readonly HandoffTurn[],
  options: { budgetChars: number; unseenAfter?: string | undefined },
): Omit<ForeignReplies, 'runs'> {
  const bounded = boundTurns(foreign, options.budgetChars, (turn, detail) => replyText(turn, detail).length)
  const replies = new Map<string, string>()
  for (const { turn, detail } of bounded.turns) replies.set(turn.runId, replyText(turn, detail))
  const unseen = bounded.turns.filter(
    ({ turn }) => options.unseenAfter === undefined || turn.runId > options.unseenAfter,
  )
  const event: HandoffEvent | undefined =
    unseen.length === 0
      ? undefined
      : {
          type: 'handoff',
          mode: 'history',
          runs: unseen.map(({ turn }) => turn.runId),
          chars: unseen.reduce((sum, { turn }) => sum + replies.get(turn.runId)!.length, 0),
          budgetChars: options.budgetChars,
          summarised: unseen.filter(({ detail }) => detail === 'summary').length,
          omitted: unseen.filter(({ detail }) => detail === 'omitted').length,
        }
  return { replies, event }
}

/**
 * The stored messages with other agents' replies after the user messages they answered, and no two user
 * messages adjacent. Tool messages and the agent's own turns are left as they are. `runs` find the run of
 * a user message stored before messages named their run.
 */
export function builtinHistory(
  stored: readonly HistoryEntry[],
  replies: ReadonlyMap<string, string>,
  runs: readonly StartedRun[] = [],
): Message[] {
  const history: Message[] = []
  for (const { message, runId } of attachRuns(stored, runs)) {
    if (message.role === 'user' && history.at(-1)?.role === 'user') history.push(assistantText(NO_REPLY_TEXT))
    history.push(message)
    const reply = message.role === 'user' && runId !== null ? replies.get(runId) : undefined
    if (reply !== undefined) history.push(assistantText(reply))
  }
  return history
}

function assistantText(text: string): Message {
  return { role: 'assistant', content: [{ type: 'text', text }], stopReason: 'end_turn' }
}
