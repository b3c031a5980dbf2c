// Runs: created with their owner, moved through their statuses, ended with a `run-end` event. This is
// the first, minimal piece of the run service; the scheduler (queueing, dependencies, concurrency)
// extends it rather than writing a second.
import type {
  AgentEvent,
  EventEnvelope,
  RunStartEvent,
  RunStatus,
  TerminalRunStatus,
  UsageTotals,
} from '../core/events.js'
import { type Clock, systemClock } from '../core/ids.js'
import type { Redactor } from '../core/redact.js'
import type { NewRun, Run } from '../store/repositories/runs-repository.js'
import type { Store } from '../store/store.js'
import type { ShippedWorkspace } from '../workspaces/ssh/workspace-sync.js'
import { createEventWriter, type EventWriter } from './event-writer.js'
import { recordHostCopy } from './host-copies.js'
import { createWorkspaceGate } from './workspace-gate.js'

/** Who executes a run: only its owner may mark it interrupted and reap its processes. */
export interface RunOwner {
  node: string
  pid: number
  bootId: string
}

export interface RunEnd {
  status: TerminalRunStatus
  reason?: string
  sessionId?: string
  usage?: UsageTotals
  /** Set when the run's workspace was finalized (synced back from an SSH target, or local). */
  workspace?: {
    finalize: 'ok' | 'failed'
    reason?: string
    /** When finalize failed: the status the agent reached, and what a retried finalize needs. */
    agentStatus?: TerminalRunStatus
    sync?: unknown
  }
}

export interface ActiveRun {
  run: Run
  writer: EventWriter
  emit(event: AgentEvent): void
  setStatus(status: RunStatus): Promise<void>
  /**
   * Marks the run `running`, then emits its `run-start`. Clients fetch a run again when its run-start
   * arrives (the web UI's chat and lists), and no later event tells them it runs: stored after, the status
   * raced the agent's spawn, which a spawn by the agent launcher (IPC round trips) lost every time.
   */
  begin(event: RunStartEvent): Promise<void>
  /** Records the agent's process group so a restarted daemon can reap it. */
  setProcess(pid: number): Promise<void>
  /**
   * Records the agent's session id as soon as it is known (not only at the end), so a run interrupted
   * afterwards — a crash, a SIGKILLed daemon — can still be resumed.
   */
  setSession(sessionId: string): Promise<void>
  /**
   * Records what a finalize needs as soon as the workspace was shipped (before the agent starts), with
   * the finalize pending: a run whose process dies is then still brought back (recovery, or by hand).
   */
  recordShipped(sync: unknown): Promise<void>
  /** Whether run `runId`'s changes are known to be back (a ship may clear the host copy's stale mark). */
  hostCopySettled(runId: string): Promise<boolean>
  end(end: RunEnd): Promise<Run>
}

/** Receives every stored batch of every run, e.g. the event bus that feeds SSE subscribers. */
export type EventSink = (
  envelopes: EventEnvelope[],
  meta: { userId: string; conversationId: string | null },
) => void

