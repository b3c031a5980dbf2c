// The PostgreSQL driver, loaded when a store is opened on PostgreSQL: the default SQLite daemon never needs
// its thirty-odd modules (pg, its pool, protocol and type parsers), so its start-up does not load them.
import { createRequire } from 'node:module'
import type pg from 'pg'

const require = createRequire(import.meta.url)
let loaded: typeof pg | undefined

export function pgDriver(): typeof pg {
  loaded ??= require('pg') as typeof pg
  return loaded
}
