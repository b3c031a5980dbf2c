// Where a handoff's turns come from: a conversation's ended runs, their stored events (the agent's final
// text, its file changes — reported by the agent or synthesised from git, see run-changes.ts) and the
// proposals decided on them. See handoff.ts for what is done with them.
import type { PendingAction, Run } from '../core/api-types.js'
import { type EventEnvelope, isTerminalRunStatus } from '../core/events.js'
import type { UserScope } from '../store/store.js'
import {
  diffStat,
  formatHandoffBlock,
  type HandoffBlock,
  handoffBudgetChars,
  type HandoffFile,
  type HandoffTurn,
} from './handoff.js'
import { type ForeignReplies, foreignReplies } from './handoff-history.js'

/** The built-in agent's model is whichever the user picked: no window is known, the default applies. */
const BUILTIN_CONTEXT_WINDOW_HINT = null

/** Events after which the agent's text is its answer: a tool call or result, or a proposal. */
const STEP_EVENTS = new Set(['tool-call', 'tool-result', 'approval-required'])

/** A run's final text: what it said after its last step (all it said, if that is nothing). */
function finalTextOf(events: readonly EventEnvelope[]): string {
  let all = ''
  let sinceLastStep = ''
  for (const event of events) {
    // A sub-agent's work is its parent's business: only the agent's own words are its answer.
    if ('parentId' in event && event.parentId) continue
    if (event.type === 'text-delta') {
      all += event.text
      sinceLastStep += event.text
    } else if (STEP_EVENTS.has(event.type)) sinceLastStep = ''
  }
  return (sinceLastStep.trim() === '' ? all : sinceLastStep).trim()
}

/** The files a run changed, once each in the order first touched, with the diff stat summed. */
function filesOf(events: readonly EventEnvelope[]): HandoffFile[] {
  const files = new Map<string, HandoffFile>()
  for (const event of events) {
    if (event.type !== 'file-change') continue
    const known = files.get(event.path)
    const stat = event.diff !== undefined ? diffStat(event.diff) : undefined
    if (!known) {
      files.set(event.path, { path: event.path, kind: event.kind, ...stat })
      continue
    }
    // Created then edited is still a creation; anything then deleted is a deletion.
    if (event.kind === 'delete' || known.kind !== 'create') known.kind = event.kind
    if (stat) {
      known.added = (known.added ?? 0) + stat.added
      known.removed = (known.removed ?? 0) + stat.removed
    }
  }
  return [...files.values()]
}

/**
 * The files a run changed: its file-change events, then what its applied proposals changed (a confirmed
 * proposal is applied outside the run, so no event of the run says so; an auto-approved one has both).
 */
function changedFiles(run: Run, events: readonly EventEnvelope[], actions: readonly PendingAction[]) {
  const files = filesOf(events)
  for (const action of actions) {
    const target = action.precondition?.path
    if (action.runId !== run.id || action.status !== 'applied' || !target) continue
    if (files.some((file) => file.path === target)) continue
    const kind =
      action.classification === 'destructive_delete'
        ? 'delete'
        : action.precondition?.sha256 === null
          ? 'create'
          : 'modify'
    files.push({ path: target, kind, ...(action.diff !== null && diffStat(action.diff)) })
  }
  return files
}

/** One ended run as a handoff turn. */
export function turnFromRun(
  run: Run,
  events: readonly EventEnvelope[],
  actions: readonly PendingAction[],
): HandoffTurn {
  return {
    runId: run.id,
    agent: run.agent,
    adapter: run.adapter,
    prompt: run.prompt,
    status: run.status,
    reason: run.reason,
    finalText: finalTextOf(events),
    files: changedFiles(run, events, actions),
    proposals: actions
      .filter((action) => action.runId === run.id && action.status !== 'pending')
      .map((action) => ({ summary: action.summary, status: action.status })),
  }
}

/** The runs of a conversation that ended before `current`, oldest first. */
export async function endedRunsBefore(
  scope: Pick<UserScope, 'runs'>,
  conversationId: string,
  current: Pick<Run, 'id'>,
): Promise<Run[]> {
  // Newest first; ids sort by creation time.
  const runs = await scope.runs.list({ conversationId, limit: 500 })
  return runs.filter((run) => run.id < current.id && isTerminalRunStatus(run.status)).reverse()
}

/** `runs` (oldest first) as handoff turns, read from their events and the conversation's proposals. */
export async function loadHandoffTurns(
  scope: Pick<UserScope, 'runs' | 'actions'>,
  conversationId: string,
  runs: readonly Run[],
): Promise<HandoffTurn[]> {
  if (runs.length === 0) return []
  const actions = await scope.actions.list({ conversationId })
  const turns: HandoffTurn[] = []
  for (const run of runs) turns.push(turnFromRun(run, await allEvents(scope, run.id), actions))
  return turns
}

const EVENTS_PAGE = 10_000

/** Every stored event of a run, page by page: a long run's final text is at its end. */
async function allEvents(scope: Pick<UserScope, 'runs'>, runId: string): Promise<EventEnvelope[]> {
  const events: EventEnvelope[] = []
  for (;;) {
    const page = await scope.runs.listEvents(runId, { afterSeq: events.at(-1)?.seq ?? 0, limit: EVENTS_PAGE })
    events.push(...page)
    if (page.length < EVENTS_PAGE) return events
  }
}

/**
 * The handoff block for a CLI agent's run in a conversation: the turns after `resumed` (the run whose
 * session it continues) as "since you last spoke", or every turn so far for a new session.
 */
export async function cliHandoff(
  scope: Pick<UserScope, 'runs' | 'actions'>,
  run: Run,
  resumed: Run | undefined,
  contextWindowHint: number | null | undefined,
): Promise<HandoffBlock | undefined> {
  if (!run.conversationId) return undefined
  const ended = await endedRunsBefore(scope, run.conversationId, run)
  const start = resumed ? ended.findIndex((candidate) => candidate.id === resumed.id) + 1 : 0
  const turns = await loadHandoffTurns(scope, run.conversationId, ended.slice(start))
  return formatHandoffBlock(turns, {
    mode: resumed ? 'since-last' : 'new-session',
    budgetChars: handoffBudgetChars(contextWindowHint),
  })
}

/** Other agents' turns of the conversation, as the built-in agent's history takes them. */
export async function builtinHandoff(
  scope: Pick<UserScope, 'runs' | 'actions'>,
  conversationId: string,
  run: Pick<Run, 'id'>,
): Promise<ForeignReplies> {
  const ended = await endedRunsBefore(scope, conversationId, run)
  const foreign = ended.filter((candidate) => candidate.adapter !== 'builtin')
  if (foreign.length === 0) return { replies: new Map(), event: undefined, runs: ended }
  const lastOwn = ended.findLast((candidate) => candidate.adapter === 'builtin')
  const replies = foreignReplies(await loadHandoffTurns(scope, conversationId, foreign), {
    budgetChars: handoffBudgetChars(BUILTIN_CONTEXT_WINDOW_HINT),
    unseenAfter: lastOwn?.id,
  })
  return { ...replies, runs: ended }
}
