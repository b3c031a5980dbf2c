// Once run events flow on SQLite, the WAL is copied back into the database file by a worker thread, not
// by a commit on the daemon's thread; doing so is no write of another process's to the store's eyes.
import { rm, stat } from 'node:fs/promises'
import { describe, expect, it, vi } from 'vitest'
import { makeTempDir } from '../../test/helpers/store-engines.js'
import { proxyRequestRow } from '../../test/helpers/proxy-request-row.js'
import type { EventEnvelope } from '../core/events.js'
import { openStore, type Store } from './store.js'

/** Runs `write` on a fresh SQLite store, and waits for a worker to copy the WAL back into its file. */
async function expectCheckpointedAfter(write: (store: Store, userId: string) => Promise<void>) {
  const dataDir = await makeTempDir()
  const store = await openStore({ dataDir })
  try {
    const owner = await store.users.create({ name: 'alice', role: 'owner' })
    const before = (await stat(store.location)).size
    // ~1 MB: far below the 1000 pages (4 MB) at which a commit would checkpoint by itself.
    await write(store, owner.id)
    const seen = store.writesByOthers?.()
    await vi.waitFor(
      async () => expect((await stat(store.location)).size).toBeGreaterThan(before + 500_000),
      { timeout: 20_000, interval: 50 },
    )
    expect(store.writesByOthers?.()).toBe(seen)
  } finally {
    await store.close()
    await rm(dataDir, { recursive: true, force: true })
  }
}

describe('WAL checkpoints (SQLite)', () => {
  it('copies the WAL into the database file in the background once run events are stored', async () => {
    await expectCheckpointedAfter(async (store, userId) => {
      const runs = store.forUser(userId).runs
      const run = await runs.create({ agent: 'builtin', adapter: 'builtin', prompt: 'p', cwd: '/tmp' })
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
      expect(await runs.lastEventSeq(run.id)).toBe(1000)
    })
  })

  it('does so too in a daemon that only proxies (the request log alone fills the WAL)', async () => {
    await expectCheckpointedAfter(async (store, userId) => {
      for (let batch = 0; batch < 10; batch++)
        await store.proxyRequestLog.recordMany(
          Array.from({ length: 100 }, (_, index) => ({
            userId,
            row: proxyRequestRow({
              id: `p-${batch}-${index}`,
              profile: 'reviewer',
              startedAt: new Date().toISOString(),
              costUsd: 0.001,
              error: 'x'.repeat(1000),
            }),
          })),
        )
    })
  })
})
