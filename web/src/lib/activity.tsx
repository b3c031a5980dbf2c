// One live connection per tab to /api/activity (runs starting and ending, proposals waiting), shared by
// every page that shows lists: each subscriber refetches what it shows when something happens, and when the
// connection comes back after a drop (nothing is replayed on this stream).
import { createContext, type ReactNode, useCallback, useContext, useEffect, useRef } from 'react'
import type { EventEnvelope } from '../../../src/core/events'
import { notifyInBrowser } from './browser-notifications'
import { type StreamState, useEventStream } from './use-event-stream'

type Listener = (envelope: EventEnvelope | null) => void

const ActivityContext = createContext<{ subscribe: (listener: Listener) => () => void; state: StreamState }>({
  subscribe: () => () => {},
  state: 'idle',
})

export function ActivityProvider({ children }: { children: ReactNode }) {
  const listeners = useRef(new Set<Listener>())
  const notify = useCallback((envelope: EventEnvelope | null) => {
    for (const listener of listeners.current) listener(envelope)
    notifyInBrowser(envelope)
  }, [])
  const state = useEventStream('/api/activity', notify, { onOpen: () => notify(null) })
  const subscribe = useCallback((listener: Listener) => {
    listeners.current.add(listener)
    return () => listeners.current.delete(listener)
  }, [])
  return <ActivityContext.Provider value={{ subscribe, state }}>{children}</ActivityContext.Provider>
}

/** Calls `onActivity` for each run start, run end and proposal, and with null after each (re)connect. */
export function useActivity(onActivity: Listener): StreamState {
  const { subscribe, state } = useContext(ActivityContext)
  const latest = useRef(onActivity)
  latest.current = onActivity
  useEffect(() => subscribe((envelope) => latest.current(envelope)), [subscribe])
  return state
}
