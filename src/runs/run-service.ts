// Runs: created with their owner, moved through their statuses, ended with a `run-end` event. This is
// the first, minimal piece of the run service; the scheduler (queueing, dependencies, concurrency)
// extends it rather than writing a second.
import type { AgentEvent, EventEnvelope, RunStatus, TerminalRunStatus, UsageTotals } from '../core/events.js'
import { type Clock, systemClock } from '../core/ids.js'
import type { Redactor } from '../core/redact.js'
import type { NewRun, Run } from '../store/repositories/runs-repository.js'
import type { Store } from '../store/store.js'
import { createEventWriter, type EventWriter } from './event-writer.js'

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
}

export interface ActiveRun {
  run: Run
  writer: EventWriter
  emit(event: AgentEvent): void
  setStatus(status: RunStatus): Promise<void>
  /** Records the agent's process group so a restarted daemon can reap it. */
  setProcess(pid: number): Promise<void>
  end(end: RunEnd): Promise<Run>
}

export function createRunService(options: {
  store: Store
  redactor: Redactor
  owner: RunOwner
  clock?: Clock
}) {
  const { store, redactor, owner } = options
  const clock = options.clock ?? systemClock

  return {
    owner,
    async start(
      userId: string,
      input: NewRun,
      onDelivered?: (envelopes: EventEnvelope[]) => void,
    ): Promise<ActiveRun> {
      const runs = store.forUser(userId).runs
      const created = await runs.create({ ...input, status: 'preparing' })
      const run = (await runs.update(created.id, {
        owner: { node: owner.node, pid: owner.pid, bootId: owner.bootId },
        startedAt: clock().toISOString(),
      }))!
      const writer = createEventWriter({
        runs,
        runId: run.id,
        redactor,
        clock,
        ...(onDelivered && { onDelivered }),
      })
      return {
        run,
        writer,
        emit: (event) => writer.write(event),
        async setStatus(status) {
          await runs.update(run.id, { status })
        },
        async setProcess(pid) {
          await runs.update(run.id, { owner: { node: owner.node, pid, bootId: owner.bootId } })
        },
        async end(end) {
          writer.write({
            type: 'run-end',
            status: end.status,
            ...(end.reason !== undefined && { reason: end.reason }),
            ...(end.sessionId !== undefined && { sessionId: end.sessionId }),
            ...(end.usage !== undefined && { usage: end.usage }),
          })
          await writer.flush()
          return (await runs.update(run.id, {
            status: end.status,
            reason: end.reason ? redactor.text(end.reason) : null,
            sessionId: end.sessionId ?? null,
            usage: end.usage ?? null,
            costUsd: end.usage?.costUsd ?? null,
            endedAt: clock().toISOString(),
          }))!
        },
      }
    },
  }
}

export type RunService = ReturnType<typeof createRunService>
