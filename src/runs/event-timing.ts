// Where the time of an agent's line goes on its way to an SSE client, for the event bench: diagnostics
// channels (node:diagnostics_channel, as node:http and undici publish theirs) at each stage of the pipeline.
// Nothing is published while nobody subscribes, and only a process's own code can subscribe (the bench
// preloads scripts/bench-event-stages.mjs into its daemon), so a daemon pays a `hasSubscribers` check per
// line and batch, and no data leaves it.
import diagnostics from 'node:diagnostics_channel'
import type { EventEnvelope } from '../core/events.js'

/** The first stage, a line of an agent's stdout as the supervisor split it off (before any parsing). */
export { type AgentLineMessage, agentLineRead } from '../adapters/supervisor.js'
/** A batch of a run's events, about to be stored (its envelopes are final, seq and all). */
export const eventsStoring = diagnostics.channel('hangar:events-storing')
/** The same batch, stored: it is handed to the event bus next. */
export const eventsStored = diagnostics.channel('hangar:events-stored')
/** One event, handed to an SSE client's connection. */
export const eventSent = diagnostics.channel('hangar:event-sent')

export interface EventsMessage {
  envelopes: readonly EventEnvelope[]
}

export interface EventSentMessage {
  envelope: EventEnvelope
}
