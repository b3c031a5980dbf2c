// Migration 0008 rebuilds pending_actions (a CHECK cannot be altered in SQLite): existing proposals must
// come through it unchanged on both engines, `applying` must be storable, and the CHECK must still refuse
// anything else (issue 17 items 7 and 8).
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { freshPostgresUrl } from '../../../test/helpers/store-engines.js'
import { migrateTo } from '../../../test/helpers/migrate-to.js'
import { migrateToLatest } from '../migrate.js'
import { openDatabase } from '../open-database.js'

const ENGINES = [
  { name: 'sqlite', url: async () => undefined },
  { name: 'postgres', url: freshPostgresUrl },
] as const

describe.each(ENGINES)('migration 0008-action-applying ($name)', (engine) => {
  it('keeps existing actions, stores applying, and refuses an unknown status', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hangar-migration-'))
    const handle = await openDatabase({ dataDir, url: await engine.url() })
    try {
      await migrateTo(handle, '0007-run-pinned-node')
      await sql`insert into users (id, name, role, created_at) values ('usr_1', 'o', 'owner', '2026-01-01')`.execute(
        handle.db,
      )
      await sql`insert into pending_actions (id, user_id, tool, input, input_hash, summary, classification,
        origin, status, decision_reason, result, precondition, created_at, expires_at, decided_at)
        values ('act_1', 'usr_1', 'write_file', '{}', 'h', 'Create a', 'safe_create', 'chat', 'rejected',
        'no', '{"content":"x"}', null, '2026-01-01', '2026-01-02', '2026-01-01')`.execute(handle.db)

      await migrateToLatest(handle.db, handle.engine)

      const rows = await sql<Record<string, unknown>>`select * from pending_actions`.execute(handle.db)
      expect(rows.rows).toEqual([
        expect.objectContaining({
          id: 'act_1',
          status: 'rejected',
          decision_reason: 'no',
          result: '{"content":"x"}',
          decided_by: null,
          apply_pgid: null,
        }),
      ])
      await sql`update pending_actions set status = 'applying', apply_pgid = 42 where id = 'act_1'`.execute(
        handle.db,
      )
      await expect(
        sql`update pending_actions set status = 'bogus' where id = 'act_1'`.execute(handle.db),
      ).rejects.toThrow()
    } finally {
      await handle.close()
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})
