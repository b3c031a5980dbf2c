// Once run events flow on SQLite, the WAL is copied back into the database file by a worker thread, not
// by a commit on the daemon's thread; doing so is no write of another process's to the store's eyes.
import { rm, stat } from 'node:fs/promises'
import { describe, expect, it, vi } from 'vitest'
import { makeTempDir } from '../../test/helpers/store-engines.js'
import type { EventEnvelope } from '../core/events.js'
import { openStore } from './store.js'

describe('WAL checkpoints (SQLite)', () => {
  it('copies the WAL into the database file in the background once run events are stored', async () => {
    const dataDir = await makeTempDir()
    const store = await openStore({ dataDir })
    try {
      const owner = await store.users.create({ name: 'alice', role: 'owner' })
      const runs = store.forUser(owner.id).runs
      const run = await runs.create({ agent: 'builtin', adapter: 'builtin', prompt: 'p', cwd: '/tmp' })
      const before = (await stat(store.location)).size
      // ~1 MB of events: far below the 1000 pages (4 MB) at which a commit would checkpoint by itself.
      for (let batch = 0; batch < 10; batch++) {
        const envelopes: EventEnvelope[] = Array.from({ length: 100 }, (_, index) => ({
          v: 1,
          runId: run.id,
          seq: batch * 100 + index + 1,
          ts: '2026-01-01T00:00:00.000Z',
          type: 'text-delta',
          text: `${index} ${'x'.repeat(1000)}`,
        }))
        await runs.appendEvents(envelopes)
      }
      const seen = store.writesByOthers?.()
      await vi.waitFor(
        async () => expect((await stat(store.location)).size).toBeGreaterThan(before + 500_000),
        { timeout: 20_000, interval: 50 },
      )
      expect(store.writesByOthers?.()).toBe(seen)
      expect(await runs.lastEventSeq(run.id)).toBe(1000)
    } finally {
      await store.close()
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})
