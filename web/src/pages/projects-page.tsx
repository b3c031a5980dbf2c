// Projects: the folders (or git checkouts) agents work in. Add one by its path on the daemon's host — the
// daemon's refusal (no such directory, inside the data dir, already a project) is shown under the input —
// remove one after a confirmation, and, as the owner, grant members access to it. Each shows its workspace
// lifecycle (components/workspace-lifecycle-card.tsx), which the owner approves when the repository sets it.
import { type FormEvent, useState } from 'react'
import { useToast } from '../components/toasts'
import { WorkspaceLifecycleCard } from '../components/workspace-lifecycle-card'
import { api, ApiError } from '../lib/api'
import { fieldErrorsByKey, unplacedErrors } from '../lib/field-errors'
import { formatWhen } from '../lib/format'
import type { Project } from '../lib/types'
import { useAgents } from '../lib/use-agents'
import { useProjects } from '../lib/use-projects'

const FORM_KEYS = new Set(['path', 'name', 'defaultAgent'])

/** Where each refusal shows: by field when the daemon names it, else (409, a 400 without fields) at path. */
function formErrors(error: unknown): Record<string, string> {
  if (!(error instanceof ApiError))
    return { '(body)': error instanceof Error ? error.message : String(error) }
  const byKey = fieldErrorsByKey(error.fields)
  if (Object.keys(byKey).length > 0) return byKey
  return { path: error.hint ? `${error.message} (${error.hint})` : error.message }
}

function AddProjectForm({ onAdded }: { onAdded: (project: Project) => void }) {
  const { choices } = useAgents()
  const [path, setPath] = useState('')
  const [name, setName] = useState('')
  const [defaultAgent, setDefaultAgent] = useState('')
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [busy, setBusy] = useState(false)

  async function submit(event: FormEvent) {
    event.preventDefault()
    if (!path.trim()) {
      setErrors({ path: 'Give the folder’s absolute path on the daemon’s host, e.g. /home/me/shop.' })
      return
    }
    setBusy(true)
    try {
      const project = await api<Project>('POST', '/api/projects', {
        path: path.trim(),
        ...(name.trim() && { name: name.trim() }),
        ...(defaultAgent && { defaultAgent }),
      })
      setErrors({})
      setPath('')
      setName('')
      setDefaultAgent('')
      onAdded(project)
    } catch (error) {
      setErrors(formErrors(error))
    } finally {
      setBusy(false)
    }
  }

  const fieldError = (key: string) =>
    errors[key] && (
      <span className="field-error" role="alert" data-field={key}>
        {errors[key]}
      </span>
    )

  return (
    <form
      className="card form"
      aria-label="Add a project"
      onSubmit={(event) => void submit(event)}
      noValidate
    >
      <h2>Add a project</h2>
      <div className="grid-2">
        <label>
          <span className="small muted">Path on the daemon’s host</span>
          <input
            value={path}
            onChange={(event) => setPath(event.target.value)}
            placeholder="/home/me/shop"
            aria-invalid={errors.path ? true : undefined}
            autoComplete="off"
            spellCheck={false}
          />
          {fieldError('path')}
        </label>
        <label>
          <span className="small muted">Name (optional: the folder’s name)</span>
          <input
            value={name}
            onChange={(event) => setName(event.target.value)}
            aria-invalid={errors.name ? true : undefined}
          />
          {fieldError('name')}
        </label>
        <label>
          <span className="small muted">Default agent (optional)</span>
          <select value={defaultAgent} onChange={(event) => setDefaultAgent(event.target.value)}>
            <option value="">None</option>
            {choices.map((choice) => (
              <option key={choice.name} value={choice.name}>
                {choice.name}
              </option>
            ))}
          </select>
          {fieldError('defaultAgent')}
        </label>
      </div>
      {unplacedErrors(errors, FORM_KEYS).map((message) => (
        <p key={message} className="field-error" role="alert">
          {message}
        </p>
      ))}
      <div className="row">
        <button type="submit" className="button primary" disabled={busy}>
          {busy ? 'Adding…' : 'Add project'}
        </button>
      </div>
    </form>
  )
}

