// What a notification is about: the event names users choose (`approval.requested`, `run.finished`, …)
// and how a stored run event becomes one. Pure: the service adds names (project, conversation) from the
// store and the link's origin when it sends.
import type { EventEnvelope } from '../core/events.js'

export const NOTIFICATION_EVENTS = [
  'approval.requested',
  'run.finished',
  'run.failed',
  'budget.reached',
  'workspace.landed',
] as const

export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number]

/** The test notification `hangar notify test` sends (not a choosable event). */
export const TEST_EVENT = 'notification.test'

/** One thing to tell a user about, before it is addressed to channels. */
export interface NotificationCause {
  event: NotificationEvent
  /** One delivery per channel and cause: a second observer of the same event adds nothing. */
  sourceKey: string
  runId: string
  actionId?: string
  /** The approval's file or command, the failure's reason, … */
  detail?: string
  reason?: string
}

/**
 * The causes in one stored batch of a run's events. `workspace-landed` is not in the event union yet (the
 * land feature emits it); it is matched by name so it counts when it appears on the bus.
 */
export function causesOf(envelopes: readonly EventEnvelope[]): NotificationCause[] {
  const causes: NotificationCause[] = []
  for (const envelope of envelopes) {
    const runId = envelope.runId
    const type = envelope.type as string
    if (envelope.type === 'approval-required') {
      causes.push({
        event: 'approval.requested',
        sourceKey: `action:${envelope.actionId}`,
        runId,
        actionId: envelope.actionId,
        detail: envelope.summary,
      })
    } else if (envelope.type === 'run-end') {
      if (envelope.status === 'succeeded')
        causes.push({ event: 'run.finished', sourceKey: `run:${runId}:end`, runId })
      else if (envelope.status === 'failed' || envelope.status === 'interrupted')
        causes.push({
          event: 'run.failed',
          sourceKey: `run:${runId}:end`,
          runId,
          ...(envelope.reason !== undefined && { reason: envelope.reason }),
        })
    } else if (envelope.type === 'error' && envelope.code === 'budget_exceeded') {
      causes.push({
        event: 'budget.reached',
        sourceKey: `run:${runId}:budget`,
        runId,
        reason: envelope.message,
      })
    } else if (type === 'workspace-landed') {
      causes.push({ event: 'workspace.landed', sourceKey: `run:${runId}:landed:${envelope.seq}`, runId })
    }
  }
  return causes
}

/** Whether a batch can hold a cause at all (the run writer's hot path asks this first). */
export function mayCause(envelopes: readonly EventEnvelope[]): boolean {
  return envelopes.some(
    (envelope) =>
      envelope.type === 'approval-required' ||
      envelope.type === 'run-end' ||
      (envelope.type as string) === 'workspace-landed' ||
      (envelope.type === 'error' && envelope.code === 'budget_exceeded'),
  )
}

/** The stored payload of a delivery: everything a channel shows, stable across retries. */
export interface NotificationPayload {
  event: string
  at: string
  projectId: string | null
  project: string | null
  conversationId: string | null
  conversation: string | null
  runId: string | null
  agent: string | null
  actionId?: string
  title: string
  summary: string
  /** Where in the UI it opens (a path; the sender puts the daemon's origin in front). Never a credential. */
  link: string
}

export function titleOf(event: string, agent: string | null, project: string | null): string {
  const who = agent ?? 'an agent'
  const where = project ? ` in ${project}` : ''
  switch (event) {
    case 'approval.requested':
      return `${who} needs your approval${where}`
    case 'run.finished':
      return `${who} finished${where}`
    case 'run.failed':
      return `${who} failed${where}`
    case 'budget.reached':
      return `${who} reached its budget${where}`
    case 'workspace.landed':
      return `A workspace landed${where}`
    default:
      return 'Hangar test notification'
  }
}
