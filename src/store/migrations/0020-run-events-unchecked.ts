// Run events on PostgreSQL without their foreign key to runs (issue 19), as 0019 did for the request log.
// The key's per-row check locks the run's row (FOR KEY SHARE) while the run's own status updates write the
// same row: at runs' starts and ends the two met, and with twenty runs the event commits' p99 was 10-14 ms
// against 7-8 ms without the key (stdout → SSE p99 16-25 ms against 12-13 ms). The key guarded nothing
// the appender does not: it skips rows whose run is gone (postgres-run-events-appender), and deleting runs
// deletes their events, by a statement trigger — what ON DELETE CASCADE did. SQLite keeps the key (an
// in-process b-tree probe, without locks between processes).
import { type Kysely, PostgresAdapter, sql } from 'kysely'

function onPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!onPostgres(db)) return
  await sql`ALTER TABLE run_events DROP CONSTRAINT run_events_run_id_fkey`.execute(db)
  // The search_path of the migration (the store's schema), so the trigger finds this store's table.
  await sql`CREATE FUNCTION hangar_delete_runs_events() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN
      DELETE FROM run_events WHERE run_id IN (SELECT id FROM deleted_runs);
      RETURN NULL;
    END $$`.execute(db)
  await sql`CREATE TRIGGER runs_delete_events AFTER DELETE ON runs
    REFERENCING OLD TABLE AS deleted_runs FOR EACH STATEMENT
    EXECUTE FUNCTION hangar_delete_runs_events()`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!onPostgres(db)) return
  await sql`DROP TRIGGER runs_delete_events ON runs`.execute(db)
  await sql`DROP FUNCTION hangar_delete_runs_events()`.execute(db)
  // Rows the key would refuse (written while there was none) go first.
  await sql`DELETE FROM run_events WHERE run_id NOT IN (SELECT id FROM runs)`.execute(db)
  await sql`ALTER TABLE run_events
    ADD CONSTRAINT run_events_run_id_fkey FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE`.execute(
    db,
  )
}
