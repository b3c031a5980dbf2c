// What the bench scripts share: the percentile they all report, and a throw-away PostgreSQL schema.
import pg from 'pg'

export const DATABASE_URL =
  process.env.HANGAR_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

/** A new schema on DATABASE_URL: `url` selects it, `drop()` removes it with everything in it. */
export async function freshSchema(prefix = 'hangar_bench') {
  const schema = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`
  const client = new pg.Client({ connectionString: DATABASE_URL })
  await client.connect()
  await client.query(`CREATE SCHEMA ${schema}`)
  await client.end()
  const url = new URL(DATABASE_URL)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return {
    url: url.toString(),
    async drop() {
      const admin = new pg.Client({ connectionString: DATABASE_URL })
      await admin.connect()
      await admin.query(`DROP SCHEMA ${schema} CASCADE`)
      await admin.end()
    },
  }
}
