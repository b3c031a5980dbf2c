// Every run: status, agent, duration, usage and cost, its workspace and whether that was finalized (with a
// retry when it failed), and what it waits on. Live: rows change as runs start and end.
import { useState } from 'react'
import { StatusBadge, isActiveStatus } from '../components/status-badge'
import { StreamIndicator } from '../components/stream-indicator'
import { useToast } from '../components/toasts'
import { useActivity } from '../lib/activity'
import { api } from '../lib/api'
import { formatTokens, formatUsd, formatWhen, runDuration, totalTokens } from '../lib/format'
import { continuationOf, isDecidedRun, shownStatus } from '../lib/decided'
import { canResume, resumeRun } from '../lib/resume'
import { describeRunCost } from '../../../src/core/usage-cost'
import { Link } from '../lib/router'
import type { Run, RunStatus } from '../lib/types'
import { useAgents } from '../lib/use-agents'
import { useProjects } from '../lib/use-projects'
import { useResource } from '../lib/use-resource'

const FILTERS: (RunStatus | '')[] = [
  '',
  'running',
  'queued',
  'awaiting_confirmation',
  'succeeded',
  'failed',
  'cancelled',
  'interrupted',
]

export function RunsPage() {
  const toast = useToast()
  const [status, setStatus] = useState<RunStatus | ''>('')
  const runs = useResource<Run[]>(`/api/runs?limit=200${status ? `&status=${status}` : ''}`)
  const state = useActivity(() => void runs.reload())
  const { adapters } = useAgents()
  const { nameOf } = useProjects()
  // Offered once: not for a run another run already continues, nor for a conversation's run that a later
  // message went on from (the list is newest first).
  const superseded = new Set<string>()
  const conversationsSeen = new Set<string>()
  for (const run of runs.data ?? []) {
    if (run.continues) superseded.add(run.continues)
    if (!run.conversationId) continue
    if (conversationsSeen.has(run.conversationId)) superseded.add(run.id)
    conversationsSeen.add(run.conversationId)
  }

  async function act(run: Run, verb: 'cancel' | 'finalize' | 'resume') {
    try {
      if (verb === 'resume') await resumeRun(run.id)
      else await api('POST', `/api/runs/${run.id}/${verb}`)
      toast.success(
        verb === 'cancel'
          ? 'Cancelling the run'
          : verb === 'resume'
            ? 'Resuming the run'
            : 'Workspace finalized',
      )
      await runs.reload()
    } catch (error) {
      toast.error(error)
    }
  }

  return (
    <div className="page">
      <header className="page-head">
        <h1>Runs</h1>
        <StreamIndicator state={state} />
        <span className="grow" />
        <label className="inline-label">
          <span className="small muted">Status</span>
          <select value={status} onChange={(event) => setStatus(event.target.value as RunStatus | '')}>
            {FILTERS.map((value) => (
              <option key={value} value={value}>
                {value ? value.replaceAll('_', ' ') : 'all'}
              </option>
            ))}
          </select>
        </label>
      </header>
      {runs.data && runs.data.length === 0 && (
        <p className="empty">No runs{status ? ` with status ${status}` : ''}.</p>
      )}
      <div className="table-wrap" hidden={runs.data?.length === 0}>
        <table className="table" aria-label="Runs">
          <thead>
            <tr>
              <th>Status</th>
              <th>Agent</th>
              <th>Prompt</th>
              <th>Started</th>
              <th>Duration</th>
              <th>Tokens</th>
              <th>Cost</th>
              <th>Workspace</th>
              <th>Depends on</th>
              <th>
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(runs.data ?? []).map((run) => (
              <tr key={run.id} data-run-id={run.id}>
                <td>
                  <StatusBadge status={shownStatus(run)} />
                  {isDecidedRun(run) && continuationOf(run, runs.data ?? []) && (
                    <div className="small">
                      <Link to={`/runs/${continuationOf(run, runs.data ?? [])!.id}`}>continued</Link>
                    </div>
                  )}
                </td>
                <td>
                  {run.agent}
                  {run.model && <div className="muted small">{run.model}</div>}
                </td>
                <td className="prompt-cell">
                  <Link
                    to={run.conversationId ? `/conversations/${run.conversationId}` : `/runs/${run.id}`}
                    title={run.prompt}
                  >
                    {run.continues && !run.prompt
                      ? '(continued after a decision)'
                      : run.prompt.slice(0, 80) || run.id}
                  </Link>
                  {nameOf(run.projectId) && (
                    <div className="muted small" data-project={run.projectId}>
                      {nameOf(run.projectId)}
                    </div>
                  )}
                  {run.reason && run.status !== 'succeeded' && (
                    <div className="muted small">{run.reason}</div>
                  )}
                </td>
                <td className="nowrap">{formatWhen(run.startedAt ?? run.createdAt)}</td>
                <td className="nowrap">{runDuration(run)}</td>
                <td>{run.usage ? formatTokens(totalTokens(run.usage)) : '—'}</td>
                <td>
                  {run.usage
                    ? describeRunCost(run.costUsd ?? run.usage.costUsd, run.usage.costSource, formatUsd)
                    : '—'}
                </td>
                <td className="path-cell" title={run.cwd}>
                  <code>{run.cwd.split('/').slice(-2).join('/')}</code>
                  {run.workspaceFinalize === 'failed' ? (
                    <div className="bad small" title={run.finalizeReason ?? ''}>
                      finalize failed
                    </div>
                  ) : run.workspaceFinalize === 'ok' ? (
                    <div className="muted small">finalized</div>
                  ) : run.workspaceFinalize === 'pending' && !isActiveStatus(run.status) ? (
                    <div className="bad small" title={run.finalizeReason ?? ''}>
                      changes still on the host
                    </div>
                  ) : null}
                </td>
                <td>
                  {run.dependsOn.length === 0
                    ? '—'
                    : run.dependsOn.map((id) => (
                        <div key={id}>
                          <Link to={`/runs/${id}`}>
                            <code>{id.slice(-8)}</code>
                          </Link>
                        </div>
                      ))}
                </td>
                <td className="nowrap">
                  {isActiveStatus(run.status) && (
                    <button
                      type="button"
                      className="button small-button"
                      onClick={() => void act(run, 'cancel')}
                    >
                      Cancel
                    </button>
                  )}
                  {(run.workspaceFinalize === 'failed' ||
                    (run.workspaceFinalize === 'pending' && !isActiveStatus(run.status))) && (
                    <button
                      type="button"
                      className="button small-button"
                      onClick={() => void act(run, 'finalize')}
                    >
                      Retry finalize
                    </button>
                  )}
                  {!superseded.has(run.id) && canResume(run, run.status, adapters) && (
                    <button
                      type="button"
                      className="button small-button"
                      onClick={() => void act(run, 'resume')}
                    >
                      Resume
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  )
}
