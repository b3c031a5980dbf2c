// A run's or a conversation's status as a coloured badge, with a live dot while work is under way.
const ACTIVE = new Set(['queued', 'preparing', 'running', 'finalizing'])

const TONE: Record<string, string> = {
  succeeded: 'good',
  decided: 'good',
  applied: 'good',
  failed: 'bad',
  interrupted: 'bad',
  conflict: 'bad',
  expired: 'muted',
  cancelled: 'muted',
  rejected: 'muted',
  superseded: 'muted',
  awaiting_confirmation: 'warn',
  pending: 'warn',
}

export function isActiveStatus(status: string): boolean {
  return ACTIVE.has(status)
}

export function StatusBadge({ status }: { status: string }) {
  const active = ACTIVE.has(status)
  const tone = active ? 'active' : (TONE[status] ?? 'muted')
  return (
    <span className={`badge badge-${tone}`} data-status={status}>
      {active && <span className="live-dot" aria-hidden="true" />}
      {status.replaceAll('_', ' ')}
    </span>
  )
}
