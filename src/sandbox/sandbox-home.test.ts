import { mkdir, readdir, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeTempDir } from '../../test/helpers/store-engines.js'
import { keptSandboxHome, prepareSandboxHome, pruneSandboxHomes } from './sandbox-home.js'

describe('sandbox homes kept per agent and workspace', () => {
  let root: string
  let dataDir: string

  beforeEach(async () => {
    root = await makeTempDir('hangar-sandbox-home-')
    dataDir = path.join(root, 'data')
  })
  afterEach(() => rm(root, { recursive: true, force: true }))

  it('gives the same home to the same agent in the same directory, another to anything else', async () => {
    const first = await keptSandboxHome(dataDir, 'claude-code', '/srv/a')
    expect(await keptSandboxHome(dataDir, 'claude-code', '/srv/a')).toBe(first)
    expect(await keptSandboxHome(dataDir, 'codex', '/srv/a')).not.toBe(first)
    expect(await keptSandboxHome(dataDir, 'claude-code', '/srv/b')).not.toBe(first)
    expect(path.dirname(first)).toBe(path.join(dataDir, 'sandbox-homes'))
  })

  it('removes the homes of directories that are gone, and only those', async () => {
    const kept = path.join(root, 'workspace-kept')
    const removed = path.join(root, 'workspace-removed')
    await mkdir(kept)
    await mkdir(removed)
    const homes = [
      await keptSandboxHome(dataDir, 'claude-code', kept),
      await keptSandboxHome(dataDir, 'claude-code', removed),
      await keptSandboxHome(dataDir, 'codex', removed),
    ]
    for (const home of homes)
      await prepareSandboxHome({ home, adapterId: 'claude-code', userHome: os.tmpdir(), useLogin: false })
    await writeFile(path.join(homes[1]!, 'session.jsonl'), '{}')
    // A home from before the record existed is nobody's to judge: left alone.
    await mkdir(path.join(dataDir, 'sandbox-homes', 'legacy0123456789abcdef01'))
    await rm(removed, { recursive: true })

    expect(await pruneSandboxHomes(dataDir)).toBe(2)
    expect((await readdir(path.join(dataDir, 'sandbox-homes'))).sort()).toEqual(
      [path.basename(homes[0]!), `${path.basename(homes[0]!)}.cwd`, 'legacy0123456789abcdef01'].sort(),
    )
    expect(await pruneSandboxHomes(dataDir)).toBe(0)
  })

  it('has nothing to prune before any sandboxed run', async () => {
    expect(await pruneSandboxHomes(dataDir)).toBe(0)
  })
})
