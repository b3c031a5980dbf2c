// One run of a conversation as the chat shows it: the person's message, then the agent's text (streaming
// while it runs), collapsible reasoning and tool calls, file changes with their diffs, proposals waiting for
// a decision, errors, and the run's usage and cost.
import { isWarningEvent } from '../../../src/core/events'
import { describeRunCost } from '../../../src/core/usage-cost'
import { ActionCard } from '../components/action-card'
import { DiffView } from '../components/diff-view'
import { StatusBadge, isActiveStatus } from '../components/status-badge'
import { shownStatus } from '../lib/decided'
import { formatTokens, formatUsd, runDuration, totalTokens } from '../lib/format'
import { Link } from '../lib/router'
import type { PendingAction, Run } from '../lib/types'
import type { RunTranscript, TranscriptItem } from './transcript'

function show(value: unknown): string {
  if (value === undefined) return ''
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2)
}

/** What a tool call without a result is doing, by the state of its run. */
function pendingToolNote(status: string): string {
  if (isActiveStatus(status)) return 'running…'
  if (status === 'decided') return 'decided'
  return status === 'awaiting_confirmation' ? 'waiting for your decision' : 'no result'
}

function ItemView({
  item,
  status,
  actions,
  onDecided,
}: {
  item: TranscriptItem
  status: string
  actions: Map<string, PendingAction>
  onDecided: () => void
}) {
  switch (item.kind) {
    case 'text':
      return <div className="agent-text">{item.text}</div>
    case 'reasoning':
      return (
        <details className="reasoning">
          <summary>Reasoning</summary>
          <div className="reasoning-text">{item.text}</div>
        </details>
      )
    case 'tool':
      return (
        <details
          className={`tool-call${item.isError ? ' tool-error' : ''}${item.children ? ' subtask' : ''}`}
        >
          <summary>
            <span className="tool-name">{item.name}</span>
            {item.children && (
              <span className="muted small subtask-count"> sub-task, {item.children.length} step(s)</span>
            )}
            {item.output === undefined ? (
              <span className="muted small"> {pendingToolNote(status)}</span>
            ) : item.isError ? (
              <span className="small bad"> failed</span>
            ) : null}
          </summary>
          <div className="tool-body">
            <div className="small muted">Input</div>
            <pre>{show(item.input)}</pre>
            {item.children && (
              // What the sub-agent said and did, folded here rather than in the main transcript.
              <div className="subtask-items" role="group" aria-label={`Sub-task of ${item.name}`}>
                {item.children.map((child, index) => (
                  <ItemView
                    key={index}
                    item={child}
                    status={status}
                    actions={actions}
                    onDecided={onDecided}
                  />
                ))}
              </div>
            )}
            {item.output !== undefined && (
              <>
                <div className="small muted">Result</div>
                <pre>{show(item.output)}</pre>
              </>
            )}
          </div>
        </details>
      )
    case 'file':
      return (
        <details className="file-change" open={item.diff !== undefined && item.diff.length < 4000}>
          <summary>
            <span className={`badge badge-${item.change === 'delete' ? 'bad' : 'good'}`}>{item.change}</span>{' '}
            <code>{item.path}</code>
          </summary>
          {item.diff ? (
            <DiffView diff={item.diff} label={`Diff of ${item.path}`} />
          ) : (
            <p className="muted small">No diff recorded.</p>
          )}
        </details>
      )
    case 'approval': {
      const action = actions.get(item.actionId)
      if (action) return <ActionCard action={action} onDecided={onDecided} />
      return (
        <p className="muted small approval-note">
          Proposal: {item.summary} <span className="small">(decided)</span>
        </p>
      )
    }
    case 'error':
      // Something to know while nothing failed (feeds not delivered, an unknown output format): a warning.
      if (isWarningEvent(item))
        return (
          <div className="run-warning" role="note" data-code={item.code}>
            <strong>Warning</strong> ({item.code}): {item.message}
          </div>
        )
      return (
        <div className="run-error" role="note">
          <strong>{item.code}</strong>: {item.message}
        </div>
      )
    case 'raw':
      return (
        <details className="raw-lines">
          <summary className="small muted">
            {item.stream === 'stderr'
              ? `${item.lines.length} line(s) the agent wrote to stderr`
              : `${item.lines.length} line(s) of agent output Hangar did not parse`}
          </summary>
          <pre>{item.lines.join('\n')}</pre>
        </details>
      )
  }
}

