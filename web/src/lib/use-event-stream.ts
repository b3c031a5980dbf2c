// Server-Sent Events with the state people need to see: connected, or reconnecting after a drop. The
// browser's EventSource reconnects by itself and sends Last-Event-ID, so the daemon replays what was
// missed; a stream the server refuses (signed out, not found) closes for good instead.
import { useEffect, useRef, useState } from 'react'
import type { EventEnvelope } from '../../../src/core/events'

export type StreamState = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'closed'

export function useEventStream(
  url: string | null,
  onEvent: (envelope: EventEnvelope) => void,
  options: {
    onOpen?: () => void
    /** The last event of a stream that ends (a run's run-end): close instead of reconnecting. */
    endsWith?: (envelope: EventEnvelope) => boolean
  } = {},
): StreamState {
  const { onOpen, endsWith } = options
  const [state, setState] = useState<StreamState>(url ? 'connecting' : 'idle')
  const handlers = useRef({ onEvent, onOpen, endsWith })
  handlers.current = { onEvent, onOpen, endsWith }

  useEffect(() => {
    if (!url) {
      setState('idle')
      return
    }
    setState('connecting')
    const source = new EventSource(url)
    source.onopen = () => {
      setState('open')
      handlers.current.onOpen?.()
    }
    source.onmessage = (message: MessageEvent<string>) => {
      let envelope: EventEnvelope
      try {
        envelope = JSON.parse(message.data) as EventEnvelope
      } catch {
        return // A line that is not an envelope is not ours to show.
      }
      handlers.current.onEvent(envelope)
      if (handlers.current.endsWith?.(envelope)) {
        source.close()
        setState('idle')
      }
    }
    source.onerror = () => setState(source.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting')
    return () => source.close()
  }, [url])

  return state
}