export function createRunService(options: {
  store: Store
  redactor: Redactor
  owner: RunOwner
  clock?: Clock
  sink?: EventSink
}) {
  const { store, redactor, owner } = options
  const clock = options.clock ?? systemClock
  // Runs executed by this process, so other parts of it (the proxy's usage) can add events to them.
  const active = new Map<string, ActiveRun>()
  const gate = createWorkspaceGate(store)

  /** A writer for a run this process does not execute (it ended, or its owner is gone): after what is stored. */
  async function writerAfterStored(userId: string, run: Run): Promise<EventWriter> {
    const runs = store.forUser(userId).runs
    return createEventWriter({
      runs,
      runId: run.id,
      redactor,
      clock,
      afterSeq: await runs.lastEventSeq(run.id),
      onDelivered: (envelopes) => options.sink?.(envelopes, { userId, conversationId: run.conversationId }),
    })
  }

  function activate(userId: string, run: Run, onDelivered?: (envelopes: EventEnvelope[]) => void): ActiveRun {
    const runs = store.forUser(userId).runs
    const writer = createEventWriter({
      runs,
      runId: run.id,
      redactor,
      clock,
      onDelivered: (envelopes) => {
        options.sink?.(envelopes, { userId, conversationId: run.conversationId })
        onDelivered?.(envelopes)
      },
    })
    // The session recorded while the run went: `end` keeps it when the agent's last word names none.
    let recordedSession: string | undefined
    const handle: ActiveRun = {
      run,
      writer,
      emit: (event) => writer.write(event),
      async setStatus(status) {
        await runs.update(run.id, { status })
      },
      async begin(event) {
        await runs.update(run.id, { status: 'running' })
        writer.write(event)
      },
      async setProcess(pid) {
        await runs.update(run.id, { agentPgid: pid })
      },
      async setSession(sessionId) {
        if (sessionId === recordedSession) return
        recordedSession = sessionId
        await runs.update(run.id, { sessionId })
      },
      async recordShipped(sync) {
        await runs.update(run.id, { workspaceSync: sync, workspaceFinalize: 'pending' })
        // Kept on the workspace after the changes are back, so removing it removes the host's copy too.
        // Losing this record must not fail the run: the copy would only stay on the host, as it did.
        await recordHostCopy(store, userId, sync as ShippedWorkspace).catch(() => undefined)
      },
      async hostCopySettled(runId) {
        return (await store.runQueue.statuses([runId])).get(runId)?.finalize === 'ok'
      },
      async end(end) {
        active.delete(run.id)
        const sessionId = end.sessionId ?? recordedSession
        writer.write({
          type: 'run-end',
          status: end.status,
          ...(end.reason !== undefined && { reason: end.reason }),
          ...(sessionId !== undefined && { sessionId }),
          ...(end.usage !== undefined && { usage: end.usage }),
        })
        await writer.flush()
        return (await runs.update(run.id, {
          status: end.status,
          reason: end.reason ? redactor.text(end.reason) : null,
          sessionId: sessionId ?? null,
          usage: end.usage ?? null,
          costUsd: end.usage?.costUsd ?? null,
          endedAt: clock().toISOString(),
          ...(end.workspace && {
            workspaceFinalize: end.workspace.finalize,
            finalizeReason: end.workspace.reason ? redactor.text(end.workspace.reason) : null,
            agentStatus: end.workspace.agentStatus ?? null,
            workspaceSync: end.workspace.sync ?? null,
          }),
        }))!
      },
    }
    active.set(run.id, handle)
    return handle
  }

  return {
    owner,
    /** Adds an event to a run this process is executing; false when it is not (or no longer) running here. */
    emitTo(runId: string, event: AgentEvent): boolean {
      const handle = active.get(runId)
      handle?.emit(event)
      return handle !== undefined
    },
    /** A run waiting for the scheduler. */
    /**
     * Queues a run for the node whose files it needs: its conversation's workspace's node, else this one
     * (it was submitted for a directory here). Another daemon sharing the store leaves it alone.
     */
    async enqueue(userId: string, input: NewRun): Promise<Run> {
      const scope = store.forUser(userId)
      const conversation = input.conversationId
        ? await scope.conversations.get(input.conversationId)
        : undefined
      const workspace = conversation?.workspaceId
        ? await scope.workspaces.get(conversation.workspaceId)
        : undefined
      const pinnedNode = input.pinnedNode ?? workspace?.nodeId ?? owner.node
      return scope.runs.create({ ...input, status: 'queued', pinnedNode })
    },
    /** Takes a queued run for this owner; undefined when someone else took it or it was cancelled. */
    async claim(
      userId: string,
      runId: string,
      onDelivered?: (envelopes: EventEnvelope[]) => void,
      /**
       * Claim only while fewer than `max` runs of `agent` are active on any node (`perUser`: of this user;
       * a profile made in the UI or API is its user's own).
       */
      limit?: { agent: string; max: number; perUser?: boolean },
    ): Promise<ActiveRun | undefined> {
      const run = await store
        .forUser(userId)
        .runs.claimQueued(runId, { node: owner.node, pid: owner.pid, bootId: owner.bootId }, limit)
      return run && activate(userId, run, onDelivered)
    },
    /** Ends a run whose owner is gone: a `run-end` event (after what is stored) and the `interrupted` status. */
    async interrupt(userId: string, runId: string, reason: string): Promise<void> {
      const runs = store.forUser(userId).runs
      const run = await runs.get(runId)
      if (!run) return
      const writer = await writerAfterStored(userId, run)
      // Its changes may be on an SSH host only: say how they come back.
      if (run.workspaceFinalize === 'pending') {
        writer.write({
          type: 'error',
          code: 'workspace_finalize_pending',
          message: `its workspace's changes are still on the SSH host: they are brought back when its daemon starts again, or with hangar runs finalize ${runId}`,
          retryable: true,
        })
      }
      // The session the run recorded while it went: the run-end says what a resume continues.
      writer.write({
        type: 'run-end',
        status: 'interrupted',
        reason,
        ...(run.sessionId && { sessionId: run.sessionId }),
      })
      await writer.flush()
      await runs.update(runId, { status: 'interrupted', reason, endedAt: clock().toISOString() })
      if (run.conversationId)
        await store.forUser(userId).conversations.update(run.conversationId, { status: 'idle' })
    },
    /** Adds events to a run that has ended (a finalize retried later), after what is stored. */
    async appendEvents(userId: string, runId: string, events: readonly AgentEvent[]): Promise<void> {
      const run = await store.forUser(userId).runs.get(runId)
      if (!run) return
      const writer = await writerAfterStored(userId, run)
      for (const event of events) writer.write(event)
      await writer.flush()
    },
    /** Creates and claims at once: a run executed here and now (`hangar run`). */
    async start(
      userId: string,
      input: NewRun,
      onDelivered?: (envelopes: EventEnvelope[]) => void,
    ): Promise<ActiveRun> {
      // No run starts on a workspace whose host copy holds changes not brought back.
      await gate.assertOpen(userId, input.cwd)
      const queued = await this.enqueue(userId, input)
      return (await this.claim(userId, queued.id, onDelivered))!
    },
  }
}

export type RunService = ReturnType<typeof createRunService>
