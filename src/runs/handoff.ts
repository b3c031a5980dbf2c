// The handoff between agents of one conversation. Each agent keeps its own session (a CLI's transcript,
// the built-in agent's stored messages), so when the user switches agent the next one has not seen what
// the others did. From the conversation's ended runs this module picks the turns the agent about to run
// has not seen — all of them for a new session, those after its own last run when it resumes its session —
// and renders them as one block bounded by the agent's context window: the user's message, the agent's
// final text, the files it changed (path, kind, diff stat) and the proposals decided. Over the bound, the
// oldest turns are summarised (cut short) first, then left out, never the newest. Pure: the store side is
// handoff-source.ts, the built-in agent's history handoff-history.ts.
import type { FileChangeEvent, HandoffEvent } from '../core/events.js'

export interface HandoffFile {
  path: string
  kind: FileChangeEvent['kind']
  /** Lines added and removed, when the change came with a diff. */
  added?: number
  removed?: number
}

/** One ended run of the conversation, as another agent needs to know it. */
export interface HandoffTurn {
  runId: string
  /** Profile name (or adapter id). */
  agent: string
  adapter: string
  /** The user's message; empty for a run that continued after proposals were decided. */
  prompt: string
  status: string
  reason: string | null
  /** What the agent said last (its answer), without sub-agents' text. */
  finalText: string
  files: HandoffFile[]
  /** Proposals of the run that a person (or auto-approval) decided. */
  proposals: { summary: string; status: string }[]
}

/** When an adapter names no context window (the built-in agent's model is anyone's). */
export const DEFAULT_CONTEXT_WINDOW_TOKENS = 128_000
/** The share of the context window a handoff may take: the agent still needs room to work. */
const HANDOFF_WINDOW_SHARE = 0.25
/** A rough, deliberately pessimistic rate for English text and code. */
const CHARS_PER_TOKEN = 3
/** A summarised turn keeps this much of the user's message and of the agent's text. */
const SUMMARY_TEXT_CHARS = 300
/** A summarised turn lists at most this many files. */
const SUMMARY_FILES = 10
/** A full turn lists at most this many files. */
const FULL_FILES = 200

/** How many characters a handoff may take, from the adapter's `contextWindowHint` (tokens). */
export function handoffBudgetChars(contextWindowHint: number | null | undefined): number {
  const tokens = contextWindowHint ?? DEFAULT_CONTEXT_WINDOW_TOKENS
  return Math.floor(tokens * HANDOFF_WINDOW_SHARE * CHARS_PER_TOKEN)
}

/** `+added -removed` of a unified diff (its `+++`/`---` header lines are not changes). */
export function diffStat(diff: string): { added: number; removed: number } {
  let added = 0
  let removed = 0
  for (const line of diff.split('\n')) {
    if (line.startsWith('+++ ') || line.startsWith('--- ')) continue
    if (line.startsWith('+')) added++
    else if (line.startsWith('-')) removed++
  }
  return { added, removed }
}

/**
 * The turns the agent about to run has not seen, oldest first. `ended` is the conversation's ended runs
 * before this one, oldest first; `resumedRunId` the run whose session it continues (it saw everything up
 * to and including that run), absent for a new session (it saw nothing).
 */
export function unseenTurns(ended: readonly HandoffTurn[], resumedRunId?: string): HandoffTurn[] {
  if (!resumedRunId) return [...ended]
  const index = ended.findIndex((turn) => turn.runId === resumedRunId)
  return index === -1 ? [...ended] : ended.slice(index + 1)
}

export type TurnDetail = 'full' | 'summary' | 'omitted'

function cut(text: string, max: number): string {
  const trimmed = text.trim()
  return trimmed.length <= max ? trimmed : `${trimmed.slice(0, max)}… [cut short]`
}

function fileLine(file: HandoffFile): string {
  const stat = file.added !== undefined ? `, +${file.added} -${file.removed ?? 0}` : ''
  return `- ${file.path} (${file.kind}${stat})`
}

/** Who did the turn, as the other agents read it: `reviewer (claude-code)`, or just `codex`. */
export function turnAuthor(turn: Pick<HandoffTurn, 'agent' | 'adapter'>): string {
  return turn.agent === turn.adapter ? turn.agent : `${turn.agent} (${turn.adapter})`
}

/** What the agent of a turn did: its text, files and proposals (the user's message is apart). */
export function renderAgentPart(turn: HandoffTurn, detail: Exclude<TurnDetail, 'omitted'>): string {
  const full = detail === 'full'
  const lines: string[] = []
  const ending =
    turn.status === 'succeeded' ? '' : ` [run ${turn.status}${turn.reason ? `: ${turn.reason}` : ''}]`
  const text = full ? turn.finalText.trim() : cut(turn.finalText, SUMMARY_TEXT_CHARS)
  lines.push(`${turnAuthor(turn)} replied${ending}: ${text === '' ? '(no text)' : text}`)
  if (turn.files.length > 0) {
    const shown = turn.files.slice(0, full ? FULL_FILES : SUMMARY_FILES)
    lines.push(`Files it changed:`, ...shown.map(fileLine))
    if (shown.length < turn.files.length) lines.push(`- … and ${turn.files.length - shown.length} more`)
  }
  if (turn.proposals.length > 0) {
    const shown = turn.proposals.slice(0, full ? FULL_FILES : SUMMARY_FILES)
    lines.push(`Proposals decided:`, ...shown.map((proposal) => `- ${proposal.summary}: ${proposal.status}`))
    if (shown.length < turn.proposals.length)
      lines.push(`- … and ${turn.proposals.length - shown.length} more`)
  }
  return lines.join('\n')
}

