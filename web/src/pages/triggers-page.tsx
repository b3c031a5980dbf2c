// Triggers: schedules and inbound webhooks that start runs as you. Add one (a webhook's secret is shown
// once, right after), fire one by hand ("Run now"), see its fires with their runs and outcomes, remove it.
// The daemon decides what is allowed (src/triggers/trigger-service.ts); refusals show under the form.
import { type FormEvent, useState } from 'react'
import { StatusBadge } from '../components/status-badge'
import { useToast } from '../components/toasts'
import { api, errorMessage } from '../lib/api'
import { formatWhen } from '../lib/format'
import { Link } from '../lib/router'
import { useAgents } from '../lib/use-agents'
import { useProjects } from '../lib/use-projects'
import { useResource } from '../lib/use-resource'

interface Trigger {
  id: string
  name: string
  kind: 'schedule' | 'webhook'
  cron: string | null
  timezone: string | null
  missed: 'skip' | 'once'
  projectId: string | null
  agent: string | null
  prompt: string
  url?: string
  secret?: string
}

interface Fire {
  id: string
  slot: string
  source: string
  status: string
  reason: string | null
  runId: string | null
  runStatus: string | null
  reportStatus: string | null
  reportError: string | null
  createdAt: string
}

interface FireOutcome {
  fired: boolean
  runId?: string
  status?: string
  reason?: string
}

