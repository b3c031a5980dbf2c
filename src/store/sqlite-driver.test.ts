import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { legacyDriverAborts, openSqliteFile, sqliteDriverPath } from './sqlite-driver.js'

const major = Number(process.versions.node.split('.')[0])

describe('the SQLite driver for this Node', () => {
  // scripts/node-matrix.mjs runs this file on Node 22 and 24 with the optional driver installed.
  it(`is better-sqlite3 ${major >= 22 ? '13 (Node-API)' : '12'} on Node ${process.versions.node}`, () => {
    const driverPackage = sqliteDriverPath().split(`${path.sep}lib${path.sep}`)[0] ?? ''
    expect(path.basename(driverPackage)).toBe(major >= 22 ? 'better-sqlite3-node-api' : 'better-sqlite3')
    const db = openSqliteFile(':memory:')
    expect(db.prepare('select sqlite_version() as version').get()).toEqual({ version: expect.any(String) })
    db.close()
  })

  it('refuses better-sqlite3 12 only where it aborts (Node 24.19 and newer)', () => {
    expect(legacyDriverAborts([20, 19])).toBe(false)
    expect(legacyDriverAborts([22, 23])).toBe(false)
    expect(legacyDriverAborts([24, 18])).toBe(false)
    expect(legacyDriverAborts([24, 19])).toBe(true)
    expect(legacyDriverAborts([26, 0])).toBe(true)
  })
})
