// A daemon killed with SIGKILL in the middle of writes leaves a database that opens, passes an
// integrity check, and holds every write it acknowledged — each with its audit row (same transaction).
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { openStore } from '../../src/store/store.js'
import { runHangar, startDaemon } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

describe('daemon crash', () => {
  it('leaves a consistent SQLite store after SIGKILL during writes', async () => {
    const dataDir = await makeTempDir()
    const daemon = await startDaemon(['--data-dir', dataDir])
    const { token } = JSON.parse(await readFile(path.join(dataDir, 'daemon.json'), 'utf8')) as {
      token: string
    }
    const acknowledged: string[] = []
    let killed = false

    const writer = async (worker: number) => {
      for (let index = 0; !killed && index < 1000; index++) {
        try {
          const response = await fetch(`${daemon.url}/api/tokens`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name: `w${worker}-${index}` }),
          })
          if (response.status === 201) acknowledged.push(((await response.json()) as { id: string }).id)
        } catch {
          return // the daemon is gone
        }
      }
    }
    const writers = Array.from({ length: 6 }, (_, worker) => writer(worker))
    while (acknowledged.length < 150) await new Promise((resolve) => setTimeout(resolve, 10))
    killed = true
    daemon.child.kill('SIGKILL')
    await Promise.all(writers)
    await daemon.stop()

    const store = await openStore({ dataDir })
    try {
      expect(await store.integrityCheck()).toBe('ok')
      const owner = (await store.users.findOwner())!
      const stored = await store.forUser(owner.id).tokens.list()
      const storedIds = new Set(stored.map((record) => record.id))
      for (const id of acknowledged) expect(storedIds.has(id)).toBe(true)
      const audits = await store.forUser(owner.id).audit.list({ action: 'token.create', limit: 100_000 })
      expect(audits.map((event) => event.targetId).sort()).toEqual([...storedIds].sort())
    } finally {
      await store.close()
    }

    // The stale daemon.json does not block a new start, and doctor sees a healthy store.
    const doctor = await runHangar(['doctor', '--data-dir', dataDir])
    expect(doctor.stdout).toMatch(/✓ database: sqlite/)
    expect(doctor.stdout).toContain('! daemon: not running')
    const restarted = await startDaemon(['--data-dir', dataDir])
    await restarted.stop()
  })
})
