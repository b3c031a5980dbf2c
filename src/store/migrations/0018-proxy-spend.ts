// What each profile spent through the proxy, per minute (issue 19). A budget's window was summed over
// every request in it, on every re-read: a statement that grows with the traffic (a profile at 100
// requests/s has 8.6 million rows in a day's window) and, on SQLite, holds the daemon's thread while it
// runs. Summed per minute it reads at most one row per minute of the window. The request log's inserts
// keep it, in the same transaction as their rows; here it is filled from the log as it stands.
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('proxy_spend')
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('profile', 'text', (column) => column.notNull())
    /** `YYYY-MM-DDTHH:MM` (UTC) of the requests' started_at. */
    .addColumn('minute', 'text', (column) => column.notNull())
    .addColumn('cost_usd', 'double precision', (column) => column.notNull())
    .addPrimaryKeyConstraint('proxy_spend_pk', ['user_id', 'profile', 'minute'])
    .execute()
  await sql`
    INSERT INTO proxy_spend (user_id, profile, minute, cost_usd)
    SELECT user_id, profile, substr(started_at, 1, 16), sum(cost_usd)
    FROM proxy_requests
    WHERE cost_usd IS NOT NULL
    GROUP BY user_id, profile, substr(started_at, 1, 16)
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('proxy_spend').execute()
}