function AddTriggerForm({ onAdded }: { onAdded: (trigger: Trigger) => void }) {
  const { choices } = useAgents()
  const { projects } = useProjects()
  const [kind, setKind] = useState<'schedule' | 'webhook'>('schedule')
  const [name, setName] = useState('')
  const [cron, setCron] = useState('0 9 * * MON-FRI')
  const [timezone, setTimezone] = useState(Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC')
  const [missed, setMissed] = useState<'skip' | 'once'>('skip')
  const [projectId, setProjectId] = useState('')
  const [agent, setAgent] = useState('')
  const [prompt, setPrompt] = useState('')
  const [event, setEvent] = useState('issues')
  const [action, setAction] = useState('labeled')
  const [label, setLabel] = useState('agent')
  // '' (no report), 'github' (a comment on the originating issue) or a channel id of yours.
  const [report, setReport] = useState('')
  const channels = useResource<{ id: string; name: string; type: string }[]>('/api/notifications/channels')
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)

  async function submit(submitted: FormEvent) {
    submitted.preventDefault()
    setBusy(true)
    try {
      const filter =
        kind === 'webhook' && (event || action || label)
          ? { ...(event && { event }), ...(action && { action }), ...(label && { label }) }
          : undefined
      const trigger = await api<Trigger>('POST', '/api/triggers', {
        name: name.trim(),
        kind,
        prompt,
        ...(kind === 'schedule' && { cron, timezone, missed }),
        ...(projectId && { projectId }),
        ...(agent && { agent }),
        ...(filter && { filter }),
        ...(report === 'github' && kind === 'webhook' && { report: { type: 'github' } }),
        ...(report && report !== 'github' && { report: { type: 'channel', channelId: report } }),
      })
      setError(undefined)
      setName('')
      setPrompt('')
      onAdded(trigger)
    } catch (caught) {
      setError(errorMessage(caught))
    } finally {
      setBusy(false)
    }
  }

  return (
    <form className="card form" aria-label="Add a trigger" onSubmit={(e) => void submit(e)} noValidate>
      <h2>Add a trigger</h2>
      <div className="grid-2">
        <label>
          <span className="small muted">Name</span>
          <input value={name} onChange={(e) => setName(e.target.value)} placeholder="nightly-review" />
        </label>
        <label>
          <span className="small muted">Kind</span>
          <select value={kind} onChange={(e) => setKind(e.target.value as 'schedule' | 'webhook')}>
            <option value="schedule">Schedule (cron)</option>
            <option value="webhook">Inbound webhook</option>
          </select>
        </label>
        {kind === 'schedule' ? (
          <>
            <label>
              <span className="small muted">Cron (minute hour day month weekday)</span>
              <input value={cron} onChange={(e) => setCron(e.target.value)} spellCheck={false} />
            </label>
            <label>
              <span className="small muted">Time zone</span>
              <input value={timezone} onChange={(e) => setTimezone(e.target.value)} spellCheck={false} />
            </label>
            <label>
              <span className="small muted">Slots missed while no daemon ran</span>
              <select value={missed} onChange={(e) => setMissed(e.target.value as 'skip' | 'once')}>
                <option value="skip">Skip them</option>
                <option value="once">Run once on start</option>
              </select>
            </label>
          </>
        ) : (
          <>
            <label>
              <span className="small muted">Event (X-GitHub-Event)</span>
              <input value={event} onChange={(e) => setEvent(e.target.value)} />
            </label>
            <label>
              <span className="small muted">Action</span>
              <input value={action} onChange={(e) => setAction(e.target.value)} />
            </label>
            <label>
              <span className="small muted">Label</span>
              <input value={label} onChange={(e) => setLabel(e.target.value)} />
            </label>
          </>
        )}
        <label>
          <span className="small muted">Report when the run ends</span>
          <select value={report} onChange={(e) => setReport(e.target.value)}>
            <option value="">No report</option>
            {kind === 'webhook' && <option value="github">Comment on the GitHub issue</option>}
            {(channels.data ?? []).map((channel) => (
              <option key={channel.id} value={channel.id}>
                To channel {channel.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span className="small muted">Project</span>
          <select value={projectId} onChange={(e) => setProjectId(e.target.value)}>
            <option value="">{projects.length > 1 ? 'Choose one' : 'Default'}</option>
            {projects.map((project) => (
              <option key={project.id} value={project.id}>
                {project.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span className="small muted">Agent</span>
          <select value={agent} onChange={(e) => setAgent(e.target.value)}>
            <option value="">Default</option>
            {choices.map((choice) => (
              <option key={choice.name} value={choice.name}>
                {choice.name}
              </option>
            ))}
          </select>
        </label>
      </div>
      <label>
        <span className="small muted">
          Prompt{kind === 'webhook' && ' (a template: {{issue.title}}, {{issue.body}} …)'}
        </span>
        <textarea value={prompt} onChange={(e) => setPrompt(e.target.value)} rows={3} />
      </label>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      <div className="row">
        <button type="submit" className="button primary" disabled={busy}>
          {busy ? 'Adding…' : 'Add trigger'}
        </button>
      </div>
    </form>
  )
}

function Fires({ trigger }: { trigger: Trigger }) {
  const { data, error, reload } = useResource<{ fires: Fire[] }>(`/api/triggers/${trigger.id}/fires`)
  if (error) return <p className="field-error">{errorMessage(error)}</p>
  const fires = data?.fires ?? []
  return (
    <div aria-label={`Fires of ${trigger.name}`} role="group">
      <button type="button" className="button small-button ghost" onClick={() => void reload()}>
        Refresh
      </button>
      {fires.length === 0 ? (
        <p className="small muted">No fires yet.</p>
      ) : (
        <table className="table small">
          <thead>
            <tr>
              <th>When</th>
              <th>Source</th>
              <th>Fire</th>
              <th>Run</th>
              <th>Report</th>
              <th>Reason</th>
            </tr>
          </thead>
          <tbody>
            {fires.map((fire) => (
              <tr key={fire.id} data-fire-status={fire.status}>
                <td>{formatWhen(fire.createdAt)}</td>
                <td>{fire.source}</td>
                <td>{fire.status}</td>
                <td>
                  {fire.runId ? (
                    <>
                      <Link to={`/runs/${fire.runId}`}>
                        <code>{fire.runId}</code>
                      </Link>{' '}
                      {fire.runStatus && <StatusBadge status={fire.runStatus} />}
                    </>
                  ) : (
                    '—'
                  )}
                </td>
                <td>{fire.reportStatus ?? '—'}</td>
                <td>{fire.reason ?? fire.reportError ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  )
}

export function TriggersPage() {
  const toast = useToast()
  const { data, error, reload } = useResource<{ triggers: Trigger[] }>('/api/triggers')
  const [created, setCreated] = useState<Trigger>()
  const [open, setOpen] = useState<string>()

  async function runNow(trigger: Trigger) {
    try {
      const outcome = await api<FireOutcome>('POST', `/api/triggers/${trigger.id}/run`)
      if (outcome.fired) toast.success(`${trigger.name} fired: run ${outcome.runId}`)
      else toast.error(new Error(`${trigger.name} did not fire (${outcome.status}): ${outcome.reason}`))
      setOpen(trigger.id)
    } catch (caught) {
      toast.error(caught)
    }
  }

  async function remove(trigger: Trigger) {
    if (!window.confirm(`Remove trigger ${trigger.name}? Its runs stay.`)) return
    try {
      await api('DELETE', `/api/triggers/${trigger.id}`)
      toast.success(`Removed ${trigger.name}`)
      await reload()
    } catch (caught) {
      toast.error(caught)
    }
  }

  const triggers = data?.triggers ?? []
  return (
    <div className="page">
      <header className="page-head">
        <h1>Triggers</h1>
      </header>
      <AddTriggerForm
        onAdded={(trigger) => {
          toast.success(`Added ${trigger.name}`)
          if (trigger.secret) setCreated(trigger)
          void reload()
        }}
      />
      {created?.secret && (
        <div className="card" role="status" aria-label="Webhook secret">
          <h2>Webhook for {created.name}</h2>
          <p>
            URL: <code>{`${window.location.origin}${created.url}`}</code>
          </p>
          <p>
            Secret (shown this once — copy it now): <code data-secret>{created.secret}</code>
          </p>
          <button type="button" className="button small-button" onClick={() => setCreated(undefined)}>
            Done
          </button>
        </div>
      )}
      {error ? <p className="field-error">{errorMessage(error)}</p> : null}
      {triggers.length === 0 && !error && <p className="empty">No triggers yet. Add one above.</p>}
      <ul className="list" aria-label="Triggers">
        {triggers.map((trigger) => (
          <li key={trigger.id} className="list-item" data-trigger-id={trigger.id}>
            <span className="grow">
              <span className="list-title">{trigger.name}</span>
              <span className="muted small">
                {trigger.kind === 'schedule' ? (
                  <>
                    <code>{trigger.cron}</code> ({trigger.timezone}) · missed: {trigger.missed}
                  </>
                ) : (
                  <>
                    webhook <code>{trigger.url}</code>
                  </>
                )}{' '}
                · agent {trigger.agent ?? 'default'}
              </span>
              {open === trigger.id && <Fires trigger={trigger} />}
            </span>
            <button
              type="button"
              className="button small-button ghost"
              onClick={() => setOpen(open === trigger.id ? undefined : trigger.id)}
            >
              {open === trigger.id ? 'Hide fires' : 'Fires'}
            </button>
            <button type="button" className="button small-button" onClick={() => void runNow(trigger)}>
              Run now
            </button>
            <button type="button" className="button small-button ghost" onClick={() => void remove(trigger)}>
              Remove
            </button>
          </li>
        ))}
      </ul>
    </div>
  )
}
