// Preloaded into the daemon by `node scripts/bench-events.mjs --stages` (node --import): follows each
// timestamped line of the bench's fake agent through the daemon's diagnostics channels
// (src/runs/event-timing.ts) and, when the daemon exits, writes to $BENCH_EVENT_STAGES_FILE the wall-clock
// times (ms, to the microsecond) at which that line was read from the agent's stdout, went to the store,
// was stored, and was handed to an SSE connection: [[stamp, read, storing, stored, sent], …].
import diagnostics from 'node:diagnostics_channel'
import { writeFileSync } from 'node:fs'

/** The stamp the fake agent (fake-cursor-agent.mjs) puts in its lines: `[t=<wall clock, ms>]`. */
export const STAMP = /\[t=(\d+(?:\.\d+)?)\]/g

const file = process.env.BENCH_EVENT_STAGES_FILE
// The daemon only (its agents inherit nothing of this, but a CLI command would); bench-events.mjs imports
// STAMP from here, and so runs none of it.
if (file && process.argv.includes('up')) {
  /** stamp → [read, storing, stored, sent] */
  const times = new Map()
  const now = () => performance.timeOrigin + performance.now()
  const stampsOf = (text) => (typeof text === 'string' ? [...text.matchAll(STAMP)].map((m) => m[1]) : [])

  diagnostics.subscribe('hangar:agent-line-read', ({ line }) => {
    const at = now()
    for (const stamp of stampsOf(line)) times.set(stamp, [at])
  })
  const mark = (stage) => (envelopes) => {
    const at = now()
    for (const envelope of envelopes)
      for (const stamp of stampsOf(envelope.text)) {
        const entry = times.get(stamp)
        if (entry && entry.length === stage) entry.push(at)
      }
  }
  const storing = mark(1)
  const stored = mark(2)
  const sent = mark(3)
  diagnostics.subscribe('hangar:events-storing', ({ envelopes }) => storing(envelopes))
  diagnostics.subscribe('hangar:events-stored', ({ envelopes }) => stored(envelopes))
  diagnostics.subscribe('hangar:event-sent', ({ envelope }) => sent([envelope]))
  process.once('exit', () => {
    const complete = [...times].filter(([, entry]) => entry.length === 4)
    writeFileSync(file, JSON.stringify(complete.map(([stamp, entry]) => [Number(stamp), ...entry])))
  })
}
