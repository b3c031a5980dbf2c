// Whether live updates are arriving: nothing to say while connected; "Reconnecting…" after a drop (the
// stream catches up by itself once back).
import type { StreamState } from '../lib/use-event-stream'

export function StreamIndicator({ state }: { state: StreamState }) {
  if (state === 'open' || state === 'idle')
    return (
      <span className="stream-state stream-live" title="Live">
        ● live
      </span>
    )
  const text =
    state === 'connecting'
      ? 'Connecting…'
      : state === 'reconnecting'
        ? 'Reconnecting…'
        : 'Live updates stopped: reload the page'
  return (
    <span className={`stream-state stream-${state}`} role="status">
      {text}
    </span>
  )
}
