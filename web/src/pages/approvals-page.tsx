// Proposals waiting for a decision, newest first, updated live: a new proposal appears, a decided one
// (here, in the chat, from the CLI or over MCP) leaves.
import { ActionCard } from '../components/action-card'
import { StreamIndicator } from '../components/stream-indicator'
import { useActivity } from '../lib/activity'
import { Link } from '../lib/router'
import type { PendingAction } from '../lib/types'
import { useResource } from '../lib/use-resource'

export function ApprovalsPage() {
  const pending = useResource<PendingAction[]>('/api/actions?status=pending')
  const state = useActivity(() => void pending.reload())
  const actions = [...(pending.data ?? [])].sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1))
  return (
    <div className="page">
      <header className="page-head">
        <h1>Approvals</h1>
        <StreamIndicator state={state} />
      </header>
      <p className="muted">
        Writes the built-in agent or an MCP client proposed. Nothing changes in a workspace until you confirm
        it.
      </p>
      {pending.data && actions.length === 0 && <p className="empty">Nothing is waiting for you.</p>}
      <div className="stack">
        {actions.map((action) => (
          <div key={action.id}>
            {action.conversationId && (
              <Link className="small" to={`/conversations/${action.conversationId}`}>
                Open its conversation
              </Link>
            )}
            <ActionCard action={action} onDecided={() => void pending.reload()} />
          </div>
        ))}
      </div>
    </div>
  )
}
