// One proposed write waiting for a person: what it does, in which project and file, its diff, how risky it
// is (destructive ones are styled as danger and ask for a second click), and confirm / reject with an
// optional reason.
import { useEffect, useRef, useState } from 'react'
import { api } from '../lib/api'
import type { PendingAction } from '../lib/types'
import { formatWhen } from '../lib/format'
import { fileLocation } from '../lib/projects'
import { useProjects } from '../lib/use-projects'
import { DiffView } from './diff-view'
import { useToast } from './toasts'

const CLASSIFICATION_LABEL: Record<string, string> = {
  safe_create: 'creates a file',
  safe_update: 'edits a file',
  destructive_update: 'overwrites a file',
  destructive_delete: 'deletes a file',
}

export function ActionCard({ action, onDecided }: { action: PendingAction; onDecided: () => void }) {
  const toast = useToast()
  const [busy, setBusy] = useState(false)
  const [rejecting, setRejecting] = useState(false)
  const [reason, setReason] = useState('')
  const [armed, setArmed] = useState(false)
  const destructive = action.classification.startsWith('destructive')
  const pending = action.status === 'pending'
  const { nameOf } = useProjects()
  const where = fileLocation(nameOf(action.projectId), action.precondition?.path)
  // A notification's link (`?action=<id>`) opens this card: it is scrolled to and marked.
  const card = useRef<HTMLElement>(null)
  const linked = new URLSearchParams(window.location.search).get('action') === action.id
  useEffect(() => {
    if (linked) card.current?.scrollIntoView({ block: 'center' })
  }, [linked])

  async function decide(kind: 'confirm' | 'reject') {
    setBusy(true)
    try {
      await api('POST', `/api/actions/${action.id}/${kind}`, kind === 'reject' && reason ? { reason } : {})
      toast.success(kind === 'confirm' ? 'Change applied' : 'Proposal rejected')
      onDecided()
    } catch (error) {
      toast.error(error)
      onDecided()
    } finally {
      setBusy(false)
    }
  }

  return (
    <article
      ref={card}
      aria-current={linked ? 'true' : undefined}
      className={`action-card${destructive ? ' action-danger' : ''}${linked ? ' action-linked' : ''}`}
      aria-label={`Proposal: ${action.summary}`}
      data-action-id={action.id}
    >
      <header className="action-head">
        <span
          className={`badge ${destructive ? 'badge-bad' : 'badge-warn'}`}
          data-classification={action.classification}
        >
          {destructive && '⚠ '}
          {CLASSIFICATION_LABEL[action.classification] ?? action.classification}
        </span>
        <code className="action-tool">{action.tool}</code>
        <span className="muted small">
          {pending ? `expires ${formatWhen(action.expiresAt)}` : action.status}
        </span>
      </header>
      <p className="action-summary">{action.summary}</p>
      {where && (
        <p className="action-where small muted" data-project={action.projectId ?? ''}>
          <code>{where}</code>
        </p>
      )}
      {action.diff && <DiffView diff={action.diff} label={`Diff of ${action.summary}`} />}
      {pending && !rejecting && (
        <div className="row">
          <button
            type="button"
            className={destructive ? 'button danger' : 'button primary'}
            disabled={busy}
            onClick={() => (destructive && !armed ? setArmed(true) : void decide('confirm'))}
          >
            {destructive && !armed ? 'Confirm…' : destructive ? 'Yes, apply it' : 'Confirm'}
          </button>
          <button type="button" className="button" disabled={busy} onClick={() => setRejecting(true)}>
            Reject
          </button>
        </div>
      )}
      {pending && rejecting && (
        <form
          className="row"
          onSubmit={(event) => {
            event.preventDefault()
            void decide('reject')
          }}
        >
          <label className="grow">
            <span className="visually-hidden">Reason for rejecting</span>
            <input
              autoFocus
              value={reason}
              onChange={(event) => setReason(event.target.value)}
              placeholder="Why? (optional — the agent sees it)"
              maxLength={2000}
            />
          </label>
          <button type="submit" className="button" disabled={busy}>
            Reject
          </button>
          <button type="button" className="button ghost" onClick={() => setRejecting(false)}>
            Back
          </button>
        </form>
      )}
      {!pending && action.decisionReason && <p className="muted small">Reason: {action.decisionReason}</p>}
    </article>
  )
}
