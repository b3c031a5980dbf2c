// Conversations: search them, open one, or start a new one with an agent and a first message. With
// projects, the list shows the project chosen in the switcher, and a new conversation goes to it (asked
// for when there are several and none is chosen).
import { useEffect, useState } from 'react'
import { Composer } from '../chat/composer'
import { StatusBadge } from '../components/status-badge'
import { useToast } from '../components/toasts'
import { api } from '../lib/api'
import { formatWhen } from '../lib/format'
import { Link, navigate } from '../lib/router'
import type { Conversation } from '../lib/types'
import { useActivity } from '../lib/activity'
import { useAgents } from '../lib/use-agents'
import { inProject, projectForNew } from '../lib/projects'
import { useProjects } from '../lib/use-projects'
import { useResource } from '../lib/use-resource'

export function ConversationsPage() {
  const toast = useToast()
  const [search, setSearch] = useState('')
  const [query, setQuery] = useState('')
  const list = useResource<Conversation[]>(
    `/api/conversations${query ? `?search=${encodeURIComponent(query)}` : ''}`,
  )
  const { choices, defaultAgent, noDefault } = useAgents()
  const projects = useProjects()
  const [agent, setAgent] = useState<string>()
  const [pickedProject, setPickedProject] = useState<string>('')
  const [projectError, setProjectError] = useState<string>()
  const newProjectId = projectForNew(projects.chosen, projects.projects) ?? (pickedProject || null)
  const newProject = projects.projects.find((project) => project.id === newProjectId)
  const askProject = projects.projects.length > 1 && projects.chosen === null
  const shown = (list.data ?? []).filter((conversation) => inProject(conversation, projects.chosen))
  useActivity(() => void list.reload())

  // Search as people type, without a request per key.
  useEffect(() => {
    const timer = setTimeout(() => setQuery(search.trim()), 250)
    return () => clearTimeout(timer)
  }, [search])

  // The project's default agent, else the daemon's: one that can run here, as `hangar run` would pick
  // (none: empty, and why).
  const selected = agent ?? newProject?.defaultAgent ?? defaultAgent ?? ''

  async function start(text: string): Promise<boolean> {
    if (askProject && !newProjectId) {
      setProjectError('Choose the project this conversation works in.')
      return false
    }
    setProjectError(undefined)
    try {
      const title = text.split('\n')[0]!.slice(0, 80)
      // With no agent chosen the daemon answers why none can run, and how to fix it.
      const conversation = await api<Conversation>('POST', '/api/conversations', {
        ...(selected && { agent: selected }),
        title,
        ...(newProjectId && { projectId: newProjectId }),
      })
      await api('POST', `/api/conversations/${conversation.id}/messages`, { text })
      navigate(`/conversations/${conversation.id}`)
      return true
    } catch (error) {
      toast.error(error)
      return false
    }
  }

  return (
    <div className="page">
      <header className="page-head">
        <h1>Conversations</h1>
        <span className="grow" />
        <Link to="/attempts" className="button ghost small-button">
          Try with several agents
        </Link>
      </header>
      <section className="card" aria-label="New conversation">
        <h2>New conversation</h2>
        {askProject && (
          <div className="agent-picker project-picker">
            <label htmlFor="new-conversation-project" className="small muted">
              Project
            </label>
            <select
              id="new-conversation-project"
              value={pickedProject}
              aria-invalid={projectError ? true : undefined}
              onChange={(event) => {
                setPickedProject(event.target.value)
                setProjectError(undefined)
              }}
            >
              <option value="">Choose a project…</option>
              {projects.projects.map((project) => (
                <option key={project.id} value={project.id}>
                  {project.name}
                </option>
              ))}
            </select>
            {projectError && (
              <span className="field-error" role="alert">
                {projectError}
              </span>
            )}
          </div>
        )}
        <Composer
          choices={choices}
          agent={selected}
          onAgentChange={setAgent}
          onSend={start}
          busy={false}
          placeholder="What should the agent do? (Enter to start)"
          agentProblem={noDefault}
        />
      </section>
      <label className="search">
        <span className="visually-hidden">Search conversations</span>
        <input
          type="search"
          placeholder="Search conversations"
          value={search}
          onChange={(event) => setSearch(event.target.value)}
        />
      </label>
      {list.data && shown.length === 0 && (
        <p className="empty">
          {query
            ? `No conversation matches “${query}”.`
            : projects.chosen
              ? `No conversations in ${projects.nameOf(projects.chosen)} yet.`
              : 'No conversations yet.'}
        </p>
      )}
      <ul className="list" aria-label="Conversations">
        {shown.map((conversation) => (
          <li key={conversation.id}>
            <Link to={`/conversations/${conversation.id}`} className="list-item">
              <span className="grow">
                <span className="list-title">{conversation.title}</span>
                <span className="muted small">
                  {projects.nameOf(conversation.projectId) && (
                    <span data-project={conversation.projectId}>
                      {projects.nameOf(conversation.projectId)} ·{' '}
                    </span>
                  )}
                  {conversation.profile} · {formatWhen(conversation.updatedAt)}
                </span>
              </span>
              <StatusBadge status={conversation.status} />
            </Link>
          </li>
        ))}
      </ul>
    </div>
  )
}
