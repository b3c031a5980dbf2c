// The SSE streams of a run and of a conversation. Both replay from the store what follows the client's
// Last-Event-ID, then deliver live from the bus; both answer 404 for another user's ids, like every route.
import type { Hono } from 'hono'
import { AppError } from '../../core/errors.js'
import { type EventEnvelope, isTerminalRunStatus } from '../../core/events.js'
import type { Logger } from '../../core/logger.js'
import type { EventBus, EventPosition } from '../../runs/event-bus.js'
import type { RunsRepository } from '../../store/repositories/runs-repository.js'
import type { Store } from '../../store/store.js'
import type { AppVariables } from '../auth-middleware.js'
import { conversationEventId, parseLastEventId, runEventId, streamSubscription } from '../sse.js'

/** Replay reads the store a page at a time, so a long history never sits in memory whole. */
export const REPLAY_PAGE_SIZE = 500
/** More runs than one conversation will have; the oldest beyond it would not be replayed. */
const MAX_CONVERSATION_RUNS = 10_000
const ACTIVITY_TYPES = [
  'run-start',
  'run-end',
  'approval-required',
  'attempt-finished',
  'workspace-landed',
] as const

export interface EventRouteDeps {
  store: Store
  bus: EventBus
  log?: Logger
  keepAliveMs?: number
  stallTimeoutMs?: number
}

export function registerEventRoutes(app: Hono<{ Variables: AppVariables }>, deps: EventRouteDeps): void {
  const streamOptions = {
    ...(deps.keepAliveMs !== undefined && { keepAliveMs: deps.keepAliveMs }),
    ...(deps.stallTimeoutMs !== undefined && { stallTimeoutMs: deps.stallTimeoutMs }),
    onError: (error: unknown) =>
      deps.log?.warn('event stream failed', {
        error: error instanceof Error ? error.message : String(error),
      }),
  }

  app.get('/api/runs/:id/events', async (context) => {
    const afterSeq = parseLastEventId(context, 'run') ?? 0
    const runs = deps.store.forUser(context.get('principal').user.id).runs
    const id = context.req.param('id')
    const run = await runs.get(id)
    if (!run) throw new AppError('not_found', `no run ${id}`)
    const subscription = deps.bus.subscribeRun(run.id, {
      afterSeq,
      // Its run-end is stored by the time the status says so (the writer flushes first).
      ended: isTerminalRunStatus(run.status),
      loadStored: (after) => runs.listEvents(run.id, { afterSeq: after, limit: REPLAY_PAGE_SIZE }),
    })
    return streamSubscription(context, subscription, { ...streamOptions, idOf: runEventId })
  })

  // What the web UI's lists watch: runs starting and ending and proposals waiting, for all of the caller's
  // runs. Live only: a client refetches its lists when it (re)connects, so there is nothing to replay.
  app.get('/api/activity', (context) => {
    const subscription = deps.bus.subscribeUser(context.get('principal').user.id, ACTIVITY_TYPES)
    return streamSubscription(context, subscription, { ...streamOptions, idOf: conversationEventId })
  })

  app.get('/api/conversations/:id/events', async (context) => {
    const after = parseLastEventId(context, 'conversation')
    const scope = deps.store.forUser(context.get('principal').user.id)
    const id = context.req.param('id')
    const conversation = await scope.conversations.get(id)
    if (!conversation) throw new AppError('not_found', `no conversation ${id}`)
    const subscription = deps.bus.subscribeConversation(conversation.id, {
      after,
      loadStored: (position) => loadConversationPage(scope.runs, conversation.id, position),
    })
    return streamSubscription(context, subscription, { ...streamOptions, idOf: conversationEventId })
  })
}

/** The next page of a conversation's stored events after `after`: runs in creation order (ULID ids). */
async function loadConversationPage(
  runs: Pick<RunsRepository, 'list' | 'listEvents'>,
  conversationId: string,
  after: EventPosition | null,
): Promise<EventEnvelope[]> {
  const newestFirst = await runs.list({ conversationId, limit: MAX_CONVERSATION_RUNS })
  for (const run of newestFirst.reverse()) {
    if (after && run.id < after.runId) continue
    const afterSeq = after && run.id === after.runId ? after.seq : 0
    // The bus has the rest of this run already (it arrived live).
    if (afterSeq === Number.POSITIVE_INFINITY) continue
    const page = await runs.listEvents(run.id, { afterSeq, limit: REPLAY_PAGE_SIZE })
    if (page.length > 0) return page
  }
  return []
}
