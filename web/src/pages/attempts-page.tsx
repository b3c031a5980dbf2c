// Compare attempts: "Try with several agents" starts one prompt with several agents at once in a git
// project (POST /api/attempts), and the comparison view shows them side by side — status, time, tokens,
// cost, files changed, diff stats and the project's check result — with a pick that keeps one and removes
// the others' workspaces (unless kept). Live: it reloads as runs end and attempts finish.
import { type FormEvent, useEffect, useState } from 'react'
import { StatusBadge } from '../components/status-badge'
import { useToast } from '../components/toasts'
import { useActivity } from '../lib/activity'
import { api } from '../lib/api'
import { formatDuration, formatTokens, formatUsd, formatWhen } from '../lib/format'
import { Link, navigate } from '../lib/router'
import { useAgents } from '../lib/use-agents'
import { useProjects } from '../lib/use-projects'
import { useResource } from '../lib/use-resource'
import type { Attempt, AttemptGroup } from '../../../src/core/api-types'

const MAX_AGENTS = 8

function checkText(attempt: Attempt): string {
  const { status, exitCode } = attempt.check
  if (status === 'none') return 'no check'
  return exitCode === null ? status : `${status} (exit ${exitCode})`
}

/** The form: a git project, a prompt, and the agents to try it with (2 or more makes sense, 1–8 go). */
function TryWithSeveralAgents() {
  const toast = useToast()
  const { projects, chosen } = useProjects()
  const { choices } = useAgents()
  const gitProjects = projects.filter((project) => project.kind === 'git')
  const [projectId, setProjectId] = useState('')
  const [prompt, setPrompt] = useState('')
  const [agents, setAgents] = useState<string[]>([])
  const [busy, setBusy] = useState(false)
  const project = projectId || (gitProjects.some((each) => each.id === chosen) ? chosen : gitProjects[0]?.id)

  function toggle(name: string, on: boolean) {
    setAgents((current) => (on ? [...current, name] : current.filter((each) => each !== name)))
  }

  async function submit(event: FormEvent) {
    event.preventDefault()
    setBusy(true)
    try {
      const group = await api<AttemptGroup>('POST', '/api/attempts', {
        prompt,
        agents,
        ...(project && { projectId: project }),
      })
      navigate(`/attempts/${group.id}`)
    } catch (error) {
      toast.error(error)
    } finally {
      setBusy(false)
    }
  }

  return (
    <form
      className="card stack"
      aria-label="Try with several agents"
      onSubmit={(event) => void submit(event)}
    >
      <h2>Try with several agents</h2>
      <p className="muted small">
        The same prompt runs with each agent at once, each in a worktree of its own; then compare them and
        pick one to land.
      </p>
      <label>
        Project
        <select value={project ?? ''} onChange={(event) => setProjectId(event.target.value)}>
          {gitProjects.map((each) => (
            <option key={each.id} value={each.id}>
              {each.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Prompt
        <textarea
          value={prompt}
          rows={3}
          required
          onChange={(event) => setPrompt(event.target.value)}
          aria-label="Prompt"
        />
      </label>
      <fieldset>
        <legend>Agents</legend>
        {choices.map((choice) => (
          <label key={choice.name} className="checkbox-label">
            <input
              type="checkbox"
              checked={agents.includes(choice.name)}
              disabled={choice.unavailable !== undefined}
              onChange={(event) => toggle(choice.name, event.target.checked)}
            />
            {choice.label}
            {choice.unavailable && <span className="muted small"> ({choice.unavailable})</span>}
          </label>
        ))}
      </fieldset>
      <div>
        <button
          type="submit"
          className="button"
          disabled={busy || agents.length === 0 || agents.length > MAX_AGENTS || !prompt.trim()}
        >
          Start {agents.length > 0 ? `${agents.length} attempts` : 'attempts'}
        </button>
      </div>
    </form>
  )
}

export function AttemptsPage() {
  const groups = useResource<{ attempts: AttemptGroup[] }>('/api/attempts')
  useActivity(() => void groups.reload())
  return (
    <div className="page">
      <header className="page-head">
        <h1>Attempts</h1>
      </header>
      <TryWithSeveralAgents />
      {groups.data && groups.data.attempts.length > 0 && (
        <div className="table-wrap">
          <table className="table" aria-label="Attempt groups">
            <thead>
              <tr>
                <th>Prompt</th>
                <th>Agents</th>
                <th>Started</th>
                <th>State</th>
              </tr>
            </thead>
            <tbody>
              {groups.data.attempts.map((group) => (
                <tr key={group.id} data-attempts-id={group.id}>
                  <td className="prompt-cell">
                    <Link to={`/attempts/${group.id}`}>{group.prompt.slice(0, 80)}</Link>
                  </td>
                  <td>{group.attempts.map((attempt) => attempt.agent).join(', ')}</td>
                  <td className="nowrap">{formatWhen(group.createdAt)}</td>
                  <td>{group.pickedConversationId ? 'picked' : group.finished ? 'finished' : 'running'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  )
}

/** The attempts of one group side by side, and the pick. */
export function AttemptPage({ id }: { id: string }) {
  const toast = useToast()
  const group = useResource<AttemptGroup>(`/api/attempts/${encodeURIComponent(id)}`)
  const [keepOthers, setKeepOthers] = useState(false)
  useActivity(() => void group.reload())
  const finished = group.data?.finished ?? false
  // The checks run after the runs end: reload until every attempt finished.
  useEffect(() => {
    if (finished) return
    const timer = setInterval(() => void group.reload(), 2000)
    return () => clearInterval(timer)
  }, [finished, group.reload])

  async function pick(attempt: Attempt) {
    try {
      await api('POST', `/api/attempts/${encodeURIComponent(id)}/pick`, {
        conversationId: attempt.conversationId,
        ...(keepOthers && { keepOthers: true }),
      })
      toast.success(`Picked ${attempt.agent}${keepOthers ? '' : "; the others' workspaces were removed"}`)
      await group.reload()
    } catch (error) {
      toast.error(error)
    }
  }

  if (group.error)
    return (
      <div className="page">
        <p className="empty">{String((group.error as Error).message)}</p>
      </div>
    )
  const data = group.data
  if (!data)
    return (
      <p className="loading" role="status">
        Loading…
      </p>
    )
  return (
    <div className="page">
      <header className="page-head">
        <h1>Attempts</h1>
        <span className="muted small">{data.finished ? 'all finished' : 'running…'}</span>
      </header>
      <p className="muted">{data.prompt}</p>
      <div className="table-wrap">
        <table className="table" aria-label="Attempts side by side">
          <thead>
            <tr>
              <th>Agent</th>
              <th>Status</th>
              <th>Duration</th>
              <th>Tokens</th>
              <th>Cost</th>
              <th>Files</th>
              <th>Diff</th>
              <th>Check</th>
              <th>
                <span className="visually-hidden">Pick</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {data.attempts.map((attempt) => (
              <tr
                key={attempt.conversationId}
                data-conversation-id={attempt.conversationId}
                data-check={attempt.check.status}
                data-picked={attempt.picked ? 'true' : undefined}
              >
                <td>
                  <Link to={`/conversations/${attempt.conversationId}`}>{attempt.agent}</Link>
                  {attempt.picked && (
                    <div className="small">
                      picked ·{' '}
                      <Link to={`/conversations/${encodeURIComponent(attempt.conversationId)}/review`}>
                        Review and land
                      </Link>
                    </div>
                  )}
                  {attempt.discardedAt && <div className="muted small">discarded</div>}
                </td>
                <td>
                  <StatusBadge status={attempt.status} />
                </td>
                <td className="nowrap">
                  {attempt.durationMs === null ? '—' : formatDuration(attempt.durationMs)}
                </td>
                <td>{attempt.tokens ? formatTokens(attempt.tokens.input + attempt.tokens.output) : '—'}</td>
                <td>
                  {attempt.costSource === 'unknown' ? 'unknown' : formatUsd(attempt.costUsd)}
                  {attempt.costSource === 'agent' && <span className="muted small"> (agent)</span>}
                </td>
                <td>{attempt.filesChanged ?? '—'}</td>
                <td className="nowrap">
                  {attempt.additions === null ? '—' : `+${attempt.additions} −${attempt.deletions ?? 0}`}
                </td>
                <td>
                  <span className="check-result">{checkText(attempt)}</span>
                  {attempt.check.output && (
                    <details>
                      <summary className="small">output</summary>
                      <pre className="small">{attempt.check.output}</pre>
                    </details>
                  )}
                </td>
                <td>
                  {!data.pickedConversationId && attempt.finished && (
                    <button type="button" className="button small-button" onClick={() => void pick(attempt)}>
                      Pick {attempt.agent}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {!data.pickedConversationId && (
        <label className="checkbox-label">
          <input
            type="checkbox"
            checked={keepOthers}
            onChange={(event) => setKeepOthers(event.target.checked)}
          />
          Keep the other attempts' workspaces
        </label>
      )}
      {data.pickedConversationId && (
        <p className="small">Picked. Land it from its conversation's Review tab (Review and land, above).</p>
      )}
    </div>
  )
}
