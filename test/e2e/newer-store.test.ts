// Issue 21, upgrades: the built `hangar` meeting a store written by a newer Hangar (a migration it does
// not know) refuses it — the daemon and a CLI command alike — on one line that says to upgrade, and
// leaves the file byte for byte as it was.
import { createHash } from 'node:crypto'
import { readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { sql } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../src/store/open-database.js'
import { openStore } from '../../src/store/store.js'
import { runHangar } from '../helpers/hangar-cli.js'
import { makeTempDir } from '../helpers/store-engines.js'

describe('a store written by a newer Hangar (issue 21)', { timeout: 60_000 }, () => {
  let dataDir: string | undefined
  afterAll(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true })
  })

  it('is refused by hangar up and by the CLI, untouched, with a hint to upgrade', async () => {
    dataDir = await makeTempDir('hangar-newer-store-')
    const store = await openStore({ dataDir })
    await store.users.create({ name: 'alice', role: 'owner' })
    await store.close()
    const handle = await openDatabase({ dataDir })
    await sql`insert into hangar_migrations (name, timestamp) values ('9999-next-release', '2030-01-01T00:00:00.000Z')`.execute(
      handle.db,
    )
    await handle.close()
    const file = path.join(dataDir, 'hangar.db')
    const digest = async () =>
      createHash('sha256')
        .update(await readFile(file))
        .digest('hex')
    const before = await digest()

    for (const args of [
      ['up', '--port', '0'],
      ['token', 'list'],
    ]) {
      const result = await runHangar([...args, '--data-dir', dataDir], { timeoutMs: 30_000 })
      expect(result.code, result.stderr).toBe(1)
      const errors = result.stderr.split('\n').filter((line) => line.startsWith('hangar: error:'))
      expect(errors).toHaveLength(1)
      expect(errors[0]).toMatch(
        /this database was written by a newer Hangar \(it has migration 9999-next-release, unknown to hangar [^)]+\); upgrade hangar/,
      )
      expect(result.stderr).not.toMatch(/\n\s+at /)
      expect(await digest()).toBe(before)
    }
  })
})
