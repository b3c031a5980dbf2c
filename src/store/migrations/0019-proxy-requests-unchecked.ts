// The proxy's request log on PostgreSQL without its two foreign keys (issue 19). Each key is checked per
// inserted row by a trigger that runs a query and locks the parent row: together about a third of the
// server's CPU per proxied request (3.5 µs each of ~15 µs per row, measured on the batch insert), paid on
// the same cores as the daemon and its agents. The checks guard nothing the writer does not already:
// - user_id: a row is written only for an authenticated token's user, and users are never deleted;
// - run_id: the insert itself skips rows whose run is gone (proxy-requests-appender), and deleting runs
//   deletes their rows here, by a statement trigger — what ON DELETE CASCADE did, once per statement.
// SQLite keeps both keys: there a check is a b-tree probe inside the daemon, within the noise.
import { type Kysely, PostgresAdapter, sql } from 'kysely'

function onPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!onPostgres(db)) return
  await sql`ALTER TABLE proxy_requests
    DROP CONSTRAINT proxy_requests_user_id_fkey,
    DROP CONSTRAINT proxy_requests_run_id_fkey`.execute(db)
  // The search_path of the migration (the store's schema), so the trigger finds this store's table.
  await sql`CREATE FUNCTION hangar_delete_runs_proxy_requests() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN
      DELETE FROM proxy_requests WHERE run_id IN (SELECT id FROM deleted_runs);
      RETURN NULL;
    END $$`.execute(db)
  await sql`CREATE TRIGGER runs_delete_proxy_requests AFTER DELETE ON runs
    REFERENCING OLD TABLE AS deleted_runs FOR EACH STATEMENT
    EXECUTE FUNCTION hangar_delete_runs_proxy_requests()`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!onPostgres(db)) return
  await sql`DROP TRIGGER runs_delete_proxy_requests ON runs`.execute(db)
  await sql`DROP FUNCTION hangar_delete_runs_proxy_requests()`.execute(db)
  // Rows the keys would refuse (written while there were none) go first.
  await sql`DELETE FROM proxy_requests
    WHERE user_id NOT IN (SELECT id FROM users)
      OR (run_id IS NOT NULL AND run_id NOT IN (SELECT id FROM runs))`.execute(db)
  await sql`ALTER TABLE proxy_requests
    ADD CONSTRAINT proxy_requests_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
    ADD CONSTRAINT proxy_requests_run_id_fkey FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE`.execute(
    db,
  )
}
