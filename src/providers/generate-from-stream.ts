// `generate` drains `stream`: one request path and one parser per family, so the non-streamed call
// cannot drift from the streamed one (and a truncated or in-band error is detected the same way).
import { AppError } from '../core/errors.js'
import type { AssistantMessage } from '../core/messages.js'
import type { LlmStreamEvent } from './types.js'

export async function generateFromStream(events: AsyncIterable<LlmStreamEvent>): Promise<AssistantMessage> {
  for await (const event of events) if (event.type === 'finish') return event.message
  // Every client throws instead of ending without `finish`, so reaching this is a bug.
  throw new AppError('internal', 'The model stream ended without a finish event')
}
