// Live delivery of run events. A batch reaches the bus only after the one event writer has stored it, so a
// subscriber can always catch up from the store: it attaches to the live source first and buffers, replays
// what is stored, then drains the buffer, skipping what the replay already gave it (per-run seq
// bookkeeping). The two halves overlap instead of leaving a gap, and the overlap is what gets skipped.
// Each subscriber's queue is bounded: one that falls too far behind is ended as `lagging` and reconnects
// with its last id, so a slow client never blocks a publisher or grows this process's memory.
import type { AgentEventType, EventEnvelope } from '../core/events.js'

export const DEFAULT_MAX_QUEUE = 1000

/** A stored batch as the live source carries it. */
export interface LiveBatch {
  envelopes: readonly EventEnvelope[]
  userId: string
  conversationId: string | null
}

/**
 * Where live batches come from. In-process for now; a later milestone puts PostgreSQL LISTEN/NOTIFY behind
 * the same two functions so that every daemon sees the runs of every other daemon.
 */
export interface LiveSource {
  /** Hands a stored batch to every listener, in publication order. */
  publish(batch: LiveBatch): void
  /** Returns the function that stops listening. */
  listen(listener: (batch: LiveBatch) => void): () => void
}

export function createInProcessLiveSource(): LiveSource {
  const listeners = new Set<(batch: LiveBatch) => void>()
  return {
    publish(batch) {
      for (const listener of listeners) listener(batch)
    },
    listen(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
}

export type SubscriptionEndReason = 'run-end' | 'closed' | 'lagging'

/** Events of one run or one conversation: what is stored after a position, then what is published live. */
export interface Subscription extends AsyncIterable<EventEnvelope> {
  /** Ends it as `lagging`: its client reconnects with its last id and replays what it missed. */
  fallBehind(): void
  /** Why it ended; undefined while it is open. */
  readonly reason: SubscriptionEndReason | undefined
  /** Settles when it ends, whatever ended it (a writer of SSE must notice `lagging` while it is blocked). */
  readonly ended: Promise<SubscriptionEndReason>
  close(): void
}

/** A place in a conversation's events: runs in creation order (their ids are ULIDs), then seq. */
export interface EventPosition {
  runId: string
  seq: number
}

export interface RunSubscribeOptions {
  /** Deliver what follows this seq; 0 from the start. */
  afterSeq: number
  /** The next stored events of the run after `afterSeq`, in seq order; empty once there are no more. */
  loadStored: (afterSeq: number) => Promise<EventEnvelope[]>
  /**
   * The run had already ended when the client asked: replay what is stored and stop, instead of waiting
   * live for a `run-end` that the client already has, or that an interrupted run never wrote.
   */
  ended?: boolean
}

export interface ConversationSubscribeOptions {
  /** Deliver what follows this position; null from the start. */
  after: EventPosition | null
  /**
   * The next stored events after the position, runs in creation order; empty once there are no more. A
   * position whose seq is Infinity asks for the runs after that one only (the rest of it arrived live).
   */
  loadStored: (after: EventPosition | null) => Promise<EventEnvelope[]>
}

export interface EventBus {
  /** Takes batches that are already stored, in order. Never blocks: slow subscribers are ended instead. */
  publish(envelopes: readonly EventEnvelope[], meta: { userId: string; conversationId: string | null }): void
  /** Ends after yielding the run's `run-end`. */
  subscribeRun(runId: string, options: RunSubscribeOptions): Subscription
  /** Stays open: the conversation's next runs appear as they start. */
  subscribeConversation(conversationId: string, options: ConversationSubscribeOptions): Subscription
  /**
   * Live only, no replay: the events of every run of one user whose type is in `types` (the web UI's
   * activity feed, which refetches what it shows when one arrives and whenever it reconnects).
   */
  subscribeUser(userId: string, types: readonly AgentEventType[]): Subscription
  /**
   * The live source may have lost batches (its connection to the other nodes dropped): every open
   * subscription ends as `lagging`, so each client resumes from the store with its last id.
   */
  resync(): void
  /** Stops listening and ends every subscription as `closed`, later ones at once (daemon shutdown). */
  close(): void
}

type Receiver = (envelopes: readonly EventEnvelope[]) => void

interface SubscriptionDefinition {
  maxQueue: number
  start: EventPosition | null
  loadStored: (after: EventPosition | null) => Promise<EventEnvelope[]>
  /** The last seq of a run the client already has, before anything was delivered on this subscription. */
  baselineSeq: (runId: string) => number
  endsWith: (envelope: EventEnvelope) => boolean
  /** A run subscription: once the rest of its run is buffered, the replay is over. */
  singleRun: boolean
  replayOnly: boolean
  /** Starts live delivery to `receive`; returns the function that stops it. */
  attach: (receive: Receiver) => () => void
}

export function createEventBus(options: { maxQueue?: number; source?: LiveSource } = {}): EventBus {
  const maxQueue = options.maxQueue ?? DEFAULT_MAX_QUEUE
  const source = options.source ?? createInProcessLiveSource()
  const byRun = new Map<string, Set<Receiver>>()
  const byConversation = new Map<string, Set<Receiver>>()
  const byUser = new Map<string, Set<Receiver>>()
  const open = new Set<Subscription>()

  let closed = false
  const stopListening = source.listen((batch) => {
    for (const receive of byUser.get(batch.userId) ?? []) receive(batch.envelopes)
    if (batch.conversationId !== null) {
      for (const receive of byConversation.get(batch.conversationId) ?? []) receive(batch.envelopes)
    }
    const runIds = new Set(batch.envelopes.map((envelope) => envelope.runId))
    for (const runId of runIds) {
      const receivers = byRun.get(runId)
      if (!receivers) continue
      const envelopes =
        runIds.size === 1 ? batch.envelopes : batch.envelopes.filter((envelope) => envelope.runId === runId)
      for (const receive of receivers) receive(envelopes)
    }
  })

  const attachTo = (index: Map<string, Set<Receiver>>, key: string) => (receive: Receiver) => {
    let receivers = index.get(key)
    if (!receivers) index.set(key, (receivers = new Set()))
    receivers.add(receive)
    return () => {
      receivers.delete(receive)
      if (receivers.size === 0 && index.get(key) === receivers) index.delete(key)
    }
  }

  const track = (subscription: Subscription): Subscription => {
    if (closed) subscription.close()
    open.add(subscription)
    void subscription.ended.then(() => open.delete(subscription))
    return subscription
  }

  return {
    publish(envelopes, meta) {
      if (envelopes.length === 0) return
      source.publish({ envelopes, userId: meta.userId, conversationId: meta.conversationId })
    },
    subscribeRun(runId, runOptions) {
      return track(
        createSubscription({
          maxQueue,
          start: { runId, seq: runOptions.afterSeq },
          loadStored: (after) => runOptions.loadStored(after?.seq ?? runOptions.afterSeq),
          baselineSeq: () => runOptions.afterSeq,
          endsWith: (envelope) => envelope.type === 'run-end',
          singleRun: true,
          replayOnly: runOptions.ended ?? false,
          attach: attachTo(byRun, runId),
        }),
      )
    },
    subscribeConversation(conversationId, conversationOptions) {
      const { after } = conversationOptions
      return track(
        createSubscription({
          maxQueue,
          start: after,
          loadStored: conversationOptions.loadStored,
          // Runs older than the position were delivered whole; runs newer than it not at all.
          baselineSeq: (runId) => {
            if (!after || runId > after.runId) return 0
            return runId === after.runId ? after.seq : Number.POSITIVE_INFINITY
          },
          endsWith: () => false,
          singleRun: false,
          replayOnly: false,
          attach: attachTo(byConversation, conversationId),
        }),
      )
    },
    subscribeUser(userId, types) {
      const attach = attachTo(byUser, userId)
      return track(
        createSubscription({
          maxQueue,
          start: null,
          loadStored: async () => [],
          baselineSeq: () => 0,
          endsWith: () => false,
          singleRun: false,
          replayOnly: false,
          // Filtered before queueing, so a burst of text deltas never makes this subscription lag.
          attach: (receive) =>
            attach((envelopes) => {
              const wanted = envelopes.filter((envelope) => types.includes(envelope.type))
              if (wanted.length > 0) receive(wanted)
            }),
        }),
      )
    },
    resync() {
      for (const subscription of open) subscription.fallBehind()
    },
    close() {
      closed = true
      stopListening()
      for (const subscription of open) subscription.close()
    },
  }
}

function createSubscription(definition: SubscriptionDefinition): Subscription {
  // Live envelopes not yet taken: the replay-time buffer, then the live queue. Never longer than maxQueue.
  const queue: EventEnvelope[] = []
  const delivered = new Map<string, number>()
  // The first seq of each run that arrived live during the replay: once the replay reaches it, the buffer
  // holds the rest of that run, so the replay moves on instead of chasing a run that is still writing.
  const firstBuffered = new Map<string, number>()
  let replaying = true
  let reason: SubscriptionEndReason | undefined
  let wake: (() => void) | undefined
  let iterated = false
  let resolveEnded: (reason: SubscriptionEndReason) => void = () => {}
  const ended = new Promise<SubscriptionEndReason>((resolve) => (resolveEnded = resolve))

  const lastSeqOf = (runId: string) => delivered.get(runId) ?? definition.baselineSeq(runId)
  const isNew = (envelope: EventEnvelope) => envelope.seq > lastSeqOf(envelope.runId)
  const restIsBuffered = (runId: string) => {
    const first = firstBuffered.get(runId)
    return first !== undefined && lastSeqOf(runId) >= first - 1
  }

  let detach = () => {}
  const end = (why: SubscriptionEndReason) => {
    if (reason) return
    reason = why
    detach()
    queue.length = 0
    firstBuffered.clear()
    resolveEnded(why)
    wake?.()
  }

  const receive: Receiver = (envelopes) => {
    if (reason) return
    for (const envelope of envelopes) {
      if (replaying && !firstBuffered.has(envelope.runId)) firstBuffered.set(envelope.runId, envelope.seq)
      queue.push(envelope)
    }
    if (queue.length > definition.maxQueue) end('lagging')
    else wake?.()
  }
  // An ended run gets no more events: nothing to listen for.
  if (!definition.replayOnly) detach = definition.attach(receive)

  async function* iterate(): AsyncGenerator<EventEnvelope, void, undefined> {
    try {
      let position = definition.start
      while (!reason) {
        const page = await definition.loadStored(position)
        const last = page.at(-1)
        // A page that does not move past the position would make this loop forever.
        if (!last || (position && last.runId === position.runId && last.seq <= position.seq)) break
        for (const envelope of page) {
          if (reason) return
          if (!isNew(envelope)) continue
          delivered.set(envelope.runId, envelope.seq)
          yield envelope
          // An ended run's replay goes on past its run-end: a finalize retried later logs after it.
          if (definition.endsWith(envelope) && !definition.replayOnly) return end('run-end')
        }
        position = { runId: last.runId, seq: last.seq }
        if (!restIsBuffered(position.runId)) continue
        if (definition.singleRun) break
        // Only the conversation's newer runs may still hold stored events this subscription has not seen.
        position = { runId: position.runId, seq: Number.POSITIVE_INFINITY }
      }
      replaying = false
      firstBuffered.clear()
      if (definition.replayOnly) return end('run-end')
      while (!reason) {
        const envelope = queue.shift()
        if (!envelope) {
          await new Promise<void>((resolve) => (wake = resolve))
          wake = undefined
          continue
        }
        if (!isNew(envelope)) continue
        delivered.set(envelope.runId, envelope.seq)
        yield envelope
        if (definition.endsWith(envelope)) return end('run-end')
      }
    } finally {
      end('closed')
    }
  }

  return {
    get reason() {
      return reason
    },
    ended,
    close: () => end('closed'),
    fallBehind: () => end('lagging'),
    [Symbol.asyncIterator]() {
      if (iterated) throw new Error('a subscription can be iterated only once')
      iterated = true
      return iterate()
    },
  }
}