/** A failure's error event says what the run's end reason says again (the reason may add the hint). */
function repeatsReason(item: TranscriptItem, reason: string | undefined): boolean {
  if (reason === undefined || item.kind !== 'error' || isWarningEvent(item)) return false
  return reason === item.message || reason.startsWith(`${item.message} (`)
}

export function RunView({
  run,
  transcript,
  actions,
  onDecided,
  onCancel,
  onResume,
  continuation,
  projectName,
}: {
  run: Run
  /** The run that went on after this one's proposals were decided, when known. */
  continuation?: Run | undefined
  /** The project the run works in (a project-aware daemon). */
  projectName?: string | undefined
  transcript: RunTranscript | undefined
  actions: Map<string, PendingAction>
  onDecided: () => void
  onCancel: (runId: string) => void
  /** Given when the run can be resumed (interrupted, with a session its adapter can continue). */
  onResume?: ((runId: string) => void) | undefined
}) {
  const status = shownStatus(run, transcript?.end?.status)
  const active = isActiveStatus(status)
  const usage = transcript?.usage ?? run.usage
  const cost = usage?.costUsd ?? run.costUsd
  // Said as everywhere else (`(agent)` marker, `unknown`); a running run's partial usage has no verdict yet.
  const costText =
    usage && (usage.costSource !== undefined || (cost !== null && cost !== undefined))
      ? describeRunCost(cost, usage.costSource, formatUsd)
      : null
  const items = transcript?.items ?? []
  const reason = transcript?.end?.reason ?? run.reason
  const shownReason = !active && reason && status !== 'succeeded' ? reason : undefined
  const failure = items.findIndex((item) => repeatsReason(item, shownReason))
  return (
    <section className="run" aria-label={`Run ${run.id}`} data-run-id={run.id} data-status={status}>
      {run.continues && !run.prompt ? (
        <p className="continued muted small">Continued after your decision</p>
      ) : (
        <div className="user-message">{run.prompt}</div>
      )}
      <div className="agent-message">
        <header className="run-head">
          <span className="run-agent">{transcript?.start?.agent ?? run.agent}</span>
          {(transcript?.start?.model ?? run.model) && (
            <span className="muted small">{transcript?.start?.model ?? run.model}</span>
          )}
          {projectName && (
            <span className="badge badge-muted project-name" title="Project">
              {projectName}
            </span>
          )}
          <StatusBadge status={status} />
          {active && (
            <button type="button" className="button small-button" onClick={() => onCancel(run.id)}>
              Cancel
            </button>
          )}
          {!active && onResume && (
            <button type="button" className="button small-button" onClick={() => onResume(run.id)}>
              Resume
            </button>
          )}
        </header>
        {items.map((item, index) =>
          // The failure is shown once: as its error (with the reason's hint), not again as the reason.
          index !== failure && repeatsReason(item, shownReason) ? null : (
            <ItemView
              key={index}
              item={index === failure && item.kind === 'error' ? { ...item, message: shownReason! } : item}
              status={status}
              actions={actions}
              onDecided={onDecided}
            />
          ),
        )}
        {active && (
          <p className="working" role="status">
            <span className="spinner" aria-hidden="true" />{' '}
            {status === 'queued' ? 'Waiting for a free slot…' : 'Working…'}
          </p>
        )}
        {status === 'decided' ? (
          <p className="run-reason decided-note">
            Every proposal was decided
            {continuation && (
              <>
                {' '}
                — <Link to={`/runs/${continuation.id}`}>continued in run {continuation.id.slice(-8)}</Link>
              </>
            )}
            .
          </p>
        ) : (
          shownReason && failure < 0 && <p className="run-reason">{shownReason}</p>
        )}
        <footer className="run-foot small muted">
          <span>{runDuration(run)}</span>
          {usage && (
            <span title="input + output + cache tokens">{formatTokens(totalTokens(usage))} tokens</span>
          )}
          {costText && <span className="run-cost">{costText}</span>}
          {transcript?.start && !transcript.start.proxied && (
            <span title="This run talked to its provider directly: no feeds, usage as the agent reported it">
              not proxied
            </span>
          )}
          {transcript?.start?.sandbox && (
            <span
              className="run-sandbox"
              title={
                transcript.start.sandbox.mode === 'workspace'
                  ? `The agent saw only its workspace and reached only Hangar's proxy (${transcript.start.sandbox.by})`
                  : `Not sandboxed: ${transcript.start.sandbox.reason}`
              }
            >
              {transcript.start.sandbox.mode === 'workspace' ? 'sandboxed' : 'not sandboxed'}
            </span>
          )}
        </footer>
      </div>
    </section>
  )
}
