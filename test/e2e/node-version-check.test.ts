// The CLI entry refuses an older Node.js before loading anything (src/bin/node-version.ts decides).
import { execFileSync, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { HANGAR_BIN } from '../helpers/hangar-cli.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

describe('hangar on an unsupported Node.js', () => {
  it('makes the built CLI exit 1 with the message on an older Node, before loading the CLI', () => {
    const bin = HANGAR_BIN
    // A stand-in for an old Node: the same binary, told its version is 18.20.4 before the entry runs.
    const pretend = `Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '18.20.4' } }); await import(${JSON.stringify(bin)})`
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', pretend, '--', '--version'], {
      encoding: 'utf8',
      timeout: 20_000,
    })
    expect(result.stderr).toBe(
      "hangar needs Node.js 20.19 or newer (this is v18.20.4); see README 'Install'\n",
    )
    expect(result.stdout).toBe('')
    expect(result.status).toBe(1)
    // The same entry on this Node runs the CLI.
    const version = execFileSync(process.execPath, [bin, '--version'], { encoding: 'utf8', timeout: 20_000 })
    expect(version.trim()).toContain(
      JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version,
    )
  })
})
