// Stores an agent's session id on its run the moment the parser knows it (Claude's `system/init`, Codex's
// `thread.started`, a session id the launch chose…), not only at run-end: a run interrupted afterwards — a
// crash, a SIGKILLed daemon — keeps what `hangar run --resume` and the conversation's next message need.
import type { StreamParser } from '../adapters/types.js'
import type { ActiveRun } from './run-service.js'

export interface SessionRecorder {
  /** Call after each parsed line: stores the session id when it is new. Never throws. */
  check(): void
  /** Resolves once every store of the id has been written (or has failed: run-end stores it again). */
  settled(): Promise<void>
}

export function createSessionRecorder(
  active: Pick<ActiveRun, 'setSession'>,
  parser: Pick<StreamParser, 'sessionId'>,
): SessionRecorder {
  let recorded: string | undefined
  let writes: Promise<void> = Promise.resolve()
  return {
    check() {
      const sessionId = parser.sessionId()
      if (sessionId === undefined || sessionId === recorded) return
      recorded = sessionId
      writes = writes.then(() => active.setSession(sessionId)).catch(() => {})
    },
    settled: () => writes,
  }
}
