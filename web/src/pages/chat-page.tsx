// One conversation: its runs as a chat, streamed live over the conversation's SSE (which replays the whole
// history first, and what was missed after a reconnect), proposals decided in place, cancel, and the
// fallback agents to accept after a failure.
import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import type { EventEnvelope } from '../../../src/core/events'
import { applyEvent, type Transcript } from '../chat/transcript'
import { Composer } from '../chat/composer'
import { RunView } from '../chat/run-view'
import { isActiveStatus } from '../components/status-badge'
import { useToast } from '../components/toasts'
import { api } from '../lib/api'
import { continuationOf } from '../lib/decided'
import { canResume, resumeRun } from '../lib/resume'
import type { ConversationDetail, PendingAction } from '../lib/types'
import { useProjects } from '../lib/use-projects'
import { useAgents } from '../lib/use-agents'
import { useEventStream } from '../lib/use-event-stream'
import { useResource } from '../lib/use-resource'
import { StreamIndicator } from '../components/stream-indicator'
import { Link, navigate } from '../lib/router'

export function ChatPage({ id }: { id: string }) {
  const toast = useToast()
  const conversation = useResource<ConversationDetail>(`/api/conversations/${encodeURIComponent(id)}`)
  const actions = useResource<PendingAction[]>('/api/actions?status=pending')
  const { choices, adapters } = useAgents()
  const { nameOf } = useProjects()
  const [transcript, setTranscript] = useState<Transcript>({})
  const [agent, setAgent] = useState<string>()
  const { reload: reloadConversation } = conversation
  const { reload: reloadActions } = actions

  useEffect(() => setTranscript({}), [id])
  useEffect(() => {
    if (conversation.data && agent === undefined) setAgent(conversation.data.profile)
  }, [conversation.data, agent])

  const onEvent = useCallback(
    (envelope: EventEnvelope) => {
      setTranscript((current) => applyEvent(current, envelope))
      if (envelope.type === 'run-start' || envelope.type === 'run-end') void reloadConversation()
      if (envelope.type === 'approval-required' || envelope.type === 'run-end') void reloadActions()
    },
    [reloadConversation, reloadActions],
  )
  const streamState = useEventStream(`/api/conversations/${encodeURIComponent(id)}/events`, onEvent)

  const runs = useMemo(
    () => [...(conversation.data?.runs ?? [])].sort((a, b) => (a.id < b.id ? -1 : 1)),
    [conversation.data],
  )
  const byAction = useMemo(
    () =>
      new Map(
        (actions.data ?? [])
          .filter((action) => action.conversationId === id)
          .map((action) => [action.id, action]),
      ),
    [actions.data, id],
  )
  const activeRun = runs.find((run) => isActiveStatus(transcript[run.id]?.end?.status ?? run.status))
  const lastRun = runs.at(-1)
  const lastStatus = lastRun ? (transcript[lastRun.id]?.end?.status ?? lastRun.status) : undefined

  // Follow new output while the reader is at the bottom; leave them be once they scroll up to read.
  const following = useRef(true)
  useEffect(() => {
    const onScroll = () => {
      following.current = window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 160
    }
    window.addEventListener('scroll', onScroll, { passive: true })
    return () => window.removeEventListener('scroll', onScroll)
  }, [])
  useEffect(() => {
    if (following.current) document.getElementById('chat-end')?.scrollIntoView({ block: 'end' })
  }, [transcript, runs.length])

  const onDecided = useCallback(() => {
    void reloadActions()
    void reloadConversation()
  }, [reloadActions, reloadConversation])

  async function send(text: string, withAgent = agent): Promise<boolean> {
    try {
      await api('POST', `/api/conversations/${encodeURIComponent(id)}/messages`, {
        text,
        ...(withAgent && { agent: withAgent }),
      })
      await reloadConversation()
      return true
    } catch (error) {
      toast.error(error)
      return false
    }
  }

  async function cancel(runId: string) {
    try {
      await api('POST', `/api/runs/${runId}/cancel`)
      toast.success('Cancelling the run')
    } catch (error) {
      toast.error(error)
    }
  }

  async function resume(runId: string) {
    try {
      await resumeRun(runId)
      await reloadConversation()
    } catch (error) {
      toast.error(error)
    }
  }

  async function remove() {
    if (!window.confirm('Delete this conversation, its runs and its workspace?')) return
    try {
      await api('DELETE', `/api/conversations/${encodeURIComponent(id)}`)
      navigate('/conversations')
    } catch (error) {
      toast.error(error)
    }
  }

  if (conversation.error && !conversation.data) {
    return (
      <div className="page">
        <p role="alert">
          This conversation could not be loaded: {String((conversation.error as Error).message)}
        </p>
      </div>
    )
  }
  const data = conversation.data
  return (
    <div className="page chat-page">
      <header className="page-head">
        <h1>{data?.title ?? 'Conversation'}</h1>
        <StreamIndicator state={streamState} />
        <span className="grow" />
        {data && (
          <span className="muted small" data-project={data.projectId ?? ''}>
            {nameOf(data.projectId) ?? data.project}
          </span>
        )}
        {data?.workspaceId && <Link to={`/conversations/${encodeURIComponent(id)}/review`}>Review</Link>}
        <button type="button" className="button ghost" onClick={() => void remove()}>
          Delete
        </button>
      </header>
      <div className="chat-log" aria-live="polite" aria-busy={activeRun !== undefined}>
        {runs.length === 0 && data && <p className="muted">No messages yet. Say what you want done.</p>}
        {runs.map((run) => (
          <RunView
            key={run.id}
            run={run}
            continuation={continuationOf(run, runs)}
            projectName={nameOf(run.projectId)}
            transcript={transcript[run.id]}
            actions={byAction}
            onDecided={onDecided}
            onCancel={(runId) => void cancel(runId)}
            onResume={
              // Only the latest run: the next one continues its session (a message does the same).
              run === lastRun && canResume(run, lastStatus ?? run.status, adapters)
                ? (runId) => void resume(runId)
                : undefined
            }
          />
        ))}
        {lastStatus === 'failed' && data?.fallback && data.fallback.length > 0 && lastRun && (
          <div className="fallback" role="note">
            <p>
              <strong>{lastRun.agent}</strong> failed. Try the same message with another agent:
            </p>
            <div className="row">
              {data.fallback.slice(0, 3).map((name) => (
                <button
                  key={name}
                  type="button"
                  className="button"
                  onClick={() => {
                    setAgent(name)
                    void send(lastRun.prompt, name)
                  }}
                >
                  Retry with {name}
                </button>
              ))}
            </div>
          </div>
        )}
        <div id="chat-end" />
      </div>
      {data && (
        <Composer
          choices={choices}
          agent={agent ?? data.profile}
          onAgentChange={setAgent}
          onSend={(text) => send(text)}
          busy={activeRun !== undefined}
        />
      )}
    </div>
  )
}
