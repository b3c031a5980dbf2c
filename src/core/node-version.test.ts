import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { isOlderNode, MINIMUM_NODE_VERSION, unsupportedNodeMessage } from './node-version.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

describe('Node.js version check', () => {
  it('compares versions part by part, numerically', () => {
    expect(isOlderNode('20.18.3')).toBe(true)
    expect(isOlderNode('18.20.0')).toBe(true)
    expect(isOlderNode('v20.9.0')).toBe(true)
    expect(isOlderNode('20.19.0')).toBe(false)
    expect(isOlderNode('20.100.0')).toBe(false)
    expect(isOlderNode('22.0.0')).toBe(false)
    expect(isOlderNode('24.21.0-pre')).toBe(false)
    expect(isOlderNode('1.2.3', '1.2.4')).toBe(true)
  })

  it('names the running version, the minimum and where to read more', () => {
    expect(unsupportedNodeMessage('18.20.4')).toBe(
      "hangar needs Node.js 20.19 or newer (this is v18.20.4); see README 'Install'",
    )
    expect(unsupportedNodeMessage(process.versions.node)).toBeUndefined()
  })

  it('matches the "engines" field of package.json', () => {
    const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      engines: { node: string }
    }
    expect(manifest.engines.node).toBe(`>=${MINIMUM_NODE_VERSION}`)
  })
})