/** The user's message of a turn, as the block shows it. */
function renderUserPart(turn: HandoffTurn, detail: Exclude<TurnDetail, 'omitted'>): string {
  if (turn.prompt.trim() === '') return 'User: (decided the proposals above; the agent went on)'
  return `User: ${detail === 'full' ? turn.prompt.trim() : cut(turn.prompt, SUMMARY_TEXT_CHARS)}`
}

function renderTurn(turn: HandoffTurn, detail: Exclude<TurnDetail, 'omitted'>): string {
  return `${renderUserPart(turn, detail)}\n${renderAgentPart(turn, detail)}`
}

export interface BoundedTurns {
  turns: { turn: HandoffTurn; detail: TurnDetail }[]
  summarised: number
  omitted: number
}

/**
 * How much of each turn fits in `budgetChars` (as `measure` counts a turn at a detail): every turn in
 * full if it fits, else the oldest summarised first, then the oldest left out — the newest stays.
 */
export function boundTurns(
  turns: readonly HandoffTurn[],
  budgetChars: number,
  measure: (turn: HandoffTurn, detail: Exclude<TurnDetail, 'omitted'>) => number = (turn, detail) =>
    renderTurn(turn, detail).length + 2,
): BoundedTurns {
  const bounded = turns.map((turn) => ({ turn, detail: 'full' as TurnDetail }))
  const sizeOf = (entry: { turn: HandoffTurn; detail: TurnDetail }) =>
    entry.detail === 'omitted' ? 0 : measure(entry.turn, entry.detail)
  let total = bounded.reduce((sum, entry) => sum + sizeOf(entry), 0)
  let summarised = 0
  let omitted = 0
  for (const step of ['summary', 'omitted'] as const) {
    for (let index = 0; index < bounded.length - 1 && total > budgetChars; index++) {
      const entry = bounded[index]!
      if (entry.detail === step || entry.detail === 'omitted') continue
      total -= sizeOf(entry)
      if (entry.detail === 'summary') summarised--
      entry.detail = step
      total += sizeOf(entry)
      if (step === 'summary') summarised++
      else omitted++
    }
  }
  // The newest alone is over the bound: summarised too (the block is cut to size after).
  const newest = bounded.at(-1)
  if (newest && total > budgetChars && newest.detail === 'full') {
    newest.detail = 'summary'
    summarised++
  }
  return { turns: bounded, summarised, omitted }
}

export type HandoffMode = HandoffEvent['mode']

export interface HandoffBlock {
  /** The text to put before the user's message. */
  text: string
  /** What the `handoff` event records. */
  event: HandoffEvent
}

const HEADINGS: Record<Exclude<HandoffMode, 'history'>, string> = {
  'new-session':
    'This conversation (and its workspace) has history from before this session of yours: other agents, or you in an earlier session, worked in it. What happened so far, oldest first:',
  'since-last':
    'Since you last spoke in this conversation, other agents worked in it (in the same workspace). What happened, oldest first:',
}

/**
 * The handoff block for a CLI agent (a new session, or "since you last spoke" when it resumes its own),
 * or nothing when there is nothing it has not seen. At most `budgetChars` long.
 */
export function formatHandoffBlock(
  turns: readonly HandoffTurn[],
  options: { mode: Exclude<HandoffMode, 'history'>; budgetChars: number },
): HandoffBlock | undefined {
  if (turns.length === 0) return undefined
  const heading = HEADINGS[options.mode]
  const footer = '--- End of what happened. The user now says: ---'
  const frame = heading.length + footer.length + 200
  const bounded = boundTurns(turns, Math.max(0, options.budgetChars - frame))
  const parts: string[] = [`<handoff>\n${heading}`]
  if (bounded.omitted > 0)
    parts.push(`(${bounded.omitted} earlier turn(s) left out to fit the context window.)`)
  for (const entry of bounded.turns) {
    if (entry.detail === 'omitted') continue
    parts.push(renderTurn(entry.turn, entry.detail))
  }
  let text = parts.join('\n\n')
  const closing = `\n</handoff>\n${footer}`
  let cutToSize = false
  if (text.length + closing.length > options.budgetChars) {
    text = `${text.slice(0, Math.max(0, options.budgetChars - closing.length - 20))}… [cut short]`
    cutToSize = true
  }
  text += closing
  return {
    text,
    event: {
      type: 'handoff',
      mode: options.mode,
      runs: turns.map((turn) => turn.runId),
      chars: text.length,
      budgetChars: options.budgetChars,
      summarised: bounded.summarised + (cutToSize && bounded.summarised === 0 ? 1 : 0),
      omitted: bounded.omitted,
    },
  }
}
