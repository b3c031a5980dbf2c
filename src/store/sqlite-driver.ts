// The one place that picks the SQLite driver module for the Node.js running us.
//
// better-sqlite3 12 subclasses the header-only `node::ObjectWrap`; built against Node 24.19+ headers its
// Statement and Database destructors abort the process (`Assertion failed: (env) != nullptr` in
// RemoveEnvironmentCleanupHook) when V8 collects them — every few queries in a daemon. better-sqlite3 13 is
// a Node-API rewrite without that flaw, but needs Node 22+ and crashes on Node 20. So both are dependencies:
// 12 as `better-sqlite3`, 13 as the optional `better-sqlite3-node-api` (npm skips it on Node 20, whose engine
// it does not accept), and Node 22+ loads 13 whenever it is installed. Same API, same file format.
import { createRequire } from 'node:module'
import type SqliteDatabase from 'better-sqlite3'
import { AppError } from '../core/errors.js'

export type SqliteConstructor = typeof SqliteDatabase

const NODE_API_DRIVER = 'better-sqlite3-node-api'
const LEGACY_DRIVER = 'better-sqlite3'

const require = createRequire(import.meta.url)

function nodeVersion(): [major: number, minor: number] {
  const [major, minor] = process.versions.node.split('.').map(Number)
  return [major ?? 0, minor ?? 0]
}

/** Nodes on which better-sqlite3 12, compiled by this Node's npm, aborts: see the top of this file. */
export function legacyDriverAborts([major, minor]: [number, number]): boolean {
  return major > 24 || (major === 24 && minor >= 19)
}

/** The driver's module id for this Node: resolvable by `require` (and by a worker thread, by its path). */
export function sqliteDriverPath(): string {
  const version = nodeVersion()
  if (version[0] >= 22) {
    try {
      return require.resolve(NODE_API_DRIVER)
    } catch {
      // Not installed: npm ran on an older Node than the one running us. Node 22 still runs the legacy driver.
      if (legacyDriverAborts(version))
        throw new AppError(
          'config_invalid',
          `Hangar's SQLite driver for Node ${process.versions.node} (${NODE_API_DRIVER}, better-sqlite3 13) is not installed: npm skipped it because it ran on an older Node`,
          { hint: 'install Hangar again with this Node (npm ci in a clone, npm install -g for a package)' },
        )
    }
  }
  return require.resolve(LEGACY_DRIVER)
}

let loaded: SqliteConstructor | undefined

/** The better-sqlite3 `Database` constructor for this Node. */
export function sqliteDriver(): SqliteConstructor {
  loaded ??= require(sqliteDriverPath()) as SqliteConstructor
  return loaded
}

/** Opens a SQLite database file (or `:memory:`) with this Node's driver. */
export function openSqliteFile(file: string, options?: SqliteDatabase.Options): SqliteDatabase.Database {
  const Driver = sqliteDriver()
  return new Driver(file, options)
}