function Members({ project, onChanged }: { project: Project; onChanged: () => void }) {
  const toast = useToast()
  const [userId, setUserId] = useState('')
  const [error, setError] = useState<string>()

  async function change(method: 'PUT' | 'DELETE', member: string) {
    try {
      await api(method, `/api/projects/${project.id}/members/${encodeURIComponent(member)}`)
      setError(undefined)
      if (method === 'PUT') setUserId('')
      toast.success(method === 'PUT' ? `${member} can use ${project.name}` : `${member} removed`)
      onChanged()
    } catch (caught) {
      setError(caught instanceof Error ? caught.message : String(caught))
    }
  }

  return (
    <div className="members" aria-label={`Members of ${project.name}`} role="group">
      <span className="small muted">Members: </span>
      {(project.members ?? []).length === 0 && <span className="small muted">only you</span>}
      {(project.members ?? []).map((member) => (
        <span key={member} className="member badge badge-muted">
          <code>{member}</code>
          <button
            type="button"
            className="icon-button"
            aria-label={`Remove ${member} from ${project.name}`}
            onClick={() => void change('DELETE', member)}
          >
            ×
          </button>
        </span>
      ))}
      <form
        className="row"
        onSubmit={(event) => {
          event.preventDefault()
          if (!userId.trim()) setError('Give the user id to grant (hangar users list shows them).')
          else void change('PUT', userId.trim())
        }}
      >
        <label className="grow">
          <span className="visually-hidden">User id to grant {project.name}</span>
          <input value={userId} onChange={(event) => setUserId(event.target.value)} placeholder="usr_…" />
        </label>
        <button type="submit" className="button small-button">
          Grant
        </button>
      </form>
      {error && (
        <span className="field-error" role="alert">
          {error}
        </span>
      )}
    </div>
  )
}

export function ProjectsPage({ isOwner }: { isOwner: boolean }) {
  const toast = useToast()
  const { available, projects, reload, chosen, choose } = useProjects()

  async function remove(project: Project) {
    if (!window.confirm(`Remove project ${project.name}? Its folder (${project.path}) is left as it is.`))
      return
    try {
      await api('DELETE', `/api/projects/${project.id}`)
      if (chosen === project.id) choose(null)
      toast.success(`Removed ${project.name}`)
      await reload()
    } catch (error) {
      toast.error(error)
    }
  }

  return (
    <div className="page">
      <header className="page-head">
        <h1>Projects</h1>
      </header>
      {!available ? (
        <p className="empty">
          This daemon has no projects: agents work in the folder it was started in (<code>hangar up</code>).
        </p>
      ) : (
        <>
          {isOwner ? (
            <AddProjectForm
              onAdded={(project) => {
                toast.success(`Added ${project.name}`)
                void reload()
              }}
            />
          ) : (
            <p className="muted">The owner of this Hangar adds projects and grants you access to them.</p>
          )}
          {projects.length === 0 && (
            <p className="empty">
              {isOwner ? 'No projects yet. Add a folder above.' : 'No project has been granted to you yet.'}
            </p>
          )}
          <ul className="list" aria-label="Projects">
            {projects.map((project) => (
              <li key={project.id} className="list-item project-item" data-project-id={project.id}>
                <span className="grow">
                  <span className="list-title">{project.name}</span>
                  <span className="muted small">
                    <code>{project.path}</code> · {project.kind} · default agent{' '}
                    {project.defaultAgent ?? 'none'} · added {formatWhen(project.createdAt)}
                  </span>
                  {isOwner && <Members project={project} onChanged={() => void reload()} />}
                  <WorkspaceLifecycleCard project={project} isOwner={isOwner} />
                </span>
                {isOwner && (
                  <button
                    type="button"
                    className="button small-button ghost"
                    onClick={() => void remove(project)}
                  >
                    Remove
                  </button>
                )}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  )
}
