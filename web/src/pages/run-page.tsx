// One run on its own (runs started by `hangar run`, the API or MCP have no conversation): its events live
// over the run's SSE stream.
import { useCallback, useState } from 'react'
import type { EventEnvelope } from '../../../src/core/events'
import { RunView } from '../chat/run-view'
import { applyEvent, type Transcript } from '../chat/transcript'
import { StreamIndicator } from '../components/stream-indicator'
import { useToast } from '../components/toasts'
import { api } from '../lib/api'
import { continuationOf } from '../lib/decided'
import { canResume, resumeRun } from '../lib/resume'
import { Link, navigate } from '../lib/router'
import type { PendingAction, Run } from '../lib/types'
import { useAgents } from '../lib/use-agents'
import { useProjects } from '../lib/use-projects'
import { useEventStream } from '../lib/use-event-stream'
import { useResource } from '../lib/use-resource'

export function RunPage({ id }: { id: string }) {
  const toast = useToast()
  const run = useResource<Run>(`/api/runs/${encodeURIComponent(id)}`)
  const actions = useResource<PendingAction[]>('/api/actions?status=pending')
  const [transcript, setTranscript] = useState<Transcript>({})
  const { adapters } = useAgents()
  const { nameOf } = useProjects()
  // The run that went on from this one after its decisions (decided runs link it).
  const continuation = useResource<Run[]>(run.data?.agentStatus ? `/api/runs?limit=200` : null)
  const { reload } = run
  const onEvent = useCallback(
    (envelope: EventEnvelope) => {
      setTranscript((current) => applyEvent(current, envelope))
      if (envelope.type === 'run-end') void reload()
    },
    [reload],
  )
  const state = useEventStream(`/api/runs/${encodeURIComponent(id)}/events`, onEvent, {
    endsWith: (envelope) => envelope.type === 'run-end',
  })
  const byAction = new Map(
    (actions.data ?? []).filter((action) => action.runId === id).map((action) => [action.id, action]),
  )
  return (
    <div className="page chat-page">
      <header className="page-head">
        <h1>Run</h1>
        <code className="muted">{id}</code>
        {!run.data?.endedAt && <StreamIndicator state={state} />}
        <span className="grow" />
        <Link to="/runs">All runs</Link>
      </header>
      {run.error !== undefined && !run.data && <p role="alert">This run could not be loaded.</p>}
      {run.data && (
        <div className="chat-log">
          <RunView
            run={run.data}
            continuation={continuationOf(run.data, continuation.data ?? [])}
            projectName={nameOf(run.data.projectId)}
            transcript={transcript[id]}
            actions={byAction}
            onDecided={() => void actions.reload()}
            onCancel={(runId) =>
              void api('POST', `/api/runs/${runId}/cancel`).then(
                () => toast.success('Cancelling the run'),
                (error: unknown) => toast.error(error),
              )
            }
            onResume={
              canResume(run.data, transcript[id]?.end?.status ?? run.data.status, adapters)
                ? (runId) =>
                    void resumeRun(runId).then(
                      (resumed) =>
                        navigate(
                          resumed.conversationId
                            ? `/conversations/${resumed.conversationId}`
                            : `/runs/${resumed.id}`,
                        ),
                      (error: unknown) => toast.error(error),
                    )
                : undefined
            }
          />
        </div>
      )}
    </div>
  )
}
