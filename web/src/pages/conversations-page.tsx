// Conversations: search them, open one, or start a new one with an agent and a first message.
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
import { useResource } from '../lib/use-resource'

export function ConversationsPage() {
  const toast = useToast()
  const [search, setSearch] = useState('')
  const [query, setQuery] = useState('')
  const list = useResource<Conversation[]>(
    `/api/conversations${query ? `?search=${encodeURIComponent(query)}` : ''}`,
  )
  const { choices, defaultAgent, noDefault } = useAgents()
  const [agent, setAgent] = useState<string>()
  useActivity(() => void list.reload())

  // Search as people type, without a request per key.
  useEffect(() => {
    const timer = setTimeout(() => setQuery(search.trim()), 250)
    return () => clearTimeout(timer)
  }, [search])

  // The daemon's default: an agent that can run here, as `hangar run` would pick (none: empty, and why).
  const selected = agent ?? defaultAgent ?? ''

  async function start(text: string): Promise<boolean> {
    try {
      const title = text.split('\n')[0]!.slice(0, 80)
      // With no agent chosen the daemon answers why none can run, and how to fix it.
      const conversation = await api<Conversation>('POST', '/api/conversations', {
        ...(selected && { agent: selected }),
        title,
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
      </header>
      <section className="card" aria-label="New conversation">
        <h2>New conversation</h2>
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
      {list.data && list.data.length === 0 && (
        <p className="empty">{query ? `No conversation matches “${query}”.` : 'No conversations yet.'}</p>
      )}
      <ul className="list" aria-label="Conversations">
        {(list.data ?? []).map((conversation) => (
          <li key={conversation.id}>
            <Link to={`/conversations/${conversation.id}`} className="list-item">
              <span className="grow">
                <span className="list-title">{conversation.title}</span>
                <span className="muted small">
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
