// The two tables every agent writes to all the time, the proxy's request log and run events, without their
// foreign keys on PostgreSQL (issue 19). There each key is checked per inserted row by a trigger that runs a
// query and locks the parent row:
// - the request log's two keys were about a third of the server's CPU per proxied request (3.5 µs each of
//   ~15 µs per row, measured on the batch insert), on the same cores as the daemon and its agents;
// - the events' key locked the run's row while the run's own status updates wrote it: with twenty runs
//   starting or ending, the event commits' p99 was 10-14 ms against 7-8 ms without it.
// The keys guarded nothing the writers do not:
// - proxy_requests.user_id: a row is written only for an authenticated token's user, and users are never
//   deleted;
// - run_id: both inserts skip rows whose run is gone (proxy-requests-appender, postgres-run-events-
//   appender), and deleting runs deletes their rows in both tables, by one statement trigger — what
//   ON DELETE CASCADE did, once per statement.
// SQLite keeps its keys: there a check is a b-tree probe inside the daemon, without locks between processes.
import { type Kysely, PostgresAdapter, sql } from 'kysely'

function onPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!onPostgres(db)) return
  await sql`ALTER TABLE proxy_requests
    DROP CONSTRAINT proxy_requests_user_id_fkey,
    DROP CONSTRAINT proxy_requests_run_id_fkey`.execute(db)
  await sql`ALTER TABLE run_events DROP CONSTRAINT run_events_run_id_fkey`.execute(db)
  // The search_path of the migration (the store's schema), so the trigger finds this store's tables.
  await sql`CREATE FUNCTION hangar_delete_runs_rows() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN
      DELETE FROM run_events WHERE run_id IN (SELECT id FROM deleted_runs);
      DELETE FROM proxy_requests WHERE run_id IN (SELECT id FROM deleted_runs);
      RETURN NULL;
    END $$`.execute(db)
  await sql`CREATE TRIGGER runs_delete_rows AFTER DELETE ON runs
    REFERENCING OLD TABLE AS deleted_runs FOR EACH STATEMENT
    EXECUTE FUNCTION hangar_delete_runs_rows()`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!onPostgres(db)) return
  await sql`DROP TRIGGER runs_delete_rows ON runs`.execute(db)
  await sql`DROP FUNCTION hangar_delete_runs_rows()`.execute(db)
  // Rows the keys would refuse (written while there were none) go first.
  await sql`DELETE FROM run_events WHERE run_id NOT IN (SELECT id FROM runs)`.execute(db)
  await sql`DELETE FROM proxy_requests
    WHERE user_id NOT IN (SELECT id FROM users)
      OR (run_id IS NOT NULL AND run_id NOT IN (SELECT id FROM runs))`.execute(db)
  await sql`ALTER TABLE run_events
    ADD CONSTRAINT run_events_run_id_fkey FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE`.execute(
    db,
  )
  await sql`ALTER TABLE proxy_requests
    ADD CONSTRAINT proxy_requests_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
    ADD CONSTRAINT proxy_requests_run_id_fkey FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE`.execute(
    db,
  )
}
