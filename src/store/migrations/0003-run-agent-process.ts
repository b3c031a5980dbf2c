// A run's owner (the Hangar process that executes it) and its agent's process group are different
// processes: recovery checks the first to know whether the run is orphaned, and reaps the second.
import type { Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('runs').addColumn('agent_pgid', 'integer').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('runs').dropColumn('agent_pgid').execute()
}
